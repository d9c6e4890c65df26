/**
 * Object-level authorisation across the payment API, per door: merchant B's key on every route
 * that names one of merchant A's objects answers as for an object that does not exist, lists
 * show B nothing of A, every keyed route refuses a request without a key, and a merchant's key
 * cannot use the operator routes. (Bank: http-bank.test.ts; refunds, timelines and the codec:
 * the Temporal suite.)
 */
import request from 'supertest';
import { appRoutes, createApp } from '../../src/app/app';
import { useTestStack } from '../support/servers';
import { testLogger, uniq } from '../support/stack';
import { ALL_SCOPES, newKey } from '../payments/support';

const stack = useTestStack({ worker: false });
let a: string;
let b: string;
let aKeyId: string;
beforeAll(async () => {
  ({ key: a, id: aKeyId } = await newKey(stack.db));
  b = (await newKey(stack.db)).key;
});
const api = () => request(stack.app.callback());
const call = (method: string, path: string): request.Test =>
  (api() as unknown as Record<string, (p: string) => request.Test>)[method.toLowerCase()](path);
const with_ = (key: string, method: string, path: string) => call(method, path).set('X-API-Key', key);

/** A's pending QR payment, written as the payment API writes it (no workflow needed to read it). */
async function paymentOfA(): Promise<string> {
  const orderId = uniq('ord');
  await stack.db('payments').insert({
    id: uniq('pay'),
    order_id: orderId,
    user_id: 'u-1',
    method: 'qr',
    amount_satang: 1000,
    mode: 'sandbox',
    workflow_id: `payment-${orderId}`,
    api_key_id: aKeyId,
  });
  return orderId;
}

it("B reads A's payment status as an order that does not exist", async () => {
  const orderId = await paymentOfA();
  const unknown = uniq('ord');
  const other = await with_(b, 'GET', `/checkstatus/${orderId}`);
  const never = await with_(b, 'GET', `/checkstatus/${unknown}`);
  expect(other.status).toBe(404);
  expect(JSON.stringify(other.body).split(orderId).join('X')).toBe(JSON.stringify(never.body).split(unknown).join('X'));
  expect((await with_(a, 'GET', `/checkstatus/${orderId}`)).status).toBe(200);
});

it("B's lists hold nothing of A", async () => {
  const orderId = await paymentOfA();
  const list = await with_(b, 'GET', '/payments?limit=200');
  expect(list.status).toBe(200);
  expect(JSON.stringify(list.body)).not.toContain(orderId);
  const late = await with_(b, 'GET', '/late-payments?limit=200');
  expect(JSON.stringify(late.body)).not.toContain(orderId);
  expect(JSON.stringify((await with_(a, 'GET', '/payments?limit=200')).body)).toContain(orderId);
});

describe("A's webhook endpoint, under B's key: every route answers 404", () => {
  let ep: string;
  beforeAll(async () => {
    const res = await with_(a, 'POST', '/webhooks/endpoints').send({ url: 'http://127.0.0.1:9/hooks' });
    expect(res.status).toBe(201);
    ep = res.body.body.id;
  });
  it.each([
    ['GET', '', undefined],
    ['PATCH', '', { description: 'mine now' }],
    ['POST', '/rotate-secret', undefined],
    ['GET', '/attempts', undefined],
    ['POST', '/recover', { since: new Date(0).toISOString() }],
    ['DELETE', '', undefined],
  ])('%s /webhooks/endpoints/{id}%s', async (method, tail, body) => {
    const res = await with_(b, method, `/webhooks/endpoints/${ep}${tail}`).send(body);
    expect(res.status).toBe(404);
    const still = await with_(a, 'GET', `/webhooks/endpoints/${ep}`);
    expect(still.status).toBe(200);
    expect(still.body.body.description).not.toBe('mine now');
  });
  it("B's endpoint list does not show it", async () => {
    expect(JSON.stringify((await with_(b, 'GET', '/webhooks/endpoints?limit=200')).body)).not.toContain(ep);
  });
});

it('a merchant key with every merchant scope cannot use the operator (reconciliation) routes', async () => {
  const merchant = (await newKey(stack.db, { scopes: ALL_SCOPES })).key;
  for (const [method, path] of [
    ['GET', '/reconciliation/card/schedule'],
    ['GET', '/reconciliation/card/2026-11-01'],
    ['GET', '/reconciliation/card/2026-11-01/export.csv'],
    ['POST', '/reconciliation/card/2026-11-01/run'],
    ['POST', '/reconciliation/card/schedule/pause'],
    ['POST', '/reconciliation/card/2026-11-01/exceptions/1/resolve'],
  ]) {
    const res = await with_(merchant, method, path).send({});
    expect([403, 404]).toContain(res.status);
    expect(res.status).not.toBe(200);
  }
});

it('every route that takes an API key refuses a request without one (401)', async () => {
  const doc = (await api().get('/openapi.json')).body as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  // the codec's callers (a key or Temporal Web's origin) are the Temporal suite's (codec-*.test.ts)
  const keyed = Object.entries(doc.paths)
    .filter(([path]) => !path.startsWith('/codec/'))
    .flatMap(([path, ops]) =>
      Object.entries(ops)
        // a key is required: ApiKeyAuth, and no empty requirement (GET /metrics: test/http/metrics.test.ts)
        .filter(([, op]) => {
          const reqs = (op.security ?? []).map((s) => Object.keys(s as object));
          return reqs.some((k) => k.includes('ApiKeyAuth')) && !reqs.some((k) => k.length === 0);
        })
        .map(([method]) => ({ method: method.toUpperCase(), path })),
    );
  expect(keyed.length).toBeGreaterThan(20);
  const served = appRoutes(stack.app).map((r) => ({
    method: r.method,
    re: new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}$`),
  }));
  const concrete = (path: string) =>
    path.replace(/\{[^}]+\}/g, (m) => (m === '{provider}' ? 'card' : m === '{date}' ? '2026-11-01' : 'x1'));
  // every keyed path of the document is served (one the app does not have would test nothing)
  const unserved = keyed.filter((k) => !served.some((r) => r.method === k.method && r.re.test(concrete(k.path))));
  expect(unserved).toEqual([]);
  const refused: string[] = [];
  for (const { method, path } of keyed) {
    const res = await call(method, concrete(path)).set('Content-Type', 'application/json').send('{}');
    if (res.status !== 401) refused.push(`${method} ${path}: ${res.status}`);
  }
  expect(refused).toEqual([]);
});

it('production never serves the identity simulator, even with SIMULATORS=on (it believes any login)', async () => {
  const app = createApp({
    config: { ...stack.config, env: 'production', simulators: true },
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger: testLogger,
  });
  const getId = await request(app.callback())
    .post('/dev/identity')
    .set('X-Amz-Target', 'AWSCognitoIdentityService.GetId')
    .send({ IdentityPoolId: 'ap-southeast-1:pool', Logins: { 'talat.dev': 'victim' } });
  expect(getId.status).toBe(404);
  expect(appRoutes(app).map((r) => r.path)).not.toContain('/dev/identity');
});
