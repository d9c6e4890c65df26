/**
 * Reconciliation in the worker role (a real child process): its start-up creates one schedule per
 * provider (again: updated, the operator's pause kept), the operator pauses, unpauses and
 * triggers them through the API, missed runs reconcile the days they were for; and a worker killed (SIGKILL) in the middle of a run of
 * thousands of lines: the run is retried on the next worker and every line is classified
 * exactly once.
 */
import { randomUUID } from 'node:crypto';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import {
  RECONCILIATION_WORKFLOW,
  reconciliationRunId,
  reconciliationScheduleId,
  SETTLEMENT_PROVIDERS,
  settlementKey,
  type ReconciliationResult,
} from '../../src/reconciliation';
import { taskQueueOf } from '../../src/domain/temporal';
import { createSettlementStore } from '../../src/reconciliation/files';
import { ensureReconciliationSchedules } from '../../src/reconciliation/schedules';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { roleEnv, startRole, type RoleProcess } from '../support/roles';
import { createTestStack, testConfig, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paymentError, request } from '../payments/support';
import { generateDay, settlementEnv } from './generate';

let stack: TestStack;
let smtp: SmtpSink;
let env: Record<string, string>;
const roles: RoleProcess[] = [];
const tag = randomUUID().slice(0, 6);

beforeAll(async () => {
  smtp = await startSmtpSink();
  const s3 = {
    ...settlementEnv(smtp.url),
    // live: the schedules of this file are its own (other role tests create the sandbox ones)
    RECONCILIATION_MODE: 'live',
    RECONCILIATION_FILE_WAIT_S: '0',
  };
  stack = await createTestStack({ worker: false, env: s3 });
  env = roleEnv(stack.taskQueue, { ...s3, WORKER_QUEUES: 'background' });
}, 120_000);
afterAll(async () => {
  for (const r of roles) await r.stop(5000);
  for (const p of SETTLEMENT_PROVIDERS)
    await stack.client.schedule
      .getHandle(reconciliationScheduleId(p, 'live'))
      .delete()
      .catch(() => undefined);
  await stack.close();
  await smtp.stop();
});

const api = () => request(stack.app.callback());
const startWorker = async () => {
  const r = await startRole('worker', env);
  roles.push(r);
  return r;
};

describe('the schedules', () => {
  it('the worker role creates one per provider; the operator pauses, unpauses and triggers them', async () => {
    await startWorker();
    const key = (await newKey(stack.db, { scopes: ['reconciliation:read', 'reconciliation:manage'], mode: 'live' }))
      .key;
    for (const p of SETTLEMENT_PROVIDERS) {
      const d = await stack.client.schedule.getHandle(reconciliationScheduleId(p, 'live')).describe();
      expect(d.action).toMatchObject({
        workflowType: RECONCILIATION_WORKFLOW,
        taskQueue: taskQueueOf('background', stack.taskQueue),
      });
      expect(d.spec.timezone).toBe('Asia/Bangkok');
      expect(d.policies.overlap).toBe('BUFFER_ALL');
    }
    const url = '/reconciliation/card/schedule';
    const paused = await api().post(`${url}/pause`).set('X-API-Key', key).send({ note: 'provider outage' });
    expect(paused.status).toBe(200);
    expect(paused.body.body).toMatchObject({ paused: true, note: expect.stringMatching(/provider outage/) });
    // created again at the next start-up: brought up to date, still paused
    await ensureReconciliationSchedules(stack.client, testConfig(env), stack.taskQueue);
    expect((await api().get(url).set('X-API-Key', key)).body.body.paused).toBe(true);
    expect((await api().post(`${url}/unpause`).set('X-API-Key', key).send({})).body.body.paused).toBe(false);

    const triggered = await api().post(`${url}/trigger`).set('X-API-Key', key).send({});
    expect(triggered.status).toBe(202);
    // the triggered run reconciles yesterday (Bangkok); no file, no wait: file_missing
    const run = await waitFor(
      async () =>
        (await stack
          .db('reconciliation_runs')
          .where({ provider: 'card', mode: 'live', status: 'file_missing' })
          .first()) ?? false,
      60_000,
      'the triggered run',
    );
    expect(run.workflow_id).toMatch(/^reconciliation-card-live-/);
    // missed runs (what the catch-up makes up for after downtime), each for the day before its own time
    await stack.client.schedule.getHandle(reconciliationScheduleId('bank', 'live')).backfill({
      start: new Date('2025-07-10T22:30:00Z'),
      end: new Date('2025-07-12T23:30:00Z'),
      overlap: ScheduleOverlapPolicy.BUFFER_ALL,
    });
    const days = await waitFor(
      async () => {
        const rows = await stack
          .db('reconciliation_runs')
          .where({ provider: 'bank', mode: 'live', status: 'file_missing' })
          .where('settlement_date', '>=', '2025-07-01')
          .where('settlement_date', '<', '2025-08-01')
          .orderBy('settlement_date')
          .select(stack.db.raw("to_char(settlement_date, 'YYYY-MM-DD') AS day"));
        return rows.length === 3 && rows.map((r: { day: string }) => r.day);
      },
      60_000,
      'the backfilled runs',
    );
    expect(days).toEqual(['2025-07-10', '2025-07-11', '2025-07-12']);
    expect((await api().post(`${url}/explode`).set('X-API-Key', key).send({})).body).toEqual(
      paymentError('INVALID_INPUT'),
    );
  }, 180_000);
});

