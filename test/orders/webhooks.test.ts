/**
 * The order's own webhook events (order-webhooks-v1, docs/webhooks.md) over HTTP on the real
 * stack: card down, QR up with a paid top-up, QR up with an expired one. A registered receiver
 * gets each order.* event of its orders, in order, verified with the Standard Webhooks library;
 * another merchant's endpoint gets none; a raw Temporal start of a forged order event sends nothing.
 */
import { orderWorkflowOf, topUpWorkflowOf } from './support';
import { taskQueueOf } from '../../src/domain/temporal';
import { WebhookWorkflowType, type OrderEvent } from '../../src/webhooks';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paidQr, request } from '../payments/support';
import { registerEndpoint, startReceiver, verifiesWithStandardWebhooks, type Receiver } from '../webhooks/helpers';

let stack: TestStack;
let mine: Receiver;
let theirs: Receiver;
let key: { key: string; id: string };
let other: { key: string; id: string };
let secret: string;
let settledOnly: string;
const scopes = ['payments:write', 'payments:read', 'webhooks:manage'];
beforeAll(async () => {
  stack = await createTestStack({ env: { QR_EXPIRY_S: '8', ORDER_TOPUP_EXPIRED: 'settle' } });
  [mine, theirs] = await Promise.all([startReceiver(200), startReceiver(200)]);
  key = await newKey(stack.db, { scopes });
  other = await newKey(stack.db, { scopes });
  secret = (await registerEndpoint(stack, key.key, { url: `${mine.url}/all` })).secret;
  settledOnly = (await registerEndpoint(stack, key.key, { url: `${mine.url}/settled`, eventTypes: ['order.settled'] }))
    .secret;
  await registerEndpoint(stack, other.key, { url: `${theirs.url}/other` });
});
afterAll(async () => {
  await stack.close();
  await Promise.all([mine.stop(), theirs.stop()]);
});

const api = () => request(stack.app.callback());
const adjust = (orderId: string, lines: unknown[]) =>
  api().post(`/orders/${orderId}/adjustments`).set('X-API-Key', key.key).send({ lines });
const finalize = (orderId: string) => api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key.key).send();

interface Hook {
  path: string;
  event: string;
  type: string;
  data: Record<string, unknown>;
}
/** The order events of `orderId` that reached path `path` of the receiver, each signature checked. */
function orderHooks(r: Receiver, orderId: string, path = '/hooks/all', key = secret): Hook[] {
  return r.log
    .filter((h) => h.path === path && h.body.includes(`"orderId":"${orderId}"`))
    .map((h) => {
      expect(verifiesWithStandardWebhooks(h, key)).toBe(true);
      return { path: h.path, ...(JSON.parse(h.body) as Omit<Hook, 'path'>) };
    })
    .filter((h) => h.event === 'order.updated');
}
const untilTypes = (orderId: string, n: number) =>
  waitFor(
    async () => {
      const hooks = orderHooks(mine, orderId);
      return hooks.length >= n ? hooks : undefined;
    },
    30_000,
    `${n} order events of ${orderId}`,
  );

it('card down: adjusted twice, released, settled, each signed and in order; payment events unchanged', async () => {
  const orderId = uniq('ow');
  const res = await api()
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key.key)
    .send({ orderId, userId: 'u-1', amount: '100', token: 'tok_test_visa', capture: 'false' });
  expect(res.status).toBe(200);
  const paymentId = res.body.body.paymentId as string;
  await stack.client.workflow
    .getHandle(await orderWorkflowOf(stack.db, orderId))
    .signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'card' }));
  await waitFor(
    async () => (await api().get(`/orders/${orderId}`).set('X-API-Key', key.key)).body.body.status === 'open',
    20_000,
    'open',
  );
  await adjust(orderId, [{ description: 'Chicken 1.2 kg weighed 1.34 kg', amount: 12.6, reason: 'weight' }]);
  await adjust(orderId, [
    { description: 'Jasmine rice: out of stock', amount: -25.5, reason: 'out_of_stock' },
    { description: 'Milk: another brand', amount: -1.1, reason: 'substitution' },
  ]);
  expect((await finalize(orderId)).body.body).toMatchObject({ status: 'settled', capturedAmount: 86 });

  const hooks = await untilTypes(orderId, 4);
  expect(hooks.map((h) => h.type)).toEqual(['order.adjusted', 'order.adjusted', 'order.released', 'order.settled']);
  const base = { orderId, paymentId, mode: 'sandbox', timestamp: expect.any(String) };
  expect(hooks[0].data).toEqual({
    ...base,
    adjustmentId: expect.stringMatching(/^adj_/),
    amount: 12.6,
    lines: [{ description: 'Chicken 1.2 kg weighed 1.34 kg', amount: 12.6, reason: 'weight' }],
    estimateAmount: 100,
    runningTotal: 112.6,
  });
  expect(hooks[1].data).toMatchObject({ amount: -26.6, runningTotal: 86 });
  expect(hooks[2].data).toEqual({
    ...base,
    authorizedAmount: 110,
    capturedAmount: 86,
    releasedAmount: 24,
    voided: false,
  });
  expect(hooks[3].data).toEqual({
    ...base,
    status: 'settled',
    statusReason: expect.stringMatching(/captured 86 THB/),
    estimateAmount: 100,
    authorizedAmount: 110,
    capturedAmount: 86,
    paidAmount: 86,
    refundedAmount: 0,
    finalAmount: 86,
  });
  // the interface's events keep their body: payment.status.updated, authorized then paid
  const payment = await waitFor(async () => {
    const p = mine.log
      .filter((h) => h.path === '/hooks/all' && h.body.includes(orderId))
      .map((h) => JSON.parse(h.body))
      .filter((b) => b.event === 'payment.status.updated');
    return p.length >= 2 ? p : undefined;
  });
  expect(payment.map((b) => Object.keys(b))).toEqual([
    ['event', 'data', 'type'],
    ['event', 'data', 'type'],
  ]);
  expect(payment.map((b) => [b.type, b.data.status, b.data.amount]).sort()).toEqual([
    ['payment.authorized', 'authorized', 110],
    ['payment.paid', 'paid', 86],
  ]);
  // the endpoint subscribed to order.settled only
  const only = await waitFor(async () => {
    const h = orderHooks(mine, orderId, '/hooks/settled', settledOnly);
    return h.length ? h : undefined;
  });
  expect(only.map((h) => h.type)).toEqual(['order.settled']);
});

