/**
 * The sandbox providers: for sandbox payments they post correctly signed callbacks from loopback,
 * with the outcome chosen by the satang part of the amount (README "Sandbox").
 */
import request from 'supertest';
import { sandboxOutcome, startCallbackSimulator, type CallbackSimulator } from '../../src/simulators/callbacks';
import { paidPaymentWorkflowId } from '../../src/callbacks';
import { createTestStack, testLogger, uniq, type TestStack } from '../support/stack';
import { serveApp } from '../support/servers';
import { apiKey } from '../webhooks/helpers';
import { cardPayment, resultOf, waitFor } from './helpers';

let stack: TestStack;
let gateway: Awaited<ReturnType<typeof serveApp>>;
let simulator: CallbackSimulator;
let key: string;
beforeAll(async () => {
  stack = await createTestStack({ env: { SIMULATOR_DELAY_S: '5', PAID_ORDER_CONFIRM_WINDOW_S: '10' } });
  gateway = await serveApp(stack.app);
  const gatewayUrl = gateway.url;
  simulator = startCallbackSimulator({
    db: stack.db,
    config: stack.config,
    logger: testLogger,
    gatewayUrl,
    since: new Date(),
    pollMs: 100,
    quickDelayMs: 100,
  });
  key = (await apiKey(stack)).key;
});
afterAll(async () => {
  await simulator.stop();
  await gateway.close();
  await stack.close();
});

async function qrPayment(amount: number) {
  const orderId = uniq('ord');
  const res = await request(stack.app.callback())
    .post('/qrpayment')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount, customerId: 'c-1' });
  expect(res.status).toBe(200);
  const row = await waitFor(() => stack.db('payments').where({ order_id: orderId }).first());
  return { orderId, paymentId: row.id as string, workflowId: row.workflow_id as string };
}
const providersOf = async (paymentId: string) =>
  (await stack.db('callback_receipts').where({ payment_id: paymentId }).orderBy('created_at')).map(
    (r: { provider: string }) => r.provider,
  );

it.each([
  [10, 'success'],
  [10.01, 'fail'],
  [10.02, 'delayed'],
  [10.03, 'none'],
  [10.11, 'alternate'],
  [10.12, 'wallet'],
  [10.5, 'success'],
])('amount %p -> %s', (thb, outcome) => {
  expect(sandboxOutcome(Math.round(thb * 100))).toBe(outcome);
});

it('card: the provider posts /callback for the charge and the payment is paid', async () => {
  const p = await cardPayment(stack, { amount: 30 });
  await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  expect(await providersOf(p.paymentId)).toEqual(['card']);
});

it('card, amount .01: the card is declined and the payment fails', async () => {
  const p = await cardPayment(stack, { amount: 30.01 });
  await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'failed' });
  expect(await stack.db('callback_receipts').where({ payment_id: p.paymentId }).first()).toMatchObject({
    provider: 'card',
    status: 'failed',
  });
});

it('card, amount .11: the result comes from the card network', async () => {
  const p = await cardPayment(stack, { amount: 30.11 });
  await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  expect(await providersOf(p.paymentId)).toEqual(['cardnet']);
  expect(await stack.db('cardnet_callbacks').where({ order_id: p.orderId }).first()).toMatchObject({
    payment_id: p.paymentId,
    success: true,
  });
});

it('QR, amount .11: paid from a bank app', async () => {
  const p = await qrPayment(20.11);
  await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  expect(await providersOf(p.paymentId)).toEqual(['bankapp']);
});

it('QR, amount .12: paid from a wallet; the wallet handler then confirms the paid order', async () => {
  const p = await qrPayment(20.12);
  await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  expect(await providersOf(p.paymentId)).toEqual(['wallet']);
  await waitFor(() => stack.db('wallet_callbacks').where({ order_id: p.orderId }).first(), 10_000, 'wallet record');
  await expect(stack.client.workflow.getHandle(paidPaymentWorkflowId(p.paymentId)).result()).resolves.toMatchObject({
    status: 'confirmed',
  });
});

it('amount .02: the callback comes after SIMULATOR_DELAY_S; amount .03: none comes', async () => {
  const delayed = await qrPayment(20.02);
  const silent = await qrPayment(20.03);
  const quick = await qrPayment(20.04); // a witness that the simulator is running meanwhile
  await expect(resultOf(stack, quick.workflowId)).resolves.toMatchObject({ status: 'paid' });
  expect((await stack.db('payments').where({ id: delayed.paymentId }).first()).status).toBe('pending');
  await expect(resultOf(stack, delayed.workflowId)).resolves.toMatchObject({ status: 'paid' });
  expect(await stack.db('callback_receipts').where({ payment_id: silent.paymentId })).toHaveLength(0);
  expect((await stack.db('payments').where({ id: silent.paymentId }).first()).status).toBe('pending');
  await stack.client.workflow.getHandle(silent.workflowId).terminate('test cleanup');
});

it('more than 200 payments that stay pending (.03) do not hide a newer payment from the simulator', async () => {
  // 250 never-paid sandbox payments, older than the new one (rows only: no workflow needs to run)
  const stale = Array.from({ length: 250 }, (_, i) => {
    const orderId = uniq(`stale${i}`);
    return {
      id: uniq('pay_stale'),
      order_id: orderId,
      user_id: 'u-1',
      method: 'qr',
      amount_satang: 1003,
      mode: 'sandbox',
      status: 'pending',
      workflow_id: `payment-${orderId}`,
    };
  });
  await stack.db('payments').insert(stale);
  try {
    const fresh = await qrPayment(20.05);
    await expect(resultOf(stack, fresh.workflowId)).resolves.toMatchObject({ status: 'paid' });
  } finally {
    await stack
      .db('payments')
      .whereIn(
        'id',
        stale.map((s) => s.id),
      )
      .delete();
  }
}, 30_000);
