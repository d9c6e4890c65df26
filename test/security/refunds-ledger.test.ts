/**
 * The refund ledger: a refund is a row before money moves, its id is unique per refund whatever
 * the Idempotency-Key retention, and Postgres itself keeps succeeded + pending refunds within the
 * amount paid, whoever writes the rows.
 */
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { newKey, paidQr, request } from '../payments/support';

let stack: TestStack;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  key = (await newKey(stack.db, { scopes: ['payments:write', 'payments:read'] })).key;
});
afterAll(() => stack.close());

const refund = (body: Record<string, unknown>, idem?: string) => {
  const req = request(stack.app.callback()).post('/refund').set('X-API-Key', key);
  if (idem) req.set('Idempotency-Key', idem);
  return req.send(body);
};
/** 24 h later: the gateway's idempotency records are gone. */
const expireIdempotency = () => stack.db('idempotency_keys').del();

/** Every refund the API said succeeded has its row; the rows stay within the amount paid. */
async function ledgerOf(paymentId: string) {
  const p = await stack.db('payments').where({ id: paymentId }).first();
  const rows = await stack.db('refunds').where({ payment_id: paymentId });
  const counted = rows.filter((r: { status: string }) => r.status !== 'failed');
  return {
    amount: Number(p.amount_satang),
    refunded: Number(p.refunded_satang),
    counted: counted.reduce((s: number, r: { amount_satang: string }) => s + Number(r.amount_satang), 0),
    ids: rows.map((r: { id: string }) => r.id),
  };
}

describe('refund ids and the Idempotency-Key', () => {
  it('a key reused after its retention on another order never answers a refund without its row, nor passes the amount', async () => {
    const first = await paidQr(stack, key, 100, 'sec-led');
    const idem = uniq('idem');
    const a = await refund({ orderId: first.orderId, amount: 30 }, idem);
    expect(a.body.body).toMatchObject({ status: 'succeeded', payment: { refundedAmount: 30 } });
    await expireIdempotency();

    const second = await paidQr(stack, key, 100, 'sec-led');
    const b = await refund({ orderId: second.orderId, amount: 40 }, idem);
    if (b.status === 200) {
      expect(b.body.body.refundId).not.toBe(a.body.body.refundId);
      expect((await ledgerOf(second.paymentId)).ids).toContain(b.body.body.refundId);
    } else expect(b.body.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const full = await refund({ orderId: second.orderId });
    expect(full.status).toBe(200);
    const after = await ledgerOf(second.paymentId);
    expect(after.refunded).toBeLessThanOrEqual(after.amount);
    expect(after.counted).toBe(after.refunded);
    expect(await ledgerOf(first.paymentId)).toMatchObject({ refunded: 3000, counted: 3000 });
  });

  it('the same request with the same key after its retention is the same refund, not a second one', async () => {
    const { orderId, paymentId } = await paidQr(stack, key, 100, 'sec-led');
    const idem = uniq('idem');
    const a = await refund({ orderId, amount: 25 }, idem);
    await expireIdempotency();
    const again = await refund({ orderId, amount: 25 }, idem);
    expect(again.status).toBe(200);
    expect(again.body.body.refundId).toBe(a.body.body.refundId);
    expect(await ledgerOf(paymentId)).toMatchObject({ refunded: 2500, counted: 2500 });
  });
});

describe('Postgres keeps refunds within the amount paid', () => {
  it('rows written directly (a retry, a crash, a second writer) cannot pass the amount', async () => {
    const { orderId, paymentId } = await paidQr(stack, key, 10, 'sec-led');
    const row = (id: string, amount: number) => ({
      id,
      payment_id: paymentId,
      order_id: orderId,
      amount_satang: amount,
    });
    await stack.db('refunds').insert(row(`re_${uniq('a')}`, 600));
    await expect(stack.db('refunds').insert(row(`re_${uniq('b')}`, 401))).rejects.toThrow();
    await stack.db('refunds').insert(row(`re_${uniq('c')}`, 400));
    // concurrent writers of the last satang: one wins
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => stack.db('refunds').insert(row(`re_${uniq('d')}`, 1))),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(0);
    expect((await ledgerOf(paymentId)).counted).toBe(1000);
  });
});
