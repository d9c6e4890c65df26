/**
 * Orders settled on what was picked, on the real stack (gateway, worker, Temporal, Postgres, the
 * sandbox card provider): a card authorised with capture=false (estimate + margin), adjusted,
 * finalised down (partial capture, the rest released) and to nothing (released) (a final above
 * the authorisation: test/orders/reauth.test.ts); a refused capture; duplicate and concurrent finalize capturing once;
 * the same capture twice at the provider being one capture; a paid QR order finalised down
 * refunding the difference through the refunds ledger, one finalised above it paying a top-up; webhooks and checkstatus showing the states.
 */
import { orderWorkflowOf, topUpWorkflowOf } from './support';
import { createTestStack, provenResult, uniq, waitFor, type TestStack } from '../support/stack';
import { newKey, paidQr, paymentError, request } from '../payments/support';
import { registerEndpoint, startReceiver, verifiesWithStandardWebhooks, type Receiver } from '../webhooks/helpers';

let stack: TestStack;
let receiver: Receiver;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  receiver = await startReceiver(200);
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read', 'webhooks:manage'] })).key;
});
afterAll(async () => {
  await stack.close();
  await receiver.stop();
});

const api = () => request(stack.app.callback());
const adjust = (orderId: string, lines: unknown[], headers: Record<string, string> = {}) =>
  api().post(`/orders/${orderId}/adjustments`).set('X-API-Key', key).set(headers).send({ lines });
const finalize = (orderId: string) => api().post(`/orders/${orderId}/finalize`).set('X-API-Key', key).send();
const orderOf = async (orderId: string) => (await api().get(`/orders/${orderId}`).set('X-API-Key', key)).body.body;
const capturesOf = async (chargeId: string) =>
  (await stack.db('sim_card_captures').where({ charge_id: chargeId }).orderBy('created_at')).map((c) => ({
    kind: c.kind,
    amount: Number(c.amount_satang),
  }));

/** A card order authorised (capture=false) for `estimate` THB: the provider's success signalled with its proof. */
async function authorisedCard(estimate: number, prefix = 'oc') {
  const orderId = uniq(prefix);
  const res = await api()
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount: String(estimate), token: 'tok_test_visa', capture: 'false' });
  expect(res.status).toBe(200);
  expect(res.body.body).toMatchObject({ orderId, method: 'card', status: 'pending', chargeId: expect.any(String) });
  const paymentId = res.body.body.paymentId as string;
  await stack.client.workflow
    .getHandle(await orderWorkflowOf(stack.db, orderId))
    .signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'card' }));
  await waitFor(async () => (await orderOf(orderId)).status === 'open', 20_000, 'order open');
  return { orderId, paymentId, chargeId: res.body.body.chargeId as string, held: res.body.body.amount as number };
}

