/**
 * Orders are scoped like payments (docs/concepts.md): one order id used by two sandbox merchants
 * and by one merchant's sandbox and live key, end to end over HTTP on the real stack: card orders
 * (capture=false) authorised, adjusted and captured; QR orders finalised above (a top-up paid by
 * its callback) and below (the difference refunded). Each merchant's webhooks carry only its own
 * order, GET /orders answers each its own, another merchant's key gets 404; a workflow started
 * under the guessable order-<orderId> acts on no order. Also migration
 * 20261128093900_orders_scoped on a database with rows.
 */
import { migrationSource, type Db } from '../../src/db/knex';
import { orderWorkflowIdOf } from '../../src/orders';
import { paymentWorkflowIdOf } from '../../src/payments';
import { fieldSigned, post } from '../callbacks/helpers';
import { startFakeBank, type FakeBank } from '../payments/fake-bank';
import { newKey, request, resultAware } from '../payments/support';
import { freshDatabase, migrateDownThrough } from '../support/migrations';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { registerEndpoint, startReceiver, type Receiver } from '../webhooks/helpers';

type Key = { key: string; id: string };
let stack: TestStack;
let provider: FakeBank; // the live card provider
let merchantA: Key; // sandbox
let liveA: Key; // merchant A's live key (one account with merchantA)
let merchantB: Key; // sandbox
let outsider: Key; // sandbox, no order
const hooks = new Map<string, Receiver>();
const scopes = ['payments:write', 'payments:read', 'webhooks:manage'];

beforeAll(async () => {
  provider = await startFakeBank();
  provider.fallback = { status: 200, body: { object: 'charge', id: 'chrg_live_scope', status: 'pending' } };
  stack = await createTestStack({ env: { CARD_PROVIDER_URL: provider.url, CARD_PROVIDER_KEY: 'sk_live_scope' } });
  merchantA = await newKey(stack.db, { scopes });
  liveA = await newKey(stack.db, { scopes, mode: 'live' });
  await stack.db('api_keys').where({ id: liveA.id }).update({ account_id: merchantA.id });
  merchantB = await newKey(stack.db, { scopes });
  outsider = await newKey(stack.db, { scopes });
  for (const k of [merchantA, liveA, merchantB]) {
    const r = await startReceiver(200);
    await registerEndpoint(stack, k.key, { url: `${r.url}/${k.id}` });
    hooks.set(k.id, r);
  }
});
afterAll(async () => {
  await stack?.close();
  await provider?.close();
  for (const r of hooks.values()) await r.stop();
});

const api = () => request(stack.app.callback());
const getOrder = (k: Key, orderId: string) => api().get(`/orders/${orderId}`).set('X-API-Key', k.key);
const adjust = (k: Key, orderId: string, lines: unknown[]) =>
  api().post(`/orders/${orderId}/adjustments`).set('X-API-Key', k.key).send({ lines });
const finalize = (k: Key, orderId: string) => api().post(`/orders/${orderId}/finalize`).set('X-API-Key', k.key);

/** The order.* events of `orderId` that reached `k`'s endpoint: [type, paymentId, mode]. */
const orderEventsAt = (k: Key, orderId: string) =>
  hooks
    .get(k.id)!
    .log.map((h) => JSON.parse(h.body) as { event: string; type: string; data: Record<string, unknown> })
    .filter((e) => e.event === 'order.updated' && e.data.orderId === orderId)
    .map((e) => [e.type, e.data.paymentId, e.data.mode]);
const untilEvent = (k: Key, orderId: string, type: string) =>
  waitFor(
    async () => {
      const events = orderEventsAt(k, orderId);
      return events.some(([t]) => t === type) ? events : undefined;
    },
    30_000,
    `${type} of ${orderId} at ${k.id}`,
  );

/** 404 for `k` on each order route of `orderId` (it has no order of that id in its account and mode). */
async function noOrderFor(k: Key, orderId: string) {
  const line = [{ description: 'x', amount: 1, reason: 'weight' }];
  for (const res of [await getOrder(k, orderId), await adjust(k, orderId, line), await finalize(k, orderId)]) {
    expect(res.status).toBe(404);
    expect(res.body.body.code).toBe('NOT_FOUND');
  }
}

