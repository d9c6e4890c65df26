/**
 * The re-drive of stuck refunds (src/refunds/redrive.ts): a `pending` row written by
 * POST /refund whose update never reached the workflow (Temporal or the gateway down) is run by
 * the workers' scan, once; a refund its workflow already has is not run again; forged Temporal
 * calls naming the row move nothing. The provider calls are counted at the activity (first
 * attempts), which goes on to the real sandbox bank.
 */
import { Context } from '@temporalio/activity';
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { createActivities } from '../../activities';
import type { ProviderRefundInput } from '../../activities/refunds';
import { createQueueWorkers, type QueueWorkers } from '../../src/app/worker';
import { refundsWorkflowId } from '../../src/refunds';
import { claimStuckRefunds, redriveStuckRefunds } from '../../src/refunds/redrive';
import { recordRefundRequest } from '../../src/refunds/repository';
import { paymentRecords } from '../../src/payments/repository';
import { sandboxProviders } from '../../src/simulators/providers';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { createTestStack, outsiderTemporalClient, testLogger, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paidQr, request, webhookWitness } from '../payments/support';

let stack: TestStack;
let workers: QueueWorkers;
let run: Promise<void>;
let raw: Client;
let owner: { key: string; id: string };
let witness: Awaited<ReturnType<typeof webhookWitness>>;
/** first attempts of the provider refund call, by refund id */
const providerCalls = new Map<string, number>();
/** while set, the provider call waits for it (a refund in progress) */
let gate: Promise<void> | undefined;

beforeAll(async () => {
  // its own database: other files leave old pending refunds (reconciliation's generated days)
  stack = await createTestStack({ worker: false, database: 'talat_test_redrive' });
  const real = createActivities({
    db: stack.db,
    config: stack.config,
    logger: testLogger,
    sandbox: sandboxProviders({ db: stack.db }),
  });
  installTemporalRuntime(testLogger, 'WARN');
  workers = await createQueueWorkers({
    address: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    namespace: 'default',
    paymentsQueue: stack.taskQueue,
    queues: ['payments', 'webhooks', 'background'],
    activities: {
      ...real,
      async requestProviderRefund(input: ProviderRefundInput) {
        if (Context.current().info.attempt === 1)
          providerCalls.set(input.refundId, (providerCalls.get(input.refundId) ?? 0) + 1);
        await gate;
        return real.requestProviderRefund(input);
      },
    },
    workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1 second',
    codecKeys: stack.config.temporal.codecKeys,
  });
  run = workers.run();
  raw = await outsiderTemporalClient();
  owner = await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] });
  witness = await webhookWitness(stack, owner);
});
afterAll(async () => {
  await witness.stop();
  await raw.connection.close();
  await workers.stop();
  await run;
  await stack.close();
});

const deps = () => ({
  db: stack.db,
  client: stack.client,
  config: stack.config,
  logger: testLogger,
  taskQueue: stack.taskQueue,
});
/** Only this file's rows older than an hour are taken (its own database). */
const AFTER_S = 3600;
const redrive = () => redriveStuckRefunds(deps(), { afterSeconds: AFTER_S });
/** As the gateway writes it before its update (that then never reaches Temporal), made two hours old. */
async function stuckRefund(orderId: string, paymentId: string, amountSatang?: number) {
  const r = await recordRefundRequest(stack.db, paymentRecords, {
    paymentId,
    orderId,
    apiKeyId: owner.id,
    amountSatang,
  });
  if (!r.ok) throw new Error(r.message);
  await stack
    .db('refunds')
    .where({ id: r.refund.refundId })
    .update({ created_at: stack.db.raw("now() - interval '2 hours'") });
  return r.refund.refundId;
}
const rowOf = (refundId: string) => stack.db('refunds').where({ id: refundId }).first();
const settled = (refundId: string) =>
  waitFor(async () => {
    const r = await rowOf(refundId);
    return r.status !== 'pending' && r;
  });

it('a refund written while Temporal was unreachable is run by the re-drive, once, with its webhook', async () => {
  const { orderId, paymentId } = await paidQr(stack, owner.key, 100, 'redrive');
  const refundId = await stuckRefund(orderId, paymentId, 4000);
  const fresh = await paidQr(stack, owner.key, 10, 'redrive');
  const recent = await recordRefundRequest(stack.db, paymentRecords, {
    paymentId: fresh.paymentId,
    orderId: fresh.orderId,
    apiKeyId: owner.id,
  });

  const first = await redrive();
  expect(first.accepted).toContain(refundId);
  expect(await settled(refundId)).toMatchObject({ status: 'succeeded', redrives: 1 });
  const p = await stack.db('payments').where({ id: paymentId }).first();
  expect(p).toMatchObject({ status: 'paid', refunded_satang: '4000' });
  await witness.received(orderId, 'partially_refunded');
  expect(providerCalls.get(refundId)).toBe(1);
  // settled: never sent again; a row younger than the grace period: not yet
  const second = await redrive();
  expect([...second.accepted, ...second.failed]).not.toContain(refundId);
  if (!recent.ok) throw new Error(recent.message);
  expect([...first.accepted, ...second.accepted]).not.toContain(recent.refund.refundId);
  expect(await rowOf(recent.refund.refundId)).toMatchObject({ status: 'pending', redrives: 0 });
  await stack.db('refunds').where({ id: recent.refund.refundId }).update({ status: 'failed' });
});

