/**
 * Bulkheads (README "Roles"): webhook retries run on the webhooks task queue, not the payments
 * queue. With only the payments queue polled, a QR payment still settles; its webhook's retry
 * workflow waits on the webhooks queue until a webhooks worker polls it, then delivers. A first
 * attempt the settle step may not make (WEBHOOK_INLINE_PER_ENDPOINT=0 here, as for an endpoint
 * that is failing or busy) is made by that retry workflow too; and the settle step's breaker
 * defers the first attempt to an endpoint that just failed.
 */
import request from 'supertest';
import { paymentWorkflowIdOf } from '../../src/payments';
import { taskQueueOf } from '../../src/domain/temporal';
import { webhookDeliveryWorkflowId, WebhookWorkflowType } from '../../src/webhooks';
import { createActivities } from '../../activities';
import { sandboxProviders } from '../../src/simulators/providers';
import { createQueueWorkers, type QueueWorkers } from '../../src/app/worker';
import { createTestStack, provenResult, testConfig, testLogger, uniq, waitFor, type TestStack } from '../support/stack';
import { apiKey, paidQrEvent, registerEndpoint, startReceiver, type Receiver } from './helpers';
import { resultAware } from '../payments/support';

let stack: TestStack;
let receiver: Receiver;
let webhookWorkers: QueueWorkers | undefined;
beforeAll(async () => {
  stack = await createTestStack({ queues: ['payments'], env: { WEBHOOK_INLINE_PER_ENDPOINT: '0' } });
  receiver = await startReceiver(200);
});
afterAll(async () => {
  await webhookWorkers?.stop();
  await stack.close();
  await receiver.stop();
});

it('names the queues after the payments queue', () => {
  expect(taskQueueOf('payments', 'talat-payments')).toBe('talat-payments');
  expect(taskQueueOf('webhooks', 'talat-payments')).toBe('talat-webhooks');
  expect(taskQueueOf('background', 'talat-payments')).toBe('talat-background');
  expect(taskQueueOf('webhooks', 'shop')).toBe('shop-webhooks');
});

it('a payment settles with only the payments worker; its webhook waits on the webhooks queue for the webhooks worker', async () => {
  const key = await apiKey(stack);
  await registerEndpoint(stack, key.key, { url: receiver.url });
  const orderId = uniq('blk');
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u-1', amount: 12.5, customerId: 'c-1' });
  expect(res.status).toBe(200);
  const paymentId = res.body.body.paymentId as string;

  const payment = resultAware(stack, stack.client.workflow.getHandle(paymentWorkflowIdOf(paymentId)));
  await payment.signal(
    'paymentResult',
    provenResult(stack.config, paymentId, { status: 'success', provider: 'qr', reference: 'txn-blk' }),
  );
  await expect(payment.result()).resolves.toMatchObject({ status: 'paid' });
  expect((await stack.db('payments').where({ id: paymentId }).first('status')).status).toBe('paid');

  // the webhook's workflow runs on the webhooks queue, which nobody polls yet: nothing was sent
  const retry = stack.client.workflow.getHandle(webhookDeliveryWorkflowId(paymentId, 'paid'));
  const described = await waitFor(() => retry.describe().catch(() => undefined), 10_000, 'retry workflow');
  expect(described.type).toBe(WebhookWorkflowType.webhookRetry);
  expect(described.taskQueue).toBe(taskQueueOf('webhooks', stack.taskQueue));
  expect(described.status.name).toBe('RUNNING');
  await new Promise((r) => setTimeout(r, 1000));
  expect(receiver.log.filter((r) => r.body.includes(orderId))).toHaveLength(0);

  // a webhooks worker (as `WORKER_QUEUES=webhooks npm run worker` would run) delivers it: the first attempt
  webhookWorkers = await createQueueWorkers({
    address: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    namespace: 'default',
    paymentsQueue: stack.taskQueue,
    queues: ['webhooks'],
    activities: stack.activities,
    workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
    shutdownGraceTime: '1 second',
    codecKeys: stack.config.temporal.codecKeys,
  });
  void webhookWorkers.run().catch(() => undefined);
  await expect(retry.result()).resolves.toEqual([expect.objectContaining({ state: 'delivered', attempts: 1 })]);
  expect(receiver.log.filter((r) => r.body.includes(orderId))).toHaveLength(1);
  const attempts = await stack
    .db('webhook_attempts as a')
    .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.payment_id', paymentId)
    .select('a.attempt');
  expect(attempts).toEqual([{ attempt: 1 }]);
});

it("the settle step's first attempts: an endpoint that just failed gets none inline (deferred to the retry workflow)", async () => {
  const down = await startReceiver(500);
  try {
    const key = await apiKey(stack);
    await registerEndpoint(stack, key.key, { url: down.url });
    // the activities with the default bulkhead (WEBHOOK_INLINE_PER_ENDPOINT 32), called directly
    const activities = createActivities({
      db: stack.db,
      config: testConfig(),
      logger: testLogger,
      sandbox: sandboxProviders({ db: stack.db }),
    });
    const event = () => paidQrEvent(stack, key);
    const first = await activities.firstWebhookAttempts(await event());
    expect(first.retry).toHaveLength(1);
    expect(first.deferred).toEqual([]);
    expect(down.log).toHaveLength(1);

    const second = await activities.firstWebhookAttempts(await event());
    expect(second.retry).toEqual([]);
    expect(second.deferred).toHaveLength(1);
    expect(down.log).toHaveLength(1); // no POST from the settle step to an endpoint that just failed
  } finally {
    await down.stop();
  }
});
