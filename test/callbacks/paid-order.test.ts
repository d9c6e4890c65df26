/**
 * Paid-order processing (paidOrderProcessingWorkflow), started by the wallet handler: the order is
 * confirmed only when its payment was confirmed paid by a verified callback; the public handler's
 * word alone is never enough.
 */
import request from 'supertest';
import { paidOrderWorkflowId, type PaidOrderOutcome } from '../../src/callbacks';
import { unmatchedPaidOrderWorkflowId } from '../../src/callbacks/wallet-handler';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { cardPayment, fieldSigned, post, resultOf, waitFor, type TestPayment } from './helpers';

let stack: TestStack;
let smtp: SmtpSink;
beforeAll(async () => {
  smtp = await startSmtpSink();
  stack = await createTestStack({ env: { SMTP_URL: smtp.url, PAID_ORDER_CONFIRM_WINDOW_S: '3' } });
});
afterAll(async () => {
  await stack.close();
  await smtp.stop();
});

const walletHandler = (body: Record<string, unknown>) =>
  request(stack.app.callback())
    .post('/wallet/callback')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));
const walletGateway = (p: TestPayment) =>
  post(
    stack.app,
    '/walletcallback',
    fieldSigned(stack.config, 'WALLET', { walletId: 'wal_1', status: 'success', amount: p.amount, orderId: p.orderId }),
  );
const outcome = (orderId: string, workflowId = paidOrderWorkflowId(orderId)) =>
  stack.client.workflow.getHandle(workflowId).result() as Promise<PaidOrderOutcome>;
const paidOrder = (orderId: string) => stack.db('paid_orders').where({ order_id: orderId }).first();

it('confirms the order when the verified wallet callback already made the payment paid', async () => {
  const p = await cardPayment(stack);
  expect((await walletGateway(p)).status).toBe(200);
  await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  const body = { orderId: p.orderId, paymentId: p.paymentId, success: true, userId: 'u-1', amount: p.amount };
  expect((await walletHandler(body)).status).toBe(200);
  await expect(outcome(p.orderId)).resolves.toEqual({
    orderId: p.orderId,
    paymentId: p.paymentId,
    status: 'confirmed',
    reason: 'payment confirmed paid',
  });
  expect(await paidOrder(p.orderId)).toMatchObject({
    status: 'confirmed',
    payment_id: p.paymentId,
    user_id: 'u-1',
    amount_satang: String(p.amount * 100),
    source: 'wallet',
    body,
  });
  // OrderId="X" in Temporal Web finds the paid-order workflow too
  expect(
    (await stack.client.workflow.getHandle(paidOrderWorkflowId(p.orderId)).describe()).searchAttributes.OrderId,
  ).toEqual([p.orderId]);
});

it('waits for the verified callback when the handler is first', async () => {
  const p = await cardPayment(stack, { amount: 40 });
  expect(
    (await walletHandler({ orderId: p.orderId, payment_id: p.paymentId, success: true, userId: 'u-2' })).status,
  ).toBe(200);
  await waitFor(
    () =>
      stack.client.workflow
        .getHandle(paidOrderWorkflowId(p.orderId))
        .describe()
        .catch(() => undefined),
    5000,
    'processing started',
  );
  expect((await walletGateway(p)).status).toBe(200);
  await expect(outcome(p.orderId)).resolves.toMatchObject({ status: 'confirmed' });
});

it.each([
  ['no payment exists for this order', async () => ({ orderId: uniq('ord'), paymentId: 'pay_x', amount: 10 })],
  [
    'payment pay_forged is not the payment of this order',
    async () => ({ ...(await cardPayment(stack)), paymentId: 'pay_forged' }),
  ],
  [
    'amount differs from the payment amount',
    async () => ({ ...(await cardPayment(stack, { amount: 12 })), amount: 13 }),
  ],
  ['payment not confirmed paid within the confirmation window', async () => cardPayment(stack, { amount: 14 })],
])('rejects the order (%s) and tells the administrator', async (reason, make) => {
  const p = await make();
  const body = { orderId: p.orderId, paymentId: p.paymentId, success: true, userId: 'u-3', amount: p.amount };
  expect((await walletHandler(body)).status).toBe(200);
  // a post that does not name the order's payment runs apart from paid-order-<orderId>
  const id = reason.endsWith('window') ? undefined : unmatchedPaidOrderWorkflowId(p.orderId, JSON.stringify(body));
  await expect(outcome(p.orderId, id)).resolves.toMatchObject({ orderId: p.orderId, status: 'rejected', reason });
  expect(await paidOrder(p.orderId)).toMatchObject({ status: 'rejected', reason });
  const mail = await waitFor(
    async () => smtp.messages.find((m) => m.subject.includes(p.orderId)),
    10_000,
    'admin e-mail',
  );
  expect(mail.text).toContain(reason);
});
