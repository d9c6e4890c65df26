/**
 * The edge (src/app/edge.ts): the payment API's refusals it answers before Koa are the very
 * answers Koa gives (status, body, headers, metrics, access log), and it leaves every request it
 * cannot decide alone to Koa. Which path answered is seen by counting Koa's handleRequest.
 */
import type Koa from 'koa';
import request from 'supertest';
import { requireApiKey, revokeApiKey } from '../../src/http/middleware/api-key';
import Router from '@koa/router';
import { createEdge } from '../../src/app/edge';
import { createRateLimiter, rateLimit } from '../../src/http/middleware/rate-limit';
import { httpRequests, rateLimitRefusals } from '../../src/metrics';
import { newKey } from '../payments/support';
import { afterRevocationNotice, capturingLogger, testConfig, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';
import { createApp } from '../../src/app/app';
import { revocationFeed } from '../../src/http/middleware/key-revocations';

const stack = useTestStack({ worker: false });
// the key cache caches only once its revocation feed listens (src/http/middleware/key-revocations.ts)
beforeAll(() => revocationFeed(stack.db).ready());

/** A gateway with the key cache on (as in production) and a fixed clock; Koa's answers counted. */
function gateway(env: Record<string, string> = {}) {
  const { logger, lines } = capturingLogger();
  const clock = { now: Date.parse('2026-11-24T10:00:00.250Z') };
  const app = createApp({
    config: testConfig({ API_KEY_CACHE_MS: '60000', ...env }),
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger,
    clock: () => clock.now,
  });
  const koa = jest.spyOn(app as unknown as Koa & { handleRequest: () => unknown }, 'handleRequest');
  const handler = app.callback();
  return { handler, koa, lines, clock, get: (path: string) => request(handler).get(path) };
}

type Res = request.Response;
/** What the client sees, less what differs by nature between two answers (Date, a new request id). */
const seen = (r: Res, ignore: string[] = []) => {
  const headers = Object.fromEntries(
    Object.entries(r.headers).filter(([k]) => !['date', 'x-request-id', ...ignore].includes(k)),
  );
  return { status: r.status, headers, body: r.body as unknown, order: Object.keys(r.headers) };
};

const counted = async (c: typeof httpRequests | typeof rateLimitRefusals, labels: Record<string, string>) =>
  (await c.get()).values.find((v) =>
    Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
  )?.value ?? 0;

describe('the edge answers as Koa does', () => {
  it('an unknown key: Koa looks it up once, then the edge refuses it (same 401, headers, metrics, log line)', async () => {
    const g = gateway();
    const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
    const unknown = key.slice(0, -2) + (key.endsWith('xy') ? 'zz' : 'xy'); // well-formed, never issued
    const path = `/checkstatus/${uniq('ORD')}`;
    const labels = { method: 'GET', route: '/checkstatus/:orderId', status: '401' };
    const before = await counted(httpRequests, labels);
    const viaKoa = await g.get(path).set('X-API-Key', unknown).set('X-Request-Id', 'req-a');
    expect(g.koa).toHaveBeenCalledTimes(1);
    const viaEdge = await g.get(path).set('X-API-Key', unknown).set('X-Request-Id', 'req-b');
    expect(g.koa).toHaveBeenCalledTimes(1); // the edge answered
    expect(viaKoa.status).toBe(401);
    expect(viaKoa.body).toEqual({
      statusCode: 401,
      body: { error: 'Invalid API key', code: 'UNAUTHORIZED', details: { reason: 'invalid' } },
    });
    // the address bucket counted both: one fewer left
    expect(Number(viaEdge.headers['x-ratelimit-remaining'])).toBe(Number(viaKoa.headers['x-ratelimit-remaining']) - 1);
    expect(seen(viaEdge, ['x-ratelimit-remaining'])).toEqual(seen(viaKoa, ['x-ratelimit-remaining']));
    expect([viaKoa.headers['x-request-id'], viaEdge.headers['x-request-id']]).toEqual(['req-a', 'req-b']);
    expect(await counted(httpRequests, labels)).toBe(before + 2);
    const logged = g.lines.filter((l) => l.msg === 'request');
    expect(logged).toHaveLength(2);
    // the access line is written without redaction (accessLoggerOf): its keys are these, never a secret's
    for (const l of logged)
      expect(Object.keys(l).sort()).toEqual([
        'level',
        'method',
        'ms',
        'msg',
        'path',
        'requestId',
        'service',
        'status',
        'time',
      ]);
    const { requestId: _a, ms: _ma, time: _ta, ...koaLine } = logged[0];
    const { requestId: _b, ms: _mb, time: _tb, ...edgeLine } = logged[1];
    expect(edgeLine).toEqual(koaLine);
    expect(logged.map((l) => l.requestId)).toEqual(['req-a', 'req-b']);
  });

  it('no key and a malformed key: the edge refuses at once, as Koa does (a query string sends it to Koa)', async () => {
    const g = gateway();
    const path = `/checkstatus/${uniq('ORD')}`;
    for (const set of [{}, { 'X-API-Key': 'not a key' }]) {
      const viaKoa = await g.get(`${path}?x=1`).set(set);
      expect(g.koa).toHaveBeenCalledTimes(1);
      const viaEdge = await g.get(path).set(set);
      expect(g.koa).toHaveBeenCalledTimes(1);
      expect(viaEdge.status).toBe(401);
      expect(seen(viaEdge, ['x-ratelimit-remaining'])).toEqual(seen(viaKoa, ['x-ratelimit-remaining']));
      g.koa.mockClear();
    }
  });

  it('a revoked key, once looked up: the edge refuses it as revoked', async () => {
    const g = gateway();
    const { key, id } = await newKey(stack.db, { scopes: ['payments:read'] });
    // a lookup cached before the revocation's notice arrives counts for nothing, so wait for it
    // (else Koa would rightly look the key up twice)
    const { ms } = await afterRevocationNotice(stack.db, () => revokeApiKey(stack.db, id));
    expect(ms).toBeLessThan(2000);
    const path = `/checkstatus/${uniq('ORD')}`;
    const viaKoa = await g.get(path).set('X-API-Key', key);
    const viaEdge = await g.get(path).set('X-API-Key', key);
    expect(g.koa).toHaveBeenCalledTimes(1);
    expect(viaEdge.body.body.details).toEqual({ reason: 'revoked' });
    expect(seen(viaEdge, ['x-ratelimit-remaining'])).toEqual(seen(viaKoa, ['x-ratelimit-remaining']));
  });

  it('a key over its limit: Postgres refuses it once (Koa), then the edge until the window ends', async () => {
    const g = gateway({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_PER_MINUTE: '100' });
    const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
    const path = `/checkstatus/${uniq('ORD')}`;
    const refusals = await counted(rateLimitRefusals, { limiter: 'payment_api' });
    expect((await g.get(path).set('X-API-Key', key)).status).toBe(404); // admitted: no such payment
    const viaKoa = await g.get(path).set('X-API-Key', key);
    expect(g.koa).toHaveBeenCalledTimes(2);
    const viaEdge = await g.get(path).set('X-API-Key', key);
    expect(g.koa).toHaveBeenCalledTimes(2);
    expect(viaKoa.status).toBe(429);
    expect(viaKoa.headers['retry-after']).toBe('1');
    expect(seen(viaEdge)).toEqual(seen(viaKoa));
    expect(await counted(rateLimitRefusals, { limiter: 'payment_api' })).toBe(refusals + 2);
    // the next second: Koa counts it in Postgres again
    g.clock.now += 1000;
    expect((await g.get(path).set('X-API-Key', key)).status).toBe(404);
    expect(g.koa).toHaveBeenCalledTimes(3);
  });

  it("a refusal's Retry-After counts down: each second's 429 is Koa's (the edge reuses a refusal only for the same second left)", async () => {
    const g = gateway({ RATE_LIMIT_PER_SECOND: '100', RATE_LIMIT_PER_MINUTE: '1' });
    const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
    const path = `/checkstatus/${uniq('ORD')}`;
    expect((await g.get(path).set('X-API-Key', key)).status).toBe(404); // admitted: no such payment
    expect((await g.get(path).set('X-API-Key', key)).status).toBe(429); // Postgres refuses (Koa)
    const waits: string[] = [];
    for (const step of [0, 5000, 0, 20_000]) {
      g.clock.now += step;
      const viaEdge = await g.get(path).set('X-API-Key', key);
      const viaKoa = await g.get(`${path}?x=1`).set('X-API-Key', key); // a query string: Koa's path
      expect(seen(viaEdge)).toEqual(seen(viaKoa));
      waits.push(viaEdge.headers['retry-after'] as string);
    }
    expect(g.koa).toHaveBeenCalledTimes(2 + 4);
    expect(waits).toEqual(['60', '55', '55', '35']); // the clock starts 0.25 s into its minute
  });

  it("a bad key from an address over its limit: the edge's 429 is Koa's", async () => {
    const g = gateway({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_PER_MINUTE: '100' });
    const path = `/checkstatus/${uniq('ORD')}`;
    expect((await g.get(path).set('X-Forwarded-For', '203.0.113.9')).status).toBe(401);
    const viaEdge = await g.get(path);
    const viaKoa = await g.get(`${path}?x=1`);
    expect(g.koa).toHaveBeenCalledTimes(1);
    expect(viaEdge.status).toBe(429);
    expect(seen(viaEdge)).toEqual(seen(viaKoa));
  });
});

describe('the edge leaves to Koa what it cannot decide alone', () => {
  it('a key never looked up, a valid key under its limit, bodies, queries, escapes, other methods and routes', async () => {
    const g = gateway();
    const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
    const fresh = (await newKey(stack.db, { scopes: ['payments:read'] })).key;
    const path = `/checkstatus/${uniq('ORD')}`;
    const sends: [string, () => request.Test][] = [
      ['a valid key (admitted)', () => g.get(path).set('X-API-Key', key)],
      ['the same key again (counted in Postgres)', () => g.get(path).set('X-API-Key', key)],
      ['a key never seen', () => g.get(path).set('X-API-Key', fresh.slice(0, -1) + '0')],
      ['a GET with a body', () => request(g.handler).get(path).set('Content-Type', 'application/json').send('{}')],
      ['a query string', () => g.get(`${path}?a=1`)],
      ['a percent-escape', () => g.get(`/checkstatus/%4F${uniq('RD')}`)],
      ['HEAD', () => request(g.handler).head(path)],
      ['POST', () => request(g.handler).post('/qrpayment').send({})],
      ['a route without a key', () => g.get('/healthz')],
      ['no route', () => g.get(`/nowhere-${uniq('x')}`)],
    ];
    for (const [what, send] of sends) {
      const calls = g.koa.mock.calls.length;
      await send();
      expect({ what, koa: g.koa.mock.calls.length - calls }).toEqual({ what, koa: 1 });
    }
  });
});

it('a fault in the edge before it answers: it leaves the request to Koa (false), and the fault is logged', () => {
  const { logger, lines } = capturingLogger();
  const router = new Router();
  const limited = rateLimit(createRateLimiter({ db: stack.db, perSecond: 10, perMinute: 100 }));
  router.get('/checkstatus/:orderId', limited, requireApiKey('payments:read'), (ctx) => void (ctx.body = {}));
  const keys = Object.assign(async () => ({ status: 'missing' as const }), {
    peek: () => {
      throw new Error('boom');
    },
  });
  const edge = createEdge({ router, keys, logger });
  const req = { method: 'GET', url: '/checkstatus/ORD-1', headers: {}, socket: { remoteAddress: '127.0.0.1' } };
  const res = { headersSent: false, writableEnded: false };
  expect(edge(req as never, res as never)).toBe(false);
  expect(lines.find((l) => l.msg === 'the edge failed on a request')).toMatchObject({ level: 50, path: req.url });
});
