/**
 * What the orders tests share: a card payment held with capture=false, its authorisation proved
 * to the order's workflow (the provider's callback, as the gateway would signal it).
 */
import { orderWorkflowId } from '../../src/orders';
import { provenResult, uniq, type TestStack } from '../support/stack';
import { request } from '../payments/support';

/** POST /cardpayment capture=false of `estimate` THB, then the proven success result; the order's ids. */
export async function holdCard(stack: TestStack, key: string, estimate: number, prefix: string) {
  const orderId = uniq(prefix);
  const res = await request(stack.app.callback())
    .post('/cardpayment')
    .type('form')
    .set('X-API-Key', key)
    .send({ orderId, userId: 'u-1', amount: String(estimate), token: 'tok_test_visa', capture: 'false' });
  expect(res.status).toBe(200);
  await stack.client.workflow
    .getHandle(orderWorkflowId(orderId))
    .signal(
      'paymentResult',
      provenResult(stack.config, res.body.body.paymentId, { status: 'success', provider: 'card' }),
    );
  return { orderId, paymentId: res.body.body.paymentId as string, chargeId: res.body.body.chargeId as string };
}