it('QR up with a paid top-up: adjusted, top-up pending (QR and checkout link), top-up paid, settled', async () => {
  const { orderId, paymentId } = await paidQr(stack, key.key, 100, 'owq');
  await adjust(orderId, [{ description: 'Durian instead of mango', amount: 20.5, reason: 'substitution' }]);
  const fin = await finalize(orderId);
  expect(fin.body.body.status).toBe('awaiting_topup');
  const [topUp] = fin.body.body.topUps;
  const pending = (await untilTypes(orderId, 2))[1];
  expect(pending).toMatchObject({ type: 'order.topup_pending' });
  expect(pending.data).toEqual({
    orderId,
    paymentId,
    mode: 'sandbox',
    timestamp: expect.any(String),
    topUp: {
      paymentId: topUp.paymentId,
      orderId: `${orderId}.topup`,
      amount: 20.5,
      qrPayload: topUp.qrPayload,
      expiresAt: topUp.expiresAt,
      checkoutUrl: topUp.checkoutUrl,
    },
  });
  expect(topUp.checkoutUrl).toMatch(/^http/);
  const handle = stack.client.workflow.getHandle(await topUpWorkflowOf(stack.db, orderId));
  await waitFor(async () => !!(await handle.describe().catch(() => undefined)), 20_000, 'top-up started');
  await handle.signal(
    'paymentResult',
    provenResult(stack.config, topUp.paymentId, { status: 'success', provider: 'qr' }),
  );
  const hooks = await untilTypes(orderId, 4);
  expect(hooks.map((h) => h.type)).toEqual([
    'order.adjusted',
    'order.topup_pending',
    'order.topup_paid',
    'order.settled',
  ]);
  expect(hooks[2].data.topUp).toEqual({
    paymentId: topUp.paymentId,
    orderId: `${orderId}.topup`,
    amount: 20.5,
    status: 'paid',
  });
  expect(hooks[3].data).toMatchObject({ status: 'settled', paidAmount: 120.5, finalAmount: 120.5 });
});

it('QR up with an expired top-up: top-up expired, then settled at what was paid', async () => {
  const { orderId } = await paidQr(stack, key.key, 100, 'owx');
  await adjust(orderId, [{ description: 'Bigger watermelon', amount: 5, reason: 'weight' }]);
  expect((await finalize(orderId)).body.body.status).toBe('awaiting_topup');
  const hooks = await untilTypes(orderId, 4);
  expect(hooks.map((h) => h.type)).toEqual([
    'order.adjusted',
    'order.topup_pending',
    'order.topup_expired',
    'order.settled',
  ]);
  expect(hooks[2].data.topUp).toMatchObject({ amount: 5, status: 'expired' });
  expect(hooks[3].data).toMatchObject({ status: 'settled', paidAmount: 100, finalAmount: 100 });
});

it("another merchant's endpoint got none of these orders' events", async () => {
  expect(theirs.log).toEqual([]);
});

it('a raw Temporal start of a forged order event sends nothing', async () => {
  const { orderId, paymentId } = await paidQr(stack, key.key, 50, 'owf');
  await adjust(orderId, [{ description: 'x', amount: -1, reason: 'other' }]);
  const forged = (over: Partial<OrderEvent>): OrderEvent => ({
    kind: 'order',
    type: 'order.settled',
    orderId,
    paymentId,
    timestamp: new Date().toISOString(),
    mode: 'sandbox',
    apiKeyId: key.id,
    ...over,
  });
  const start = (e: OrderEvent) =>
    stack.client.workflow.execute(WebhookWorkflowType.webhookDelivery, {
      taskQueue: taskQueueOf('webhooks', stack.taskQueue),
      workflowId: `forged-${uniq('w')}`,
      args: [e],
    });
  // not settled yet; the adjustment under another key; a made-up adjustment id
  expect(await start(forged({}))).toEqual([]);
  expect(await start(forged({ type: 'order.adjusted', ref: 'adj_made_up' }))).toEqual([]);
  const adj = (await stack.db('order_adjustments').where({ order_id: orderId }).first()).id as string;
  expect(await start(forged({ type: 'order.adjusted', ref: adj, apiKeyId: other.id }))).toEqual([]);
  expect(await stack.db('webhook_deliveries').where({ order_id: orderId, event_status: 'order.settled' })).toEqual([]);
  expect(theirs.log).toEqual([]);
});
