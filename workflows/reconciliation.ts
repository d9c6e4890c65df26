/**
 * reconcileSettlementWorkflow: one provider's settlement day (docs/reconciliation.md), started by
 * the provider's Temporal Schedule (the day before the scheduled time, Bangkok) or by the
 * operator for a given day. Waits for the file (polling, up to fileWaitSeconds), reconciles it in
 * one activity that reads the file and writes the rows, then tells the operator. The history
 * holds counts only, never settlement lines, whatever the file's size.
 */
import { ActivityFailure, log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ADMIN_MAIL, DB_ACTIVITY } from './activity-options';
import {
  addDays,
  bangkokDayOf,
  reconciliationRunId,
  type ReconciliationInput,
  type ReconciliationResult,
  type ReconciliationWorkflow,
} from '../src/reconciliation';

const { settlementFileArrived } = proxyActivities<Activities>(DB_ACTIVITY);
/** Thousands of lines in one transaction: a long start-to-close, heartbeats to notice a lost worker. */
const { reconcileSettlementDay } = proxyActivities<Activities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
const { reportReconciliation } = proxyActivities<Activities>(ADMIN_MAIL);

/** The day to reconcile: the input's, else the Bangkok day before the schedule's (or this start's) time. */
function dayOf(input: ReconciliationInput): string {
  if (input.date) return input.date;
  const info = workflowInfo();
  const scheduled = info.searchAttributes?.TemporalScheduledStartTime?.[0];
  return addDays(bangkokDayOf(scheduled ? new Date(scheduled as string) : info.startTime), -1);
}

export async function reconcileSettlementWorkflow(input: ReconciliationInput): Promise<ReconciliationResult> {
  const date = dayOf(input);
  const d = { provider: input.provider, mode: input.mode, date, workflowId: workflowInfo().workflowId };
  const deadline = Date.now() + input.fileWaitSeconds * 1000;
  // at most about 200 looks, whatever the settings: the history stays small
  const pollMs = Math.max(input.filePollSeconds, input.fileWaitSeconds / 200) * 1000;
  let result: ReconciliationResult | undefined;
  for (;;) {
    const gaveUp = Date.now() >= deadline;
    if (await settlementFileArrived({ ...d, gaveUp })) break;
    if (gaveUp) {
      result = {
        status: 'file_missing',
        runId: reconciliationRunId(d.provider, d.mode, date),
        date,
        error: 'no settlement file',
      };
      break;
    }
    await sleep(Math.min(pollMs, Math.max(1000, deadline - Date.now())));
  }
  result ??= await reconcileSettlementDay(d);
  try {
    await reportReconciliation(result.runId);
  } catch (e) {
    if (!(e instanceof ActivityFailure)) throw e;
    log.error('the reconciliation e-mails could not be sent', { runId: result.runId, error: e.cause?.message });
  }
  return result;
}

// compile-time: the signature the schedules and the operator API start it with
void (reconcileSettlementWorkflow satisfies ReconciliationWorkflow);