it('one card order id in three scopes (two merchants, sandbox and live): each authorised, adjusted, captured alone', async () => {
  const orderId = uniq('ORD-2001');
  const owners = [merchantA, liveA, merchantB];
  const picked = new Map([
    [merchantA.id, -10],
    [liveA.id, -20],
    [merchantB.id, -30],
  ]);
  const paymentIds = new Map<string, string>();
  for (const k of owners) {
    const res = await api()
      .post('/cardpayment')
      .type('form')
      .set('X-API-Key', k.key)
      .send({ orderId, userId: 'u-1', amount: '100', token: 'tok_test_visa', capture: 'false' });
    expect(res.status).toBe(200);
    expect(res.body.body).toMatchObject({ orderId, amount: 110 });
    paymentIds.set(k.id, res.body.body.paymentId);
  }
  expect(new Set(paymentIds.values()).size).toBe(3);
  const rows = await stack.db('orders').where({ order_id: orderId });
  expect(rows).toHaveLength(3);
  for (const r of rows) {
    expect(r.payment_id).toBe(paymentIds.get(r.api_key_id));
    expect(r.workflow_id).toBe(orderWorkflowIdOf(r.payment_id));
  }
  expect(rows.find((r) => r.api_key_id === liveA.id)).toMatchObject({ mode: 'live', account_id: merchantA.id });

  for (const k of owners) {
    const paymentId = paymentIds.get(k.id)!;
    await stack.client.workflow
      .getHandle(orderWorkflowIdOf(paymentId))
      .signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'card' }));
    await waitFor(async () => (await getOrder(k, orderId)).body.body.status === 'open', 20_000, `${k.id} open`);
  }
  for (const k of owners) {
    const res = await adjust(k, orderId, [{ description: 'out of stock', amount: picked.get(k.id), reason: 'other' }]);
    expect(res.status).toBe(200);
    expect(res.body.body.paymentId).toBe(paymentIds.get(k.id));
  }
  for (const k of owners) {
    const fin = await finalize(k, orderId);
    expect(fin.status).toBe(200);
    expect(fin.body.body).toMatchObject({ status: 'settled', capturedAmount: 100 + picked.get(k.id)! });
  }
  // the live order was captured at the live provider, once, for its own amount
  const liveCaptures = provider.requests.filter((r) => r.path.endsWith('/capture'));
  expect(liveCaptures.map((r) => r.body)).toEqual([{ amount: 8000 }]);

  for (const k of owners) {
    const view = (await getOrder(k, orderId)).body.body;
    expect(view).toMatchObject({ orderId, paymentId: paymentIds.get(k.id), finalAmount: 100 + picked.get(k.id)! });
    expect(view.adjustments).toHaveLength(1);
    const events = await untilEvent(k, orderId, 'order.settled');
    const mode = k === liveA ? 'live' : 'sandbox';
    expect(events.every(([, paymentId, m]) => paymentId === paymentIds.get(k.id) && m === mode)).toBe(true);
  }
  await noOrderFor(outsider, orderId);
});

/** A QR payment of `orderId` by `k`, paid (the provider's result proven to its workflow). */
async function paidQrOf(k: Key, orderId: string, amount: number): Promise<string> {
  const created = await api()
    .post('/qrpayment')
    .set('X-API-Key', k.key)
    .send({ orderId, userId: 'u', amount, customerId: 'c' });
  expect(created.status).toBe(200);
  const paymentId = created.body.body.paymentId as string;
  const handle = resultAware(stack, stack.client.workflow.getHandle(paymentWorkflowIdOf(paymentId)));
  await handle.signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'qr' }));
  await handle.result();
  return paymentId;
}