describe('card: authorise, adjust, capture the picked basket', () => {
  it('authorises estimate + 10 %, shows authorized, captures the final amount once and releases the rest; webhooks signed', async () => {
    const ep = await registerEndpoint(stack, key, { url: `${receiver.url}/orders` });
    const { orderId, paymentId, chargeId, held } = await authorisedCard(100);
    expect(held).toBe(110);
    const st = (await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body;
    expect(st).toMatchObject({ status: 'authorized', amount: 110 });
    const listed = (await api().get('/payments?status=authorized').set('X-API-Key', key)).body.body.payments;
    expect(listed.map((p: { orderId: string }) => p.orderId)).toContain(orderId);

    const a1 = await adjust(orderId, [
      { description: 'Chicken 1.2 kg weighed 1.34 kg', amount: 12.6, reason: 'weight' },
    ]);
    expect(a1.status).toBe(200);
    const a2 = await adjust(orderId, [
      { description: 'Jasmine rice: out of stock', amount: -25.5, reason: 'out_of_stock' },
      { description: 'Milk: another brand', amount: '-1.10', reason: 'substitution' },
    ]);
    expect(a2.body.body).toMatchObject({ status: 'open', authorizedAmount: 110, capturedAmount: 0 });
    expect(a2.body.body.adjustments.map((a: { amount: number; status: string }) => [a.amount, a.status])).toEqual([
      [12.6, 'applied'],
      [-26.6, 'applied'],
    ]);

    const fin = await finalize(orderId);
    expect(fin.status).toBe(200);
    expect(fin.body.body).toMatchObject({
      status: 'settled',
      authorizedAmount: 110,
      capturedAmount: 86,
      paidAmount: 86,
      refundedAmount: 0,
      finalAmount: 86,
      estimateAmount: 100,
      topUps: [],
    });
    expect(await capturesOf(chargeId)).toEqual([{ kind: 'capture', amount: 8600 }]);
    const after = (await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body;
    expect(after).toMatchObject({ status: 'paid', amount: 86 });
    expect(after.history.map((h: { status: string }) => h.status)).toEqual(['pending', 'authorized', 'paid']);

    // finalised: an adjustment is 409, a second finalize answers the same and captures nothing more
    const late = await adjust(orderId, [{ description: 'late', amount: 1, reason: 'other' }]);
    expect(late.status).toBe(409);
    expect(late.body).toEqual(paymentError('CONFLICT', { orderId, status: 'settled' }));
    expect((await finalize(orderId)).body.body).toMatchObject({ status: 'settled', capturedAmount: 86 });
    expect(await capturesOf(chargeId)).toHaveLength(1);

    for (const status of ['authorized', 'paid']) {
      const hook = await waitFor(
        async () => receiver.log.find((r) => r.body.includes(orderId) && JSON.parse(r.body).data.status === status),
        20_000,
        `${status} webhook`,
      );
      expect(verifiesWithStandardWebhooks(hook, ep.secret)).toBe(true);
    }
    const paidHook = receiver.log.find((r) => r.body.includes(orderId) && JSON.parse(r.body).data.status === 'paid')!;
    expect(JSON.parse(paidHook.body).data).toMatchObject({ orderId, status: 'paid', amount: 86 });
    expect(paymentId).toMatch(/^pay_/);
  });

  it('concurrent and repeated finalize capture exactly once', async () => {
    const { orderId, chargeId } = await authorisedCard(200);
    await adjust(orderId, [{ description: 'Eggs: out of stock', amount: -50, reason: 'out_of_stock' }]);
    const all = await Promise.all([finalize(orderId), finalize(orderId), finalize(orderId)]);
    for (const r of all) expect(r.body.body).toMatchObject({ status: 'settled', capturedAmount: 150 });
    expect(await capturesOf(chargeId)).toEqual([{ kind: 'capture', amount: 15000 }]);
  });

  it('a basket picked to nothing releases the whole authorisation: the payment ends expired', async () => {
    const { orderId, chargeId } = await authorisedCard(30);
    await adjust(orderId, [{ description: 'Everything out of stock', amount: -30, reason: 'out_of_stock' }]);
    expect((await finalize(orderId)).body.body).toMatchObject({ status: 'settled', capturedAmount: 0, finalAmount: 0 });
    expect(await capturesOf(chargeId)).toEqual([{ kind: 'void', amount: 3300 }]);
    expect((await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body.status).toBe('expired');
  });

  it('a capture the provider declines fails the order and releases the authorisation', async () => {
    const { orderId, chargeId } = await authorisedCard(40);
    await adjust(orderId, [{ description: 'Cheese weighed less', amount: -0.02, reason: 'weight' }]); // 39.98: declined
    const fin = await finalize(orderId);
    expect(fin.body.body).toMatchObject({ status: 'failed', capturedAmount: 0 });
    expect(fin.body.body.statusReason).toMatch(/capture failed/);
    expect(await capturesOf(chargeId)).toEqual([{ kind: 'void', amount: 4400 }]);
    expect((await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body.status).toBe('failed');
  });

  it('the same capture sent twice to the provider is one capture', async () => {
    const { orderId, chargeId } = await authorisedCard(20);
    const hold = {
      orderId,
      chargeId,
      mode: 'sandbox' as const,
      idempotencyKey: `${orderId}.capture`,
      amountSatang: 1500,
    };
    const first = await stack.activities.holdOperation('capture', hold);
    const again = await stack.activities.holdOperation('capture', hold);
    expect(again).toEqual(first);
    expect(await capturesOf(chargeId)).toEqual([{ kind: 'capture', amount: 1500 }]);
  });

  it('an adjustment with a used Idempotency-Key is that adjustment; with other lines 422', async () => {
    const { orderId } = await authorisedCard(60);
    const line = { description: 'Yoghurt: substitution', amount: 3, reason: 'substitution' };
    const k = { 'Idempotency-Key': uniq('adj') };
    const one = await adjust(orderId, [line], k);
    const two = await adjust(orderId, [line], k);
    expect(two.body.body.adjustments).toEqual(one.body.body.adjustments);
    expect(one.body.body.adjustments).toHaveLength(1);
    const other = await adjust(orderId, [{ ...line, amount: 4 }], k);
    expect(other.status).toBe(422);
  });

  it('refuses bad input with 400 and capture=false without a key with 401', async () => {
    const { orderId } = await authorisedCard(10);
    for (const lines of [
      [],
      [{ description: 'x', amount: 0, reason: 'weight' }],
      [{ description: 'x', amount: 1, reason: 'nope' }],
    ])
      expect((await adjust(orderId, lines)).status).toBe(400);
    const keyless = await api()
      .post('/cardpayment')
      .type('form')
      .send({ orderId: uniq('oc'), userId: 'u', amount: '10', token: 'tok_test', capture: 'false' });
    expect(keyless.status).toBe(401);
  });
});

describe('PromptPay: paid in full, the difference refunded', () => {
  it('finalised below what was paid refunds the difference through the refunds ledger', async () => {
    const { orderId, paymentId } = await paidQr(stack, key, 100, 'oq');
    const a = await adjust(orderId, [{ description: 'Mango: out of stock', amount: -30.25, reason: 'out_of_stock' }]);
    expect(a.body.body).toMatchObject({ method: 'qr', status: 'open', paidAmount: 100 });
    const fin = await finalize(orderId);
    expect(fin.body.body).toMatchObject({
      status: 'settled',
      paidAmount: 100,
      refundedAmount: 30.25,
      finalAmount: 69.75,
    });
    const refunds = await stack.db('refunds').where({ payment_id: paymentId });
    expect(refunds.map((r) => [Number(r.amount_satang), r.status])).toEqual([[3025, 'succeeded']]);
    const st = (await api().get(`/checkstatus/${orderId}`).set('X-API-Key', key)).body.body;
    expect(st).toMatchObject({ status: 'paid', refundedAmount: 30.25 });
    expect((await finalize(orderId)).body.body.refundedAmount).toBe(30.25);
    expect(await stack.db('refunds').where({ payment_id: paymentId })).toHaveLength(1);
  });

  it('a pending QR payment is not an order yet (409)', async () => {
    const orderId = uniq('oq');
    await api().post('/qrpayment').set('X-API-Key', key).send({ orderId, userId: 'u', amount: 10, customerId: 'c' });
    expect((await adjust(orderId, [{ description: 'x', amount: -1, reason: 'other' }])).status).toBe(409);
  });

  it('finalised above what was paid: a top-up QR payment of the difference, paid by its callback, settles the order', async () => {
    const { orderId } = await paidQr(stack, key, 100, 'oq');
    await adjust(orderId, [{ description: 'Durian instead of mango', amount: 20.5, reason: 'substitution' }]);
    const fin = await finalize(orderId);
    expect(fin.status).toBe(200);
    expect(fin.body.body).toMatchObject({ status: 'awaiting_topup', paidAmount: 100, finalAmount: 120.5 });
    const [topUp] = fin.body.body.topUps;
    expect(topUp).toMatchObject({ orderId: `${orderId}.topup`, amount: 20.5, status: 'pending' });
    expect(topUp.qrPayload).toMatch(/^000201/);
    expect((await finalize(orderId)).body.body.status).toBe('awaiting_topup');
    const st = (await api().get(`/checkstatus/${orderId}.topup`).set('X-API-Key', key)).body.body;
    expect(st).toMatchObject({ method: 'qr', status: 'pending', amount: 20.5 });
    // the order's workflow starts the top-up's child after it wrote the row: wait for the child
    const topUpHandle = stack.client.workflow.getHandle(await topUpWorkflowOf(stack.db, orderId));
    await waitFor(async () => !!(await topUpHandle.describe().catch(() => undefined)), 20_000, 'top-up started');
    await topUpHandle.signal(
      'paymentResult',
      provenResult(stack.config, topUp.paymentId, { status: 'success', provider: 'qr' }),
    );
    const settled = await waitFor(
      async () => {
        const o = await orderOf(orderId);
        return o.status === 'settled' ? o : undefined;
      },
      20_000,
      'settled after the top-up',
    );
    expect(settled).toMatchObject({ paidAmount: 120.5, finalAmount: 120.5, refundedAmount: 0 });
    expect(settled.topUps[0].status).toBe('paid');
  });
});
