/**
 * The public wallet handler (POST /wallet/callback) decides nothing alone: its records are
 * append-only (one per post), and no unauthenticated post, sent first or last, blocks or replaces
 * the paid-order processing of an order, which follows Talat's own payment records.
 */
import request from 'supertest';
import { paidPaymentWorkflowId } from '../../src/callbacks';
import { useTestStack } from '../support/servers';
import { uniq, waitFor } from '../support/stack';
import { fieldSigned, post } from '../callbacks/helpers';

const stack = useTestStack({ env: { PAID_ORDER_CONFIRM_WINDOW_S: '2' } });

const walletHandler = (body: unknown) =>
  request(stack.app.callback())
    .post('/wallet/callback')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));

async function cardPaymentFor(orderId: string, amount = 250.5) {
  const res = await request(stack.app.callback())
    .post('/cardpayment')
    .type('form')
    .send({ orderId, userId: 'u-1', amount: String(amount), token: 'tok_test_visa' });
  expect(res.status).toBe(200);
  const row = await waitFor(
    () => stack.db('payments').where({ order_id: orderId }).whereNotNull('provider_ref').first(),
    20_000,
    'card charge',
  );
  return { orderId, paymentId: row.id as string, amount };
}
const payThroughWalletGateway = async (p: { orderId: string; amount: number }) => {
  const res = await post(
    stack.app,
    '/walletcallback',
    fieldSigned(stack.config, 'WALLET', { walletId: 'wal_1', status: 'success', amount: p.amount, orderId: p.orderId }),
  );
  expect(res.status).toBe(200);
  await waitFor(
    async () => (await stack.db('payments').where({ order_id: p.orderId }).first())?.status === 'paid',
    20_000,
    'payment paid',
  );
};
const paidOrder = (orderId: string) => stack.db('paid_orders').where({ order_id: orderId }).first();
const confirmed = (orderId: string) =>
  waitFor(
    async () => {
      const row = await stack.db('paid_orders').where({ order_id: orderId, status: 'confirmed' }).first();
      return row ?? undefined;
    },
    20_000,
    'paid order confirmed',
  );
const genuine = (p: { orderId: string; paymentId: string; amount: number }) => ({
  orderId: p.orderId,
  paymentId: p.paymentId,
  success: true,
  userId: 'u-1',
  amount: p.amount,
});

it('a forged post sent before the payment exists does not block the real paid order', async () => {
  const orderId = uniq('ord');
  const forged = { orderId, paymentId: 'pay_attacker', success: true, userId: 'mallory', amount: 250.5 };
  expect((await walletHandler(forged)).status).toBe(200);
  await new Promise((r) => setTimeout(r, 1500)); // what the forged post could set off, it has
  const p = await cardPaymentFor(orderId);
  await payThroughWalletGateway(p);
  expect((await walletHandler(genuine(p))).status).toBe(200);
  const row = await confirmed(orderId);
  expect(row).toMatchObject({ payment_id: p.paymentId, user_id: 'u-1', status: 'confirmed' });
});

it('a post that names the real payment before it is paid does not block the order for good', async () => {
  const orderId = uniq('ord');
  const p = await cardPaymentFor(orderId, 31.5);
  expect((await walletHandler({ ...genuine(p), userId: 'mallory' })).status).toBe(200);
  // the confirmation window (2 s) passes without a verified payment: rejected for now
  await waitFor(async () => (await paidOrder(orderId))?.status === 'rejected', 20_000, 'rejected');
  await payThroughWalletGateway(p);
  expect((await walletHandler(genuine(p))).status).toBe(200);
  const row = await confirmed(orderId);
  expect(row).toMatchObject({ payment_id: p.paymentId, user_id: 'u-1' });
});

it('records are append-only, one per post; a forged post sent last replaces nothing', async () => {
  const orderId = uniq('ord');
  const p = await cardPaymentFor(orderId, 42.5);
  await payThroughWalletGateway(p);
  expect((await walletHandler(genuine(p))).status).toBe(200);
  const before = await confirmed(orderId);
  const forged = { orderId, paymentId: 'pay_attacker', success: true, userId: 'mallory', amount: 1 };
  expect((await walletHandler(forged)).status).toBe(200);
  expect((await walletHandler({ ...forged, success: false })).status).toBe(200);

  const records = await stack.db('wallet_callbacks').where({ order_id: orderId }).orderBy('created_at');
  expect(records.map((r) => [r.payment_id, r.user_id, r.success])).toEqual([
    [p.paymentId, 'u-1', true],
    ['pay_attacker', 'mallory', true],
    ['pay_attacker', 'mallory', false],
  ]);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await stack.db('paid_orders').where({ order_id: orderId })).toEqual([before]);
  const run = await stack.client.workflow.getHandle(paidPaymentWorkflowId(p.paymentId)).describe();
  expect(run.runId).toBeDefined();
});

it('the same post twice is two records (a duplicate changes nothing else)', async () => {
  const orderId = uniq('ord');
  const body = { orderId, paymentId: 'pay_x', success: false, userId: 'u-1' };
  expect((await walletHandler(body)).status).toBe(200);
  expect((await walletHandler(body)).status).toBe(200);
  expect(await stack.db('wallet_callbacks').where({ order_id: orderId })).toHaveLength(2);
});
