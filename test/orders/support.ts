/**
 * What the orders tests share: a card payment held with capture=false, its authorisation proved
 * to the order's workflow (the provider's callback, as the gateway would signal it), and the
 * workflow ids of an order and its top-up as their rows store them (order ids are scoped).
 */
import type { Db } from '../../src/db/knex';
import { orderWorkflowIdOf } from '../../src/orders';
import { provenResult, uniq, type TestStack } from '../support/stack';
import { request } from '../payments/support';

/** The order's workflow id (orders.workflow_id) of a test's order id (each test's ids are unique). */
export async function orderWorkflowOf(db: Db, orderId: string): Promise<string> {
  const rows = await db('orders').where({ order_id: orderId }).pluck('workflow_id');
  if (rows.length !== 1) throw new Error(`order ${orderId}: ${rows.length} orders`);
  return rows[0];
}

/** The top-up payment's workflow id (payments.workflow_id) of an order id's one top-up. */
export async function topUpWorkflowOf(db: Db, orderId: string): Promise<string> {
  const rows = await db('payments')
    .where({ order_id: `${orderId}.topup` })
    .pluck('workflow_id');
  if (rows.length !== 1) throw new Error(`top-up of ${orderId}: ${rows.length} payments`);
  return rows[0];
}

/** POST /cardpayment capture=false of `estimate` THB, then the proven success result; the order's ids. */
export async function holdCard(stack: TestStack, key: string, estimate: number, prefix: string) {
  const orderId = uniq(prefix);
  const res = await request(stack.app.callback())
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount: String(estimate), token: 'tok_test_visa', capture: 'false' });
  expect(res.status).toBe(200);
  const paymentId = res.body.body.paymentId as string;
  await stack.client.workflow
    .getHandle(orderWorkflowIdOf(paymentId))
    .signal('paymentResult', provenResult(stack.config, paymentId, { status: 'success', provider: 'card' }));
  return { orderId, paymentId, chargeId: res.body.body.chargeId as string };
}
