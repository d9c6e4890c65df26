/**
 * The minimal anchor of bench:anchor (bench/minimal/app.ts) does what its comparison assumes, on
 * the tests' Postgres and Temporal: a create inserts its row and starts its workflow; a callback
 * with a wrong HMAC is refused (401) and signals nothing; a signed one pays it, the row says paid
 * and one webhook arrives with a valid HMAC; and its app sends Postgres 2 statements per paid payment.
 */
import { createHmac } from 'node:crypto';
import { Pool } from 'pg';
import { minimalSignature, startMinimal } from '../../bench/minimal/app';
import { createDatabaseIfMissing } from '../../src/stack/postgres';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { testDatabaseUrl, testLogger, uniq, waitFor } from '../support/stack';
import { startReceiver, type Receiver } from '../webhooks/helpers';

const SECRET = 'cb-secret';
const HOOK_SECRET = 'hook-secret';
let minimal: Awaited<ReturnType<typeof startMinimal>>;
let receiver: Receiver;
let pool: Pool;

beforeAll(async () => {
  const name = `talat_minimal_w${process.env.JEST_WORKER_ID ?? '1'}`;
  await createDatabaseIfMissing(process.env.TALAT_TEST_PG_ADMIN_URL!, name);
  receiver = await startReceiver(200);
  installTemporalRuntime(testLogger, 'WARN');
  minimal = await startMinimal({
    databaseUrl: testDatabaseUrl(name),
    temporalAddress: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    taskQueue: uniq('minimal'),
    callbackSecret: SECRET,
    webhook: { url: receiver.url, secret: HOOK_SECRET },
  });
  pool = new Pool({ connectionString: testDatabaseUrl(name), max: 2 });
}, 120_000);
afterAll(async () => {
  await minimal?.stop();
  await pool?.end();
  await receiver?.stop();
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${minimal.base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
const statusOf = async (orderId: string) =>
  (await pool.query('SELECT status FROM minimal_payments WHERE order_id = $1', [orderId])).rows[0]?.status as string;

it('creates, refuses a wrongly signed callback, pays on a signed one and posts one signed webhook', async () => {
  const orderId = uniq('min');
  const before = minimal.statements();
  expect((await post('/payments', JSON.stringify({ orderId, amount: 10 }))).status).toBe(200);
  expect(await statusOf(orderId)).toBe('pending');

  const cb = JSON.stringify({ orderId, status: 'success', amount: 10 });
  expect((await post('/callback', cb, { 'x-signature': minimalSignature('wrong', cb) })).status).toBe(401);
  expect((await post('/callback', cb)).status).toBe(401);
  await new Promise((r) => setTimeout(r, 300));
  expect(await statusOf(orderId)).toBe('pending');
  expect(receiver.log).toHaveLength(0);

  expect((await post('/callback', cb, { 'x-signature': minimalSignature(SECRET, cb) })).status).toBe(200);
  const hook = await waitFor(async () => receiver.log.find((r) => r.body.includes(orderId)), 20_000, 'webhook');
  expect(JSON.parse(hook.body)).toMatchObject({ data: { orderId, status: 'success' } });
  expect(hook.headers['x-signature']).toBe(createHmac('sha256', HOOK_SECRET).update(hook.body).digest('hex'));
  expect(await statusOf(orderId)).toBe('success');
  // INSERT on create, UPDATE by the local activity: its whole Postgres cost (the reads above are this test's own pool)
  expect(minimal.statements() - before).toBe(2);
});