it('a refund its workflow already has (update accepted, provider call in progress) is not run twice', async () => {
  const { orderId, paymentId } = await paidQr(stack, owner.key, 50, 'redrive');
  let release!: () => void;
  gate = new Promise<void>((r) => (release = r));
  try {
    const answer = request(stack.app.callback())
      .post('/refund')
      .set('X-API-Key', owner.key)
      .send({ orderId, amount: 20 })
      .then((r) => r);
    const row = await waitFor(() => stack.db('refunds').where({ payment_id: paymentId }).first());
    await waitFor(async () => providerCalls.get(row.id) === 1);
    await stack
      .db('refunds')
      .where({ id: row.id })
      .update({ created_at: stack.db.raw("now() - interval '2 hours'") });
    // two workers' scans at once: each row is claimed by one of them
    const [a, b] = await Promise.all([redrive(), redrive()]);
    expect([...a.accepted, ...b.accepted].filter((id) => id === row.id)).toHaveLength(1);
    release();
    const res = await answer;
    expect(res.body.body).toMatchObject({ refundId: row.id, status: 'succeeded', payment: { refundedAmount: 20 } });
  } finally {
    release();
    gate = undefined;
  }
  const row = await stack.db('refunds').where({ payment_id: paymentId }).first();
  expect(providerCalls.get(row.id)).toBe(1);
  expect(await stack.db('payments').where({ id: paymentId }).first()).toMatchObject({ refunded_satang: '2000' });
});

it('two scans claim disjoint rows, at most `limit` each', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { orderId, paymentId } = await paidQr(stack, owner.key, 5, 'redrive');
    ids.push(await stuckRefund(orderId, paymentId));
  }
  const [a, b] = await Promise.all([claimStuckRefunds(stack.db, AFTER_S, 2), claimStuckRefunds(stack.db, AFTER_S, 2)]);
  expect(a.length).toBeLessThanOrEqual(2);
  expect(b.length).toBeLessThanOrEqual(2);
  const claimed = [...a, ...b].map((r) => r.refundId).filter((id) => ids.includes(id));
  expect(new Set(claimed).size).toBe(claimed.length);
  expect(claimed.sort()).toEqual([...ids].sort());
  // claimed within the period: the next scan leaves them alone
  expect((await claimStuckRefunds(stack.db, AFTER_S, 20)).filter((r) => ids.includes(r.refundId))).toEqual([]);
  await stack.db('refunds').whereIn('id', ids).update({ status: 'failed' });
});

it('forged Temporal calls naming a stuck refund move nothing; only the re-drive runs it', async () => {
  const { orderId, paymentId } = await paidQr(stack, owner.key, 30, 'redrive');
  const refundId = await stuckRefund(orderId, paymentId);
  // an outsider on port 7233: the row's id, no proof or a made-up one, on a workflow of its own
  for (const proof of [undefined, '0'.repeat(64)]) {
    const out = await raw.workflow
      .executeUpdateWithStart('refund', {
        args: [{ refundId, amountSatang: 3000, ...(proof ? { proof } : {}) }],
        updateId: uniq('forged'),
        startWorkflowOperation: new WithStartWorkflowOperation('orderRefundsWorkflow', {
          taskQueue: stack.taskQueue,
          workflowId: uniq('forged-refunds'),
          args: [{ orderId, idleSeconds: 5 }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      })
      .catch((e: Error) => ({ error: e.message }));
    expect(out).not.toMatchObject({ ok: true });
  }
  expect(await rowOf(refundId)).toMatchObject({ status: 'pending' });
  expect(providerCalls.get(refundId)).toBeUndefined();

  expect((await redrive()).accepted).toContain(refundId);
  expect(await settled(refundId)).toMatchObject({ status: 'succeeded', amount_satang: '3000' });
  expect(providerCalls.get(refundId)).toBe(1);
  expect(await stack.db('payments').where({ id: paymentId }).first()).toMatchObject({
    status: 'refunded',
    refunded_satang: '3000',
  });
});

it("a forged update that takes a stuck refund's id on its own workflow first does not block it", async () => {
  const { orderId, paymentId } = await paidQr(stack, owner.key, 20, 'redrive');
  const refundId = await stuckRefund(orderId, paymentId);
  // the outsider knows the id and sends first, under the id as update id, on refunds-<orderId>
  const forged = await raw.workflow
    .executeUpdateWithStart('refund', {
      args: [{ refundId }],
      updateId: refundId,
      startWorkflowOperation: new WithStartWorkflowOperation('orderRefundsWorkflow', {
        taskQueue: stack.taskQueue,
        workflowId: refundsWorkflowId(orderId),
        args: [{ orderId, idleSeconds: 600 }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    })
    .catch((e: Error) => ({ error: e.message }));
  expect(forged).not.toMatchObject({ ok: true });

  expect((await redrive()).accepted).toContain(refundId);
  expect(await settled(refundId)).toMatchObject({ status: 'succeeded', amount_satang: '2000' });
  expect(providerCalls.get(refundId)).toBe(1);
});
