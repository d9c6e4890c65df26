/**
 * Rate limits per API key, exactly at the boundaries, with an injected clock (nothing sleeps):
 * 100 per second (100th passes, 101st is 429), 1000 per minute (1000th passes, 1001st is 429),
 * headers on every response, Retry-After, and one limit shared by two gateways on one database.
 */
import Koa from 'koa';
import { createApp } from '../../src/app/app';
import { createRateLimiter } from '../../src/http/middleware/rate-limit';
import { testConfig, testLogger, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';
import { newKey, paymentError, request, testClock } from './support';

const stack = useTestStack({ worker: false });

const gateway = (clock: () => number): Koa =>
  createApp({
    config: stack.config,
    db: stack.db,
    temporal: { client: stack.client, taskQueue: stack.taskQueue },
    logger: testLogger,
    clock,
  });

/** A cheap authenticated request that counts: checkstatus of an order that does not exist (404). */
const hit = (app: Koa, key: string) => request(app.callback()).get('/checkstatus/no-such-order').set('X-API-Key', key);

describe('per-second burst: 100', () => {
  it('the 100th request in a second passes, the 101st is 429 RATE_LIMITED with Retry-After; the next second passes', async () => {
    const clock = testClock();
    const app = gateway(clock.now);
    const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
    for (let i = 1; i <= 99; i++) {
      clock.set(clock.start + i * 9); // spread over the first second
      expect((await hit(app, key)).status).toBe(404);
    }
    clock.set(clock.start + 990);
    const hundredth = await hit(app, key);
    expect(hundredth.status).toBe(404);
    expect(hundredth.headers).toMatchObject({
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(clock.start / 1000 + 1),
    });

    clock.set(clock.start + 999);
    const over = await hit(app, key);
    expect(over.status).toBe(429);
    expect(over.body).toEqual(paymentError('RATE_LIMITED', { limit: 100, window: 'second', retryAfterSeconds: 1 }));
    expect(over.body.statusCode).toBe(429);
    expect(over.headers).toMatchObject({
      'retry-after': '1',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '0',
    });

    clock.set(clock.start + 1000);
    const next = await hit(app, key);
    expect(next.status).toBe(404);
    // 100 counted in this minute (the refused one did not count): 899 left in it, 99 in this second
    expect(next.headers).toMatchObject({
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '99',
      'x-ratelimit-reset': String(clock.start / 1000 + 2),
    });
  });

  it('reports the minute window once it is the closer one to running out', async () => {
    const clock = testClock();
    const limiter = createRateLimiter({ db: stack.db, clock: clock.now, perSecond: 100, perMinute: 1000 });
    const bucket = `key:${uniq('k')}`;
    for (let s = 0; s < 9; s++) {
      clock.set(clock.start + s * 1000);
      for (let i = 0; i < 100; i++) await limiter.consume(bucket);
    }
    clock.set(clock.start + 9_000);
    const d = await limiter.consume(bucket); // 901st in the minute: 99 left in it, 99 in the second
    expect(d).toMatchObject({ allowed: true, limit: 1000, remaining: 99, reset: clock.start / 1000 + 60 });
  });
});

describe('per-minute limit: 1000', () => {
  it('the 1000th request in a minute passes, the 1001st is 429 until the minute ends', async () => {
    const clock = testClock();
    const app = gateway(clock.now);
    const k = await newKey(stack.db, { scopes: ['payments:read'] });
    // 999 requests through the limiter the gateway uses (same table, same bucket), 100 a second
    const limiter = createRateLimiter({ db: stack.db, clock: clock.now, perSecond: 100, perMinute: 1000 });
    for (let n = 0; n < 999; n++) {
      clock.set(clock.start + Math.floor(n / 100) * 1000 + (n % 100));
      expect((await limiter.consume(`key:${k.id}`)).allowed).toBe(true);
    }
    clock.set(clock.start + 9_500);
    const thousandth = await hit(app, k.key);
    expect(thousandth.status).toBe(404);
    expect(thousandth.headers).toMatchObject({
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(clock.start / 1000 + 60),
    });

    clock.set(clock.start + 10_000); // a fresh second: only the minute is exhausted
    const over = await hit(app, k.key);
    expect(over.status).toBe(429);
    expect(over.body).toEqual(paymentError('RATE_LIMITED', { limit: 1000, window: 'minute', retryAfterSeconds: 50 }));
    expect(over.headers).toMatchObject({
      'retry-after': '50',
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '0',
    });

    clock.set(clock.start + 59_999);
    expect((await hit(app, k.key)).status).toBe(429);
    clock.set(clock.start + 60_000);
    const fresh = await hit(app, k.key);
    expect(fresh.status).toBe(404);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('99');
  });
});

describe('limits are per key and shared by gateways', () => {
  it('another key has its own budget', async () => {
    const clock = testClock();
    const app = gateway(clock.now);
    const a = await newKey(stack.db, { scopes: ['payments:read'] });
    const b = await newKey(stack.db, { scopes: ['payments:read'] });
    const limiter = createRateLimiter({ db: stack.db, clock: clock.now, perSecond: 100, perMinute: 1000 });
    for (let i = 0; i < 100; i++) await limiter.consume(`key:${a.id}`);
    expect((await hit(app, a.key)).status).toBe(429);
    expect((await hit(app, b.key)).status).toBe(404);
  });

  it('two gateway processes on one database admit exactly 100 of 150 concurrent requests in a second', async () => {
    const clock = testClock();
    const one = gateway(clock.now);
    const two = gateway(clock.now);
    const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
    clock.set(clock.start + 500);
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => hit(i % 2 ? one : two, key)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 404)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    const remaining = results.filter((r) => r.status === 404).map((r) => Number(r.headers['x-ratelimit-remaining']));
    expect(new Set(remaining).size).toBe(100); // every admitted request saw its own count
  });
});

