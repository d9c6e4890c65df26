/**
 * The settle step's fast path is ONE statement: the transition (vouched for by its own WHERE) and
 * the webhook's deliveries planned with their endpoints (transitionCtes run first in
 * firstWebhookAttempts' statement). Planned only when the transition matched: a row that
 * disagrees with the workflow's facts gets no transition, no delivery and no POST.
 */
import { createEndpoint } from '../../src/webhooks/endpoints';
import { insertPayment, transitionCtes } from '../../src/payments/repository';
import { createTestStack, statementsOf, uniq, type TestStack } from '../support/stack';
import { startReceiver, type Receiver } from '../webhooks/helpers';
import { newKey } from './support';

let stack: TestStack;
let receiver: Receiver;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  receiver = await startReceiver(200);
});
afterAll(async () => {
  await stack.close();
  await receiver.stop();
});

async function pendingWithEndpoint() {
  const key = await newKey(stack.db);
  await createEndpoint(stack.db, stack.config, { id: key.id, mode: 'sandbox' }, { url: receiver.url });
  const orderId = uniq('settle-plan');
  const p = {
    paymentId: uniq('pay'),
    orderId,
    userId: 'u-1',
    method: 'qr' as const,
    amountSatang: 500,
    mode: 'sandbox' as const,
    workflowId: `payment-${orderId}`,
    customerId: 'c-1',
    apiKeyId: key.id,
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
  };
  await insertPayment(stack.db, p);
  const facts = { workflowId: p.workflowId, orderId, amountSatang: 500, mode: 'sandbox', apiKeyId: key.id };
  const change = { paymentId: p.paymentId, from: 'pending' as const, to: 'paid' as const, reason: 'QR: success' };
  const event = {
    paymentId: p.paymentId,
    orderId,
    status: 'paid' as const,
    amountSatang: 500,
    timestamp: new Date().toISOString(),
    mode: 'sandbox' as const,
    apiKeyId: key.id,
  };
  return { p, facts, change, event };
}
const deliveriesOf = (paymentId: string) => stack.db('webhook_deliveries').where({ payment_id: paymentId });
const statusOf = async (id: string) => (await stack.db('payments').where({ id }).first('status')).status as string;

it('a transition that matches: the row paid, its delivery planned and posted, in one statement before the POST', async () => {
  const { p, facts, change, event } = await pendingWithEndpoint();
  const { sql, result } = await statementsOf(stack.db, () =>
    stack.activities.firstWebhookAttempts(event, transitionCtes(change, facts)),
  );
  expect(result).toMatchObject({ guard: 'qr', retry: [], deferred: [] });
  expect(await statusOf(p.paymentId)).toBe('paid');
  expect(await deliveriesOf(p.paymentId)).toHaveLength(1);
  expect(receiver.log.filter((r) => r.body.includes(p.paymentId))).toHaveLength(1);
  // the plan with the transition, then the attempt's record
  expect(sql).toHaveLength(2);
  expect(sql[0]).toMatch(/UPDATE payments[\s\S]*INSERT INTO webhook_deliveries/);
});

it('a row that disagrees with the facts: no transition, nothing planned, nothing posted', async () => {
  const { p, facts, change, event } = await pendingWithEndpoint();
  const result = await stack.activities.firstWebhookAttempts(
    event,
    transitionCtes(change, { ...facts, amountSatang: 501 }),
  );
  expect(result).toMatchObject({ guard: null, retry: [], deferred: [] });
  expect(await statusOf(p.paymentId)).toBe('pending');
  expect(await deliveriesOf(p.paymentId)).toHaveLength(0);
  expect(receiver.log.filter((r) => r.body.includes(p.paymentId))).toHaveLength(0);
});
