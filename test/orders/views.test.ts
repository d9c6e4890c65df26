/**
 * An order's settlement as the other views show it, on the real stack: the timeline's order.*
 * entries (authorised, adjustments, finalised, captured and released, voided, refunded, top-up
 * pending and paid, settled) in the API and the staff console, and /checkstatus and GET /payments with the authorisation's state
 * and a top-up's order.
 */
import { createTestStack, provenResult, waitFor, type TestStack } from '../support/stack';
import { holdCard, topUpWorkflowOf } from './support';
import { newKey, paidQr, request } from '../payments/support';
import { signIn } from '../console/support';

let stack: TestStack;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
});
afterAll(() => stack.close());

const api = () => request(stack.app.callback());
const adjust = (orderId: string, lines: unknown[]) =>
  api().post(`/orders/${orderId}/adjustments`).set('X-API-Key', key).send({ lines });
const finalize = (orderId: string) => api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key).send();
const statusOf = async (orderId: string) =>
  (await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body;
const listed = async (orderId: string) =>
  ((await api().get('/payments?limit=100').set('X-API-Key', key)).body.body.payments as { orderId: string }[]).find(
    (p) => p.orderId === orderId,
  );
type Entry = { type: string; details: Record<string, unknown> };
const orderEntries = async (orderId: string, k = key) => {
  const res = await api().get(`/payments/${orderId}/timeline`).set('X-API-Key', k);
  expect(res.status).toBe(200);
  return (res.body.body.entries as Entry[]).filter((e) => e.type.startsWith('order.'));
};

async function authorisedCard(estimate: number) {
  const { orderId } = await holdCard(stack, key, estimate, 'ov');
  const order = async () => (await api().get(`/orders/${orderId}`).set('X-API-Key', key)).body.body;
  await waitFor(async () => (await order()).status === 'open', 20_000, 'order open');
  return orderId;
}

describe('card order', () => {
  it('timeline: authorised, two adjustments, finalised, captured, the rest released, settled; checkstatus and the list show the capture', async () => {
    const orderId = await authorisedCard(100);
    const held = { state: 'authorized', authorizedAmount: 110, capturedAmount: 0, releasedAmount: 0 };
    expect(await statusOf(orderId)).toMatchObject({ status: 'authorized', amount: 110, authorization: held });
    expect(await listed(orderId)).toMatchObject({ status: 'authorized', authorization: held });

    await adjust(orderId, [{ description: 'Chicken 1.2 kg weighed 1.34 kg', amount: 12.6, reason: 'weight' }]);
    await adjust(orderId, [{ description: 'Jasmine rice: out of stock', amount: -26.6, reason: 'out_of_stock' }]);
    expect((await finalize(orderId)).body.body.status).toBe('settled');

    const entries = await orderEntries(orderId);
    expect(entries.map((e) => e.type)).toEqual([
      'order.authorized',
      'order.adjusted',
      'order.adjusted',
      'order.finalized',
      'order.captured',
      'order.released',
      'order.settled',
    ]);
    expect(entries[0].details).toEqual({ amount: 110 });
    expect(entries[1].details).toMatchObject({
      amount: 12.6,
      status: 'applied',
      lines: [{ description: 'Chicken 1.2 kg weighed 1.34 kg', reason: 'weight', amount: 12.6 }],
    });
    expect(entries[3].details).toMatchObject({ finalAmount: 86 });
    expect(entries[4].details).toEqual({ amount: 86, authorizedAmount: 110 });
    expect(entries[5].details).toEqual({ amount: 24 });
    expect(entries[6].details).toMatchObject({ status: 'settled', finalAmount: 86, capturedAmount: 86 });

    const part = { state: 'partially_captured', authorizedAmount: 110, capturedAmount: 86, releasedAmount: 24 };
    expect(await statusOf(orderId)).toMatchObject({ status: 'paid', amount: 86, authorization: part });
    expect(await listed(orderId)).toMatchObject({ status: 'paid', amount: 86, authorization: part });

    // the staff console's order page shows the same entries
    const page = await (await signIn(stack.app, key)).get(`/console/orders/${orderId}`);
    expect(page.status).toBe(200);
    for (const type of ['order.authorized', 'order.adjusted', 'order.captured', 'order.released', 'order.settled'])
      expect(page.text).toContain(type);

    // another merchant's key sees no timeline of it
    const other = (await newKey(stack.db, { scopes: ['payments:read'] })).key;
    expect((await api().get(`/payments/${orderId}/timeline`).set('X-API-Key', other)).status).toBe(404);
  });

  it('finalised to nothing: voided and settled; checkstatus shows the authorisation released', async () => {
    const orderId = await authorisedCard(40);
    await adjust(orderId, [{ description: 'Everything out of stock', amount: -40, reason: 'out_of_stock' }]);
    expect((await finalize(orderId)).body.body.status).toBe('settled');
    const entries = await orderEntries(orderId);
    expect(entries.map((e) => e.type)).toEqual([
      'order.authorized',
      'order.adjusted',
      'order.finalized',
      'order.voided',
      'order.settled',
    ]);
    expect(entries[3].details).toMatchObject({ amount: 44 });
    expect(await statusOf(orderId)).toMatchObject({
      status: 'expired',
      authorization: { state: 'released', authorizedAmount: 44, capturedAmount: 0, releasedAmount: 44 },
    });
  });
});

describe('PromptPay order', () => {
  it('finalised down: the refunded difference, settled; a plain payment has no authorization field', async () => {
    const { orderId } = await paidQr(stack, key, 100, 'ovq');
    expect(await statusOf(orderId)).not.toHaveProperty('authorization');
    await adjust(orderId, [{ description: 'Mango: out of stock', amount: -30.25, reason: 'out_of_stock' }]);
    expect((await finalize(orderId)).body.body.status).toBe('settled');
    const entries = await orderEntries(orderId);
    expect(entries.map((e) => e.type)).toEqual([
      'order.adjusted',
      'order.finalized',
      'order.refunded',
      'order.settled',
    ]);
    expect(entries[2].details).toEqual({ amount: 30.25, paidAmount: 100 });
  });

  it('finalised up: top-up pending then paid, settled; the top-up payment names its order', async () => {
    const { orderId } = await paidQr(stack, key, 100, 'ovq');
    await adjust(orderId, [{ description: 'Durian instead of mango', amount: 20.5, reason: 'substitution' }]);
    const [topUp] = (await finalize(orderId)).body.body.topUps;
    expect((await orderEntries(orderId)).map((e) => e.type)).toEqual([
      'order.adjusted',
      'order.finalized',
      'order.topup_pending',
    ]);
    expect(await statusOf(`${orderId}.topup`)).toMatchObject({ status: 'pending', amount: 20.5, topUpOf: orderId });
    expect(await listed(`${orderId}.topup`)).toMatchObject({ status: 'pending', topUpOf: orderId });
    const handle = stack.client.workflow.getHandle(await topUpWorkflowOf(stack.db, orderId));
    await waitFor(async () => !!(await handle.describe().catch(() => undefined)), 20_000, 'top-up started');
    await handle.signal(
      'paymentResult',
      provenResult(stack.config, topUp.paymentId, { status: 'success', provider: 'qr' }),
    );
    await waitFor(async () => (await orderEntries(orderId)).some((e) => e.type === 'order.settled'), 20_000, 'settled');
    const entries = await orderEntries(orderId);
    expect(entries.map((e) => e.type)).toEqual([
      'order.adjusted',
      'order.finalized',
      'order.topup_pending',
      'order.topup_paid',
      'order.settled',
    ]);
    expect(entries[3].details).toEqual({ paymentId: topUp.paymentId, orderId: `${orderId}.topup`, amount: 20.5 });
    expect(entries[4].details).toMatchObject({ finalAmount: 120.5, paidAmount: 120.5 });
  });
});