it('one QR order id of two merchants: one finalised above (its top-up paid by callback), one below (refunded)', async () => {
  const orderId = uniq('ORD-2002');
  const merchantC = await newKey(stack.db, { scopes }); // a third merchant whose top-up stays unpaid
  const [payA, payB, payC] = [
    await paidQrOf(merchantA, orderId, 100),
    await paidQrOf(merchantB, orderId, 100),
    await paidQrOf(merchantC, orderId, 100),
  ];
  expect(new Set([payA, payB, payC]).size).toBe(3);
  await adjust(merchantA, orderId, [{ description: 'Durian instead of mango', amount: 20.5, reason: 'substitution' }]);
  await adjust(merchantB, orderId, [{ description: 'Rice: out of stock', amount: -30, reason: 'out_of_stock' }]);
  await adjust(merchantC, orderId, [{ description: 'Bigger watermelon', amount: 5, reason: 'weight' }]);

  const [finA, finB, finC] = [
    await finalize(merchantA, orderId),
    await finalize(merchantB, orderId),
    await finalize(merchantC, orderId),
  ];
  expect(finA.body.body).toMatchObject({ paymentId: payA, status: 'awaiting_topup', finalAmount: 120.5 });
  expect(finB.body.body).toMatchObject({ paymentId: payB, status: 'settled', refundedAmount: 30, finalAmount: 70 });
  expect(finC.body.body).toMatchObject({ paymentId: payC, status: 'awaiting_topup', finalAmount: 105 });
  const [topA] = finA.body.body.topUps;
  const [topC] = finC.body.body.topUps;
  // both top-ups are `<orderId>.topup`, each its own payment and workflow in its own account
  expect(topA).toMatchObject({ orderId: `${orderId}.topup`, amount: 20.5, status: 'pending' });
  expect(topC).toMatchObject({ orderId: `${orderId}.topup`, amount: 5, status: 'pending' });
  expect(topA.paymentId).not.toBe(topC.paymentId);
  const topRows = await stack.db('payments').where({ order_id: `${orderId}.topup` });
  expect(topRows.map((r) => r.workflow_id).sort()).toEqual(
    [topA.paymentId, topC.paymentId].map((id: string) => paymentWorkflowIdOf(id)).sort(),
  );
  // the top-up's hosted checkout page is its own
  const checkout = new URL(topA.checkoutUrl);
  const page = await api().get(`${checkout.pathname}${checkout.search}`);
  expect(page.status).toBe(200);
  expect(page.text).toContain(orderId);

  const handle = stack.client.workflow.getHandle(paymentWorkflowIdOf(topA.paymentId));
  await waitFor(async () => !!(await handle.describe().catch(() => undefined)), 20_000, 'top-up started');
  // the QR provider's callback names the top-up's payment id: it reaches merchant A's top-up only
  const cb = await post(
    stack.app,
    '/qrcallback',
    fieldSigned(stack.config, 'QR', {
      paymentId: topA.paymentId,
      status: 'success',
      amount: 20.5,
      orderId: `${orderId}.topup`,
    }),
  );
  expect(cb.status).toBe(200);
  const settledA = await waitFor(
    async () => {
      const o = (await getOrder(merchantA, orderId)).body.body;
      return o.status === 'settled' ? o : undefined;
    },
    30_000,
    'A settled',
  );
  expect(settledA).toMatchObject({ paymentId: payA, paidAmount: 120.5, finalAmount: 120.5 });
  expect(settledA.topUps[0]).toMatchObject({ paymentId: topA.paymentId, status: 'paid' });
  const viewC = (await getOrder(merchantC, orderId)).body.body;
  expect(viewC).toMatchObject({ paymentId: payC, status: 'awaiting_topup', paidAmount: 100 });
  expect(viewC.topUps[0]).toMatchObject({ paymentId: topC.paymentId, status: 'pending' });
  expect((await getOrder(merchantB, orderId)).body.body).toMatchObject({ paymentId: payB, refundedAmount: 30 });
  const refunds = await stack.db('refunds').where({ order_id: orderId });
  expect(refunds.map((r) => [r.payment_id, Number(r.amount_satang)])).toEqual([[payB, 3000]]);

  const eventsA = await untilEvent(merchantA, orderId, 'order.settled');
  expect(eventsA.map(([t]) => t)).toEqual([
    'order.adjusted',
    'order.topup_pending',
    'order.topup_paid',
    'order.settled',
  ]);
  expect(eventsA.every(([, p]) => p === payA)).toBe(true);
  const eventsB = await untilEvent(merchantB, orderId, 'order.settled');
  expect(eventsB.every(([, p]) => p === payB)).toBe(true);
  expect(orderEventsAt(liveA, orderId)).toEqual([]);
  await noOrderFor(outsider, orderId);
  await noOrderFor(liveA, orderId); // merchant A's live key: no order of that id in live
});

it('a workflow started under the guessable order-<orderId> is no order: its lapse and updates act on nothing', async () => {
  const orderId = uniq('ORD-2003');
  const res = await api()
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', merchantA.key)
    .send({ orderId, userId: 'u-1', amount: '100', token: 'tok_test_visa', capture: 'false' });
  const paymentId = res.body.body.paymentId as string;
  await stack.client.workflow
    .getHandle(orderWorkflowIdOf(paymentId))
    .signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'card' }));
  await waitFor(async () => (await getOrder(merchantA, orderId)).body.body.status === 'open', 20_000, 'open');
  // the order's lapse is due (its own workflow's timer is not): only the order's workflow may act on it
  await stack
    .db('orders')
    .where({ payment_id: paymentId })
    .update({ lapses_at: new Date(Date.now() - 1000) });
  // a client with the codec (an outsider's plain client is refused before any activity runs)
  const input = { orderId, paymentId, method: 'card', mode: 'sandbox', apiKeyId: merchantA.id };
  const forged = await stack.client.workflow.start('orderSettlementWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId: `order-${orderId}`,
    args: [{ ...input, lapseSeconds: 1, lapseAction: 'capture' }],
  });
  const out = await forged
    .executeUpdate('finalize', { args: [{ stepId: `fin_${uniq('x')}`, proof: '1'.repeat(64) }] })
    .catch((e: Error) => ({ error: e.message }));
  expect(out).toMatchObject({ ok: false, code: 'NOT_FOUND' });
  await new Promise((r) => setTimeout(r, 3000)); // two lapses of the forged workflow
  await forged.terminate('test over');
  expect(await stack.db('order_finalizations').where({ order_id: orderId })).toHaveLength(0);
  expect(await stack.db('sim_card_captures').where({ charge_id: res.body.body.chargeId })).toHaveLength(0);
  expect((await getOrder(merchantA, orderId)).body.body).toMatchObject({ status: 'open', capturedAmount: 0 });
});

