/**
 * One Temporal Schedule per settlement provider (id reconciliation-<provider>-<mode>), created at
 * start-up by `npm start` and the worker role: created when missing, its spec and action brought
 * up to the configuration when present (its paused state and note kept), so any number of
 * processes may call it. Runs of a provider never overlap (BUFFER_ALL), and runs missed while
 * Temporal or the workers were down are made up for within a week (the catch-up window).
 */
import {
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptions,
  type ScheduleUpdateOptions,
} from '@temporalio/client';
import type { Config } from '../config';
import type { Logger } from '../logger';
import { taskQueueOf } from '../domain/temporal';
import {
  RECONCILIATION_WORKFLOW,
  reconciliationScheduleId,
  SETTLEMENT_PROVIDERS,
  type ReconciliationInput,
  type SettlementProvider,
} from './index';

export const SCHEDULE_TIMEZONE = 'Asia/Bangkok';

function scheduleOf(config: Config, paymentsQueue: string, provider: SettlementProvider) {
  const { mode, cron, fileWaitSeconds, filePollSeconds } = config.reconciliation;
  const input: ReconciliationInput = { provider, mode, fileWaitSeconds, filePollSeconds };
  return {
    spec: { cronExpressions: [cron], timezone: SCHEDULE_TIMEZONE },
    action: {
      type: 'startWorkflow' as const,
      workflowType: RECONCILIATION_WORKFLOW,
      workflowId: `reconciliation-${provider}-${mode}`,
      taskQueue: taskQueueOf('background', paymentsQueue),
      args: [input],
    },
    policies: { overlap: ScheduleOverlapPolicy.BUFFER_ALL, catchupWindow: '7 days' },
  };
}

/** Create or update every provider's schedule; returns their ids. */
export async function ensureReconciliationSchedules(
  client: Client,
  config: Config,
  paymentsQueue: string,
): Promise<string[]> {
  const ids: string[] = [];
  for (const provider of SETTLEMENT_PROVIDERS) {
    const scheduleId = reconciliationScheduleId(provider, config.reconciliation.mode);
    const s = scheduleOf(config, paymentsQueue, provider);
    try {
      await client.schedule.create({
        scheduleId,
        ...s,
        state: { note: 'created by Talat at start-up' },
      } as ScheduleOptions);
    } catch (e) {
      if (!(e instanceof ScheduleAlreadyRunning)) throw e;
      await client.schedule
        .getHandle(scheduleId)
        .update((prev) => ({ ...prev, spec: s.spec, action: s.action, policies: s.policies }) as ScheduleUpdateOptions);
    }
    ids.push(scheduleId);
  }
  return ids;
}

/** At start-up: the schedules, or a warning (payments do not wait for reconciliation). */
export async function startReconciliationSchedules(client: Client, config: Config, logger: Logger): Promise<void> {
  try {
    const ids = await ensureReconciliationSchedules(client, config, config.temporal.taskQueue);
    logger.info({ schedules: ids, cron: config.reconciliation.cron }, 'reconciliation schedules ready');
  } catch (e) {
    logger.warn({ err: e }, 'the reconciliation schedules could not be created or updated');
  }
}
