/**
 * Payments and webhook deliveries name their API key and endpoint without a foreign key (migration
 * hot_parents_unlocked: the key's FOR KEY SHARE lock was taken by every payment of the key). What
 * the foreign keys guaranteed still holds: neither row can be deleted or given another id. And the
 * settle step finds an event's pending deliveries by their unique key, not by scanning the pending
 * deliveries of every endpoint.
 */
import { createEndpoint } from '../../src/webhooks/endpoints';
import { createTestStack, uniq, type TestStack } from '../support/stack';
import { newKey } from '../payments/support';
import { startReceiver } from '../webhooks/helpers';

let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
});
afterAll(() => stack.close());

const endpointOf = async (keyId: string) =>
  createEndpoint(stack.db, stack.config, { id: keyId, mode: 'sandbox' }, { url: 'https://hooks.example.net/talat' });

it('an API key and a webhook endpoint keep their row and id; their other columns change as before', async () => {
  const k = await newKey(stack.db);
  const e = await endpointOf(k.id);
  for (const [table, id] of [
    ['api_keys', k.id],
    ['webhook_endpoints', e.id],
  ]) {
    await expect(stack.db(table).where({ id }).delete()).rejects.toThrow(
      new RegExp(`${table} delete refused: its rows are never deleted nor renumbered`),
    );
    await expect(
      stack
        .db(table)
        .where({ id })
        .update({ id: uniq('x') }),
    ).rejects.toThrow(`${table} update refused`);
  }
  // revoking a key and deleting an endpoint are updates of other columns (an id set to itself too)
  expect(await stack.db('api_keys').where({ id: k.id }).update({ revoked_at: new Date(), id: k.id })).toBe(1);
  expect(await stack.db('webhook_endpoints').where({ id: e.id }).update({ deleted_at: new Date() })).toBe(1);
  const err = await stack
    .db('api_keys')
    .where({ id: k.id })
    .delete()
    .catch((x: { code?: string }) => x);
  expect(err).toMatchObject({ code: '23001' }); // restrict_violation
});

it("an event's pending deliveries are found by their unique key, whatever else is pending", async () => {
  const receiver = await startReceiver(200);
  try {
    const k = await newKey(stack.db);
    const e = await createEndpoint(stack.db, stack.config, { id: k.id, mode: 'sandbox' }, { url: receiver.url });
    // a receiver that was down: many pending deliveries of other payments on the same endpoint
    const prefix = uniq('msg');
    await stack.db.raw(
      `INSERT INTO webhook_deliveries (id, endpoint_id, payment_id, order_id, event_status, payload)
       SELECT ? || g, ?, ? || g, 'ord', 'paid', '{}' FROM generate_series(1, 2000) g`,
      [prefix, e.id, prefix],
    );
    // (statistics not refreshed yet, as after any burst: the plan must not depend on them)
    const event = {
      paymentId: uniq('pay'),
      orderId: uniq('ord'),
      status: 'paid' as const,
      amountSatang: 500,
      timestamp: new Date().toISOString(),
      mode: 'sandbox' as const,
      apiKeyId: k.id,
    };
    // the settle step's own statement, as it ran, explained with the same bindings
    const seen: { sql: string; bindings: unknown[] }[] = [];
    const note = (q: { sql: string; bindings: unknown[] }) => seen.push(q);
    stack.db.on('query', note);
    await stack.activities.firstWebhookAttempts(event).finally(() => stack.db.off('query', note));
    const planning = seen.find((q) => /INSERT INTO webhook_deliveries/.test(q.sql))!;
    const { rows } = await stack.db.raw<{ rows: { 'QUERY PLAN': string }[] }>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${planning.sql}`,
      planning.bindings as never,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Index Scan using webhook_deliveries_endpoint_id_payment_id_event_status_unique/);
    expect(plan).not.toMatch(/Index Scan using webhook_deliveries_endpoint_id_state_created_at_index/);
    expect(plan).not.toMatch(/Seq Scan on webhook_deliveries/);
  } finally {
    await receiver.stop();
  }
});
