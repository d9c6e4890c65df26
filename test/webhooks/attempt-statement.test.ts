/**
 * A webhook attempt is recorded (the attempt row and the delivery's counters and state) by ONE
 * statement, no BEGIN/COMMIT round trips (was four: BEGIN, INSERT, UPDATE, COMMIT); a delivered
 * attempt marks its delivery delivered, a failed one leaves it pending with the error, and each
 * counts once.
 */
import { createActivities } from '../../activities';
import { sandboxProviders } from '../../src/simulators/providers';
import { createTestStack, statementsOf, testConfig, testLogger, type TestStack } from '../support/stack';
import { apiKey, paidQrEvent, registerEndpoint, startReceiver, type Receiver } from './helpers';

let stack: TestStack;
let up: Receiver;
let down: Receiver;
beforeAll(async () => {
  stack = await createTestStack({ queues: ['payments'] });
  up = await startReceiver(200);
  down = await startReceiver(500);
});
afterAll(async () => {
  await stack.close();
  await up.stop();
  await down.stop();
});

async function paidEventTo(url: string) {
  const key = await apiKey(stack);
  await registerEndpoint(stack, key.key, { url });
  return paidQrEvent(stack, key);
}

const activities = () =>
  createActivities({
    db: stack.db,
    config: testConfig(),
    logger: testLogger,
    sandbox: sandboxProviders({ db: stack.db }),
  });

it('a delivered first attempt is recorded in one statement, without a transaction', async () => {
  const event = await paidEventTo(up.url);
  const a = activities();
  const { sql, result } = await statementsOf(stack.db, () => a.firstWebhookAttempts(event));
  expect(result.retry).toEqual([]);
  expect(up.log.filter((r) => r.body.includes(event.orderId))).toHaveLength(1);
  expect(sql.join(';')).not.toMatch(/\b(BEGIN|COMMIT)\b/i);
  // the plan (endpoints, deliveries, the pending ones with their endpoints) and the record (issue 41: was 5)
  expect(sql).toHaveLength(2);
  const d = await stack.db('webhook_deliveries').where({ payment_id: event.paymentId }).first();
  expect(d).toMatchObject({ state: 'delivered', attempts: 1, last_status_code: 200, last_error: null });
  expect(d.delivered_at).not.toBeNull();
  const attempts = await stack.db('webhook_attempts').where({ delivery_id: d.id });
  expect(attempts).toHaveLength(1);
  expect(attempts[0]).toMatchObject({ attempt: 1, kind: 'automatic', status_code: 200, error: null });
});

it('the one-statement plan is idempotent: a settle step again plans no second delivery and posts nothing', async () => {
  const event = await paidEventTo(down.url);
  const a = activities();
  const first = await a.firstWebhookAttempts(event);
  expect(first.retry).toHaveLength(1);
  const again = await a.firstWebhookAttempts(event);
  // attempted before: left to the retries, not attempted twice
  expect(again).toMatchObject({ retry: first.retry, deferred: [] });
  expect(await stack.db('webhook_deliveries').where({ payment_id: event.paymentId }).pluck('id')).toEqual(first.retry);
  expect(down.log.filter((r) => r.body.includes(event.orderId))).toHaveLength(1);
  expect(first.retry[0]).toMatch(/^msg_[0-9a-f]{32}$/);
});

it('a failed attempt is recorded with its error and leaves the delivery pending', async () => {
  const event = await paidEventTo(down.url);
  const a = activities();
  const first = await a.firstWebhookAttempts(event);
  expect(first.retry).toHaveLength(1);
  const d = await stack.db('webhook_deliveries').where({ id: first.retry[0] }).first();
  expect(d).toMatchObject({ state: 'pending', attempts: 1, last_status_code: 500, last_error: 'HTTP 500' });
  expect(d.delivered_at).toBeNull();
  const again = await a.attemptWebhookDelivery({ deliveryId: d.id, attempt: 2, kind: 'automatic' });
  expect(again.ok).toBe(false);
  const after = await stack.db('webhook_deliveries').where({ id: d.id }).first();
  expect(after.attempts).toBe(2);
  expect(await stack.db('webhook_attempts').where({ delivery_id: d.id }).orderBy('attempt').pluck('attempt')).toEqual([
    1, 2,
  ]);
});
