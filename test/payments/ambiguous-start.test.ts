/**
 * A creation whose workflow start failed ambiguously (a deadline or a dropped connection while
 * Temporal was being restarted: the start may have reached the server). The gateway answered 503
 * and undid the new payments row; the merchant retries. Found by `npm run chaos`: with a random
 * payment id the retry wrote a row under another id, found the running workflow (whose input had
 * the first id), and that payment stayed pending for ever. The payment id is now derived from the
 * order, so the retry's row carries the id the workflow holds, and the payment settles.
 */
import { orderPaymentId, scopedPaymentId } from '../../src/ids';
import { removeUnstartedPayment } from '../../src/payments/repository';
import { createTestStack, provenResult, uniq, type TestStack } from '../support/stack';
import { newKey, request, rowOf } from './support';
import { paymentHandle } from './support';

let stack: TestStack;
let key: string;
beforeAll(async () => {
  stack = await createTestStack();
  key = (await newKey(stack.db)).key;
});
afterAll(() => stack.close());

const post = (body: Record<string, unknown>) =>
  request(stack.app.callback()).post('/qrpayment').set('X-API-Key', key).send(body);

it('a retry after an undone row whose workflow did start gets the same payment id, and the payment settles', async () => {
  const orderId = uniq('ambiguous');
  const body = { orderId, userId: 'u-1', amount: 64, customerId: 'c-1' };
  const first = await post(body);
  expect(first.status).toBe(200);
  const paymentId = first.body.body.paymentId as string;
  expect(paymentId).toMatch(/^pay_[0-9a-f]{32}$/);

  // what the gateway does when the start call fails though the workflow was in fact started
  await removeUnstartedPayment(stack.db, paymentId);
  expect(await rowOf(stack.db, orderId)).toBeUndefined();

  const retry = await post(body);
  expect(retry.status).toBe(200);
  expect(retry.body.body.paymentId).toBe(paymentId);

  const handle = await paymentHandle(stack, orderId);
  await handle.signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'qr' }));
  await expect(handle.result()).resolves.toEqual({ paymentId, orderId, status: 'paid' });
  expect((await rowOf(stack.db, orderId)).status).toBe('paid');
});

it('payment ids are the form of any other id, differ per order, scope and secret', () => {
  const s1 = 'secret-one-0000000000000000000000000';
  const a = scopedPaymentId(s1, 'key_a', 'live', 'ORD-1');
  expect(a).toMatch(/^pay_[0-9a-f]{32}$/);
  expect(scopedPaymentId(s1, 'key_a', 'live', 'ORD-2')).not.toBe(a);
  expect(scopedPaymentId(s1, 'key_b', 'live', 'ORD-1')).not.toBe(a);
  expect(scopedPaymentId(s1, 'key_a', 'sandbox', 'ORD-1')).not.toBe(a);
  expect(scopedPaymentId(s1, null, 'live', 'ORD-1')).not.toBe(a);
  expect(scopedPaymentId('secret-two-0000000000000000000000000', 'key_a', 'live', 'ORD-1')).not.toBe(a);
  expect(orderPaymentId(s1, 'ORD-1')).not.toBe(a);
});
