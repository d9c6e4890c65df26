/**
 * The durable timer before an authorisation lapses (ORDER_AUTH_LAPSE_S, here a few seconds): an
 * order nobody finalised is captured at its adjusted amount (ORDER_LAPSE_ACTION=capture) or
 * released (release); when the release fails too, the order is `attention` and an alert is logged.
 * An unpaid top-up (QR_EXPIRY_S) ends the order as ORDER_TOPUP_EXPIRED says: settle or cancel.
 */
import { capturingLogger, createTestStack, waitFor, type TestStack } from '../support/stack';
import { holdCard } from './support';
import { newKey, paidQr, request } from '../payments/support';

async function authorise(stack: TestStack, key: string, estimate: number) {
  const { orderId, chargeId } = await holdCard(stack, key, estimate, 'ol');
  return { orderId, chargeId };
}

const orderOf = async (stack: TestStack, key: string, orderId: string) =>
  (await request(stack.app.callback()).get(`/orders/${orderId}`).set('X-API-Key', key)).body.body;
const capturesOf = async (stack: TestStack, chargeId: string) =>
  (await stack.db('sim_card_captures').where({ charge_id: chargeId })).map((c) => [c.kind, Number(c.amount_satang)]);

describe('lapse action capture', () => {
  let stack: TestStack;
  let key: string;
  beforeAll(async () => {
    stack = await createTestStack({
      env: { ORDER_AUTH_LAPSE_S: '3', ORDER_LAPSE_ACTION: 'capture', QR_EXPIRY_S: '3', ORDER_TOPUP_EXPIRED: 'settle' },
    });
    key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
  });
  afterAll(() => stack.close());

  it('an unfinalised order is captured at its adjusted amount before the authorisation lapses', async () => {
    const { orderId, chargeId } = await authorise(stack, key, 80);
    await waitFor(async () => (await orderOf(stack, key, orderId)).status === 'open', 20_000, 'open');
    await request(stack.app.callback())
      .post(`/orders/${orderId}/adjustments`)
      .set('X-API-Key', key)
      .send({ lines: [{ description: 'Basil: out of stock', amount: -5, reason: 'out_of_stock' }] });
    const settled = await waitFor(
      async () => {
        const o = await orderOf(stack, key, orderId);
        return o.status === 'settled' ? o : undefined;
      },
      30_000,
      'settled by the lapse timer',
    );
    expect(settled).toMatchObject({ capturedAmount: 75, finalAmount: 75 });
    expect(await capturesOf(stack, chargeId)).toEqual([['capture', 7500]]);
  });

  it('an unpaid top-up expires and the order settles at what was paid (ORDER_TOPUP_EXPIRED=settle)', async () => {
    const o = await unpaidTopUp(stack, key);
    expect(o).toMatchObject({ status: 'settled', paidAmount: 50, finalAmount: 50, refundedAmount: 0 });
    expect(o.topUps[0]).toMatchObject({ amount: 10, status: 'expired' });
  });
});

/** A paid QR order finalised 10 THB above what was paid, whose top-up nobody pays; the order once decided. */
async function unpaidTopUp(stack: TestStack, key: string) {
  const { orderId } = await paidQr(stack, key, 50, 'ot');
  const api = () => request(stack.app.callback());
  await api()
    .post(`/orders/${orderId}/adjustments`)
    .set('X-API-Key', key)
    .send({ lines: [{ description: 'Bigger melon', amount: 10, reason: 'substitution' }] });
  expect((await api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key)).body.body.status).toBe(
    'awaiting_topup',
  );
  return waitFor(
    async () => {
      const o = await orderOf(stack, key, orderId);
      return o.status === 'awaiting_topup' ? undefined : o;
    },
    30_000,
    'the top-up expiring',
  );
}

describe('lapse action release', () => {
  let stack: TestStack;
  let key: string;
  const log = capturingLogger('error');
  beforeAll(async () => {
    stack = await createTestStack({
      env: { ORDER_AUTH_LAPSE_S: '3', ORDER_LAPSE_ACTION: 'release', QR_EXPIRY_S: '3', ORDER_TOPUP_EXPIRED: 'cancel' },
      logger: log.logger,
    });
    key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
  });
  afterAll(() => stack.close());

  it('releases an unfinalised authorisation; when the release fails, the order needs a person and an alert is logged', async () => {
    const released = await authorise(stack, key, 50);
    const stuck = await authorise(stack, key, 1.79); // 1.97 THB held: the sandbox declines its void
    for (const { orderId } of [released, stuck])
      await waitFor(
        async () => ['settled', 'attention'].includes((await orderOf(stack, key, orderId)).status),
        30_000,
        'the lapse timer',
      );
    expect(await orderOf(stack, key, released.orderId)).toMatchObject({ status: 'settled', capturedAmount: 0 });
    expect(await capturesOf(stack, released.chargeId)).toEqual([['void', 5500]]);
    const attention = await orderOf(stack, key, stuck.orderId);
    expect(attention.status).toBe('attention');
    expect(attention.statusReason).toMatch(/release failed/);
    expect(log.lines).toContainEqual(expect.objectContaining({ alert: 'order_settlement', orderId: stuck.orderId }));
  });

  it('an unpaid top-up expires and the order is cancelled, all it paid refunded (ORDER_TOPUP_EXPIRED=cancel)', async () => {
    const o = await unpaidTopUp(stack, key);
    expect(o).toMatchObject({ status: 'failed', paidAmount: 50, refundedAmount: 50 });
    expect(o.topUps[0]).toMatchObject({ amount: 10, status: 'expired' });
  });
});
