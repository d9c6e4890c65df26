/**
 * The payment workflows are versioned by type (workflows/patches.ts): the gateway starts the v2
 * types; a v1 execution begun before the upgrade keeps running on the same worker and is found,
 * not replaced, by the gateway's start (USE_EXISTING on the workflow id, whatever its type).
 */
import { WorkflowIdReusePolicy } from '@temporalio/client';
import { paymentWorkflowIdOf, PaymentWorkflowType, type PaymentOutcome, type QrPaymentInput } from '../../src/payments';
import { workflowInput } from '../callbacks/helpers';
import { createTestStack, provenResult, uniq, type TestStack } from '../support/stack';
import { newKey, request, rowOf } from './support';
import { paymentHandle } from './support';

let stack: TestStack;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
});
afterAll(() => stack.close());

const create = (body: Record<string, unknown>) =>
  request(stack.app.callback()).post('/qrpayment').set('X-API-Key', key).send(body);

it('a v1 QR payment in flight: the gateway finds it (same run, v1 type), and it settles paid on the upgraded worker', async () => {
  const orderId = uniq('v1');
  const body = { orderId, userId: 'u-v1', amount: 12.5, customerId: 'c-v1' };
  const first = await create(body);
  expect(first.status).toBe(200);
  const workflowId = paymentWorkflowIdOf(first.body.body.paymentId as string);
  const input = await workflowInput<QrPaymentInput>(stack, workflowId);
  // the same payment as a v1 execution would have begun it before the upgrade
  await stack.client.workflow.getHandle(workflowId).terminate('replaced by a v1 execution for the test');
  const v1 = await stack.client.workflow.start(PaymentWorkflowType.qrV1, {
    taskQueue: stack.taskQueue,
    workflowId,
    args: [input],
    // the memo the gateway gave its starts before the owner proof (issue 38): the payment's id
    memo: { paymentId: input.paymentId, orderId },
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });

  // the same order again: the gateway answers from the row, and its start finds the v1 run
  const again = await create(body);
  expect(again.status).toBe(200);
  expect(again.body.body).toEqual(first.body.body);
  const running = await stack.client.workflow.getHandle(workflowId).describe();
  expect({ type: running.type, runId: running.runId, status: running.status.name }).toEqual({
    type: PaymentWorkflowType.qrV1,
    runId: v1.firstExecutionRunId,
    status: 'RUNNING',
  });

  // the provider's result settles the v1 run
  await stack.client.workflow
    .getHandle(workflowId)
    .signal(
      'paymentResult',
      provenResult(stack.config, first.body.body.paymentId, { status: 'success', provider: 'qr', reference: 'txn-v1' }),
    );
  const outcome = (await stack.client.workflow
    .getHandle(workflowId, v1.firstExecutionRunId)
    .result()) as PaymentOutcome;
  expect(outcome.status).toBe('paid');
  expect((await rowOf(stack.db, orderId)).status).toBe('paid');
  // a v1 execution begun after the lean patch asked for it: its marker is in its history
  const history = await stack.client.workflow.getHandle(workflowId, v1.firstExecutionRunId).fetchHistory();
  expect(history.events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toHaveLength(1);
});

it('a new QR payment runs the v3 type (v2 with a delayed start), with no patch marker and no TemporalChangeVersion upsert', async () => {
  const orderId = uniq('v2');
  const res = await create({ orderId, userId: 'u-v2', amount: 3, customerId: 'c-v2' });
  expect(res.status).toBe(200);
  const handle = await paymentHandle(stack, orderId);
  expect((await handle.describe()).type).toBe(PaymentWorkflowType.qrDelayed);
  await handle.signal(
    'paymentResult',
    provenResult(stack.config, res.body.body.paymentId, { status: 'success', provider: 'qr', reference: 'txn-v2' }),
  );
  expect(((await handle.result()) as PaymentOutcome).status).toBe('paid');
  const events = (await handle.fetchHistory()).events!;
  expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toHaveLength(0);
  const upserted = events.flatMap((e) =>
    Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
  );
  expect(upserted).toEqual(['PaymentStatus']);
});