describe('calls without a key', () => {
  it('are limited per client address, read from X-Forwarded-For only behind a trusted proxy', async () => {
    const clock = testClock();
    const config = testConfig({ RATE_LIMIT_PER_SECOND: '2', TRUSTED_PROXIES: '127.0.0.0/8,::1/128' });
    const app = createApp({
      config,
      db: stack.db,
      temporal: { client: stack.client, taskQueue: stack.taskQueue },
      logger: testLogger,
      clock: clock.now,
    });
    const n = Math.floor(Math.random() * 250) + 1;
    const from = (addr: string) =>
      request(app.callback()).post('/cardpayment').type('form').set('X-Forwarded-For', addr).send({});
    const a = `198.51.100.${n}`;
    const b = `203.0.113.${n}`;
    expect((await from(a)).status).toBe(400); // counted, then refused for its empty body
    expect((await from(a)).status).toBe(400);
    const third = await from(a);
    expect(third.status).toBe(429);
    expect(third.body).toEqual(paymentError('RATE_LIMITED', { window: 'second' }));
    expect((await from(b)).status).toBe(400); // another client, its own budget
  });
});

describe('headers on every response', () => {
  it('success, client errors and 429 all carry X-RateLimit-*', async () => {
    const { key } = await newKey(stack.db, { scopes: ['payments:read', 'cost:read'] });
    const responses = [
      await request(stack.app.callback()).get('/checkstatus/no-such').set('X-API-Key', key),
      await request(stack.app.callback()).get('/checkstatus/bad%20id').set('X-API-Key', key),
      await request(stack.app.callback()).post('/calculate-cost').set('X-API-Key', key).send({}),
      await request(stack.app.callback()).post('/qrpayment').set('X-API-Key', key).send({}),
      await request(stack.app.callback()).post('/cardpayment').type('form').send({}),
    ];
    expect(responses.map((r) => r.status)).toEqual([404, 400, 400, 403, 400]);
    for (const r of responses) {
      expect(Number(r.headers['x-ratelimit-limit'])).toBeGreaterThan(0);
      expect(Number(r.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
      expect(Number(r.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
    }
  });
});