describe('migration 20261128093900_orders_scoped on a database with rows', () => {
  let db: Db;
  beforeAll(async () => {
    db = await freshDatabase('orders_scoped_mig');
  });
  afterAll(() => db?.destroy());

  it('keeps existing orders (and their workflow ids), keys their rows by payment id, scopes new ones', async () => {
    await db.migrate.latest({ migrationSource });
    await migrateDownThrough(db, '20261128093900_orders_scoped');
    const key = (id: string) => ({ id, name: id, prefix: `tk_test_${id}`, key_hash: id, scopes: ['payments:write'] });
    await db('api_keys').insert([key('key_a'), key('key_b')]);
    const order = (paymentId: string, apiKeyId: string) => ({
      order_id: 'ORD-OLD',
      payment_id: paymentId,
      method: 'qr',
      mode: 'sandbox',
      api_key_id: apiKeyId,
      status: 'open',
      base_satang: 10000,
    });
    await db('orders').insert(order('pay_old', 'key_a'));
    await db('order_adjustments').insert({
      id: 'adj_old',
      order_id: 'ORD-OLD',
      lines: JSON.stringify([]),
      total_satang: 0,
      api_key_id: 'key_a',
    });
    await db('order_finalizations').insert({ id: 'fin_old', order_id: 'ORD-OLD' });
    await db('order_topups').insert({
      payment_id: 'pay_old_top',
      order_id: 'ORD-OLD',
      topup_order_id: 'ORD-OLD.topup',
      finalize_id: 'fin_old',
      amount_satang: 500,
    });
    await expect(db('orders').insert(order('pay_other', 'key_b'))).rejects.toThrow(/orders_pkey/);

    await db.migrate.up({ migrationSource });
    expect(await db('orders').where({ payment_id: 'pay_old' }).first()).toMatchObject({
      order_id: 'ORD-OLD',
      account_id: 'key_a',
      workflow_id: 'order-ORD-OLD',
    });
    for (const t of ['order_adjustments', 'order_finalizations', 'order_topups'])
      expect(await db(t).where({ order_id: 'ORD-OLD' }).pluck('order_payment_id')).toEqual(['pay_old']);
    // another account's order (and top-up) of the same order id; the same account's is refused
    await db('orders').insert({ ...order('pay_other', 'key_b'), account_id: 'key_b', workflow_id: 'order-pay_other' });
    await db('order_finalizations').insert({ id: 'fin_other', order_id: 'ORD-OLD', order_payment_id: 'pay_other' });
    await db('order_topups').insert({
      payment_id: 'pay_other_top',
      order_id: 'ORD-OLD',
      order_payment_id: 'pay_other',
      topup_order_id: 'ORD-OLD.topup',
      finalize_id: 'fin_other',
      amount_satang: 500,
    });
    await expect(
      db('orders').insert({ ...order('pay_dup', 'key_a'), account_id: 'key_a', workflow_id: 'order-pay_dup' }),
    ).rejects.toThrow(/orders_scoped_order/);
    await expect(db.migrate.down({ migrationSource })).rejects.toThrow(/share an order id/);
    await db('order_topups').where({ payment_id: 'pay_other_top' }).delete();
    await db('order_finalizations').where({ id: 'fin_other' }).delete();
    await db('orders').where({ payment_id: 'pay_other' }).delete();
    await db.migrate.down({ migrationSource });
    expect(await db('order_finalizations').where({ id: 'fin_old' }).first()).not.toHaveProperty('order_payment_id');
    expect((await db('orders').where({ order_id: 'ORD-OLD' }).first()).payment_id).toBe('pay_old');
  });
});