describe('a worker killed in the middle of a run', () => {
  it('the next worker runs it again: every line classified exactly once', async () => {
    const date = '2025-04-02';
    const day = await generateDay(stack.db, 'card', date, 15_000, `${tag}kill`);
    await createSettlementStore(stack.config).put(settlementKey('card', date), day.text);
    const first = roles[0] ?? (await startWorker());
    const handle = await stack.client.workflow.start(RECONCILIATION_WORKFLOW, {
      taskQueue: taskQueueOf('background', stack.taskQueue),
      workflowId: uniq('recon-kill'),
      args: [{ provider: 'card', mode: 'sandbox', date, fileWaitSeconds: 0, filePollSeconds: 1 }],
    });
    // the run holds the provider's advisory lock while it writes: kill the worker then
    await waitFor(
      async () =>
        (
          await stack.db.raw(
            `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                AND objid::text::bigint = (hashtext(?)::bigint & 4294967295)`,
            ['talat:reconciliation:card'],
          )
        ).rows.length > 0,
      60_000,
      'the run writing',
    );
    first.child.kill('SIGKILL');
    await first.stop(1000);
    const runId = reconciliationRunId('card', 'sandbox', date);
    expect(await stack.db('reconciliation_lines').where({ run_id: runId }).count<{ n: string }[]>('id as n')).toEqual([
      { n: '0' },
    ]);
    await startWorker();
    const r = (await handle.result()) as ReconciliationResult;
    expect(r).toMatchObject({ status: 'completed', byOutcome: day.counts });
    const attempts = (await handle.fetchHistory()).events!.filter((e) => e.activityTaskStartedEventAttributes);
    expect(attempts.some((e) => (e.activityTaskStartedEventAttributes!.attempt ?? 1) > 1)).toBe(true);
    const dup = await stack.db.raw(
      'SELECT line_no FROM reconciliation_lines WHERE run_id = ? AND line_no IS NOT NULL GROUP BY line_no HAVING count(*) > 1',
      [runId],
    );
    expect(dup.rows).toEqual([]);
    const lines = await stack
      .db('reconciliation_lines')
      .where({ run_id: runId })
      .whereNotNull('line_no')
      .select('line_no', 'outcome');
    expect(lines).toHaveLength(day.lines.size);
    expect(
      lines.every((l: { line_no: number; outcome: string }) => day.lines.get(l.line_no)?.outcome === l.outcome),
    ).toBe(true);
  }, 240_000);
});
