/**
 * Paid-order processing (paidOrderProcessingWorkflow), started by the wallet handler: the order is
 * confirmed only when its payment was confirmed paid by a verified callback; the public handler's
 * word alone is never enough.
 */
import request from 'supertest';
import { paidPaymentWorkflowId, type PaidOrderOutcome } from '../../src/callbacks';
import { unmatchedPaidOrderWorkflowId } from '../../src/callbacks/wallet-handler';
import { startSmtpSink, type SmtpSink } from '../../src/simulators/smtp-sink';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { cardPayment, fieldSigned, headerSigned, post, resultOf, waitFor, type TestPayment } from './helpers';
import { newKey } from '../payments/support';

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
const outcome = (p: { paymentId: string }, workflowId = paidPaymentWorkflowId(p.paymentId)) =>
  stack.client.workflow.getHandle(workflowId).result() as Promise<PaidOrderOutcome>;
const paidOrder = (orderId: string) => stack.db('paid_orders').where({ order_id: orderId }).first();

it('confirms the order when the verified wallet callback already made the payment paid', async () => {
  const p = await cardPayment(stack);
  expect((await walletGateway(p)).status).toBe(200);
  await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
  const body = { orderId: p.orderId, paymentId: p.paymentId, success: true, userId: 'u-1', amount: p.amount };
  expect((await walletHandler(body)).status).toBe(200);
  await expect(outcome(p)).resolves.toEqual({
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
    (await stack.client.workflow.getHandle(paidPaymentWorkflowId(p.paymentId)).describe()).searchAttributes.OrderId,
  ).toEqual([p.orderId]);
});

it('two merchants with one order id: each wallet post confirms its own payment, one row each', async () => {
  const orderId = uniq('ORD-shared');
  const [a, b] = [await newKey(stack.db), await newKey(stack.db)];
  const pa = await cardPayment(stack, { apiKey: a.key, orderId, amount: 21 });
  const pb = await cardPayment(stack, { apiKey: b.key, orderId, amount: 22 });
  expect(pa.paymentId).not.toBe(pb.paymentId);
  for (const [p, user] of [
    [pa, 'u-a'],
    [pb, 'u-b'],
  ] as const) {
    // the card network names the payment (the order id alone would be ambiguous: 409)
    const paid = await post(
      stack.app,
      '/cardnetcallback',
      headerSigned(stack.config, 'CARDNET', 'json', {
        orderId,
        paymentId: p.paymentId,
        success: true,
        userId: user,
        amount: p.amount,
      }),
    );
    expect(paid.status).toBe(200);
    await expect(resultOf(stack, p.workflowId)).resolves.toMatchObject({ status: 'paid' });
    const body = { orderId, paymentId: p.paymentId, success: true, userId: user, amount: p.amount };
    expect((await walletHandler(body)).status).toBe(200);
    await expect(outcome(p)).resolves.toEqual({
      orderId,
      paymentId: p.paymentId,
      status: 'confirmed',
      reason: 'payment confirmed paid',
    });
  }
  const rows = await stack.db('paid_orders').where({ order_id: orderId }).orderBy('amount_satang');
  expect(rows.map((r) => [r.payment_id, r.status, r.amount_satang])).toEqual([
    [pa.paymentId, 'confirmed', '2100'],
    [pb.paymentId, 'confirmed', '2200'],
  ]);
});

it('waits for the verified callback when the handler is first', async () => {
  const p = await cardPayment(stack, { amount: 40 });
  expect(
    (await walletHandler({ orderId: p.orderId, payment_id: p.paymentId, success: true, userId: 'u-2' })).status,
  ).toBe(200);
  await waitFor(
    () =>
      stack.client.workflow
        .getHandle(paidPaymentWorkflowId(p.paymentId))
        .describe()
        .catch(() => undefined),
    5000,
    'processing started',
  );
  expect((await walletGateway(p)).status).toBe(200);
  await expect(outcome(p)).resolves.toMatchObject({ status: 'confirmed' });
});

it.each([
  ['no payment exists for this order', async () => ({ orderId: uniq('ord'), paymentId: 'pay_x', amount: 10 })],
  [
    'several payments use order id ORD-two and none is payment pay_x',
    async () => {
      // two merchants' payments of one order id: the post names neither, so neither is taken for it
      const orderId = uniq('ORD-two');
      const [a, b] = [await newKey(stack.db), await newKey(stack.db)];
      await cardPayment(stack, { apiKey: a.key, orderId, amount: 10 });
      await cardPayment(stack, { apiKey: b.key, orderId, amount: 10 });
      return { orderId, paymentId: 'pay_x', amount: 10 };
    },
  ],
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
  reason = reason.replace('ORD-two', p.orderId);
  const body = { orderId: p.orderId, paymentId: p.paymentId, success: true, userId: 'u-3', amount: p.amount };
  expect((await walletHandler(body)).status).toBe(200);
  // a post that does not name a payment of its order runs apart from paid-order-<paymentId>
  const id = reason.endsWith('window') ? undefined : unmatchedPaidOrderWorkflowId(p.orderId, JSON.stringify(body));
  await expect(outcome(p, id)).resolves.toMatchObject({ orderId: p.orderId, status: 'rejected', reason });
  expect(await paidOrder(p.orderId)).toMatchObject({ status: 'rejected', reason });
  const mail = await waitFor(
    async () => smtp.messages.find((m) => m.subject.includes(p.orderId)),
    10_000,
    'admin e-mail',
  );
  expect(mail.text).toContain(reason);
});
