/**
 * A key's rate-limit upserts are coalesced: while one is in flight, the key's later requests wait
 * and go together as one upsert counting all of them, decided in arrival order. The limit stays
 * exact (within one gateway and across gateways on one database), each request is told its own
 * Remaining and Reset, a refused request counts in no window, and a burst costs fewer statements
 * than requests. The clock is injected; nothing sleeps.
 */
import type { Db } from '../../src/db/knex';
import { createRateLimiter, type RateDecision } from '../../src/http/middleware/rate-limit';
import { statementsOf, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';
import { testClock } from './support';

const stack = useTestStack({ worker: false });

const limiterOn = (clock: () => number, perSecond = 100, perMinute = 1000, db: Db = stack.db) =>
  createRateLimiter({ db, clock, perSecond, perMinute });

const upserts = (sql: string[]) => sql.filter((s) => /rate_limits/.test(s));
const remainingOf = (ds: RateDecision[]) => ds.filter((d) => d.allowed).map((d) => d.remaining);

describe('one gateway, concurrent requests on one key', () => {
  it('admits exactly perSecond of n in one second window, the first ones in arrival order, each with its own Remaining', async () => {
    const clock = testClock();
    const limiter = limiterOn(clock.now);
    const bucket = `key:${uniq('k')}`;
    clock.set(clock.start + 500);
    const ds = await Promise.all(Array.from({ length: 250 }, () => limiter.consume(bucket)));

    expect(ds.slice(0, 100).every((d) => d.allowed)).toBe(true);
    expect(ds.slice(100).every((d) => !d.allowed)).toBe(true);
    // the i-th admitted request is the (i+1)-th counted in this second: 99, 98, ... 0 left
    expect(remainingOf(ds)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    for (const d of ds.slice(0, 100))
      expect(d).toMatchObject({ limit: 100, reset: clock.start / 1000 + 1, retryAfter: 0, window: 'second' });
    for (const d of ds.slice(100))
      expect(d).toEqual({
        allowed: false,
        limit: 100,
        remaining: 0,
        reset: clock.start / 1000 + 1,
        retryAfter: 1,
        window: 'second',
      });

    // the 150 refused counted in neither window: 100 in this minute, so 899 left after the next
    const row = await stack.db('rate_limits').where({ bucket }).first();
    expect(row).toMatchObject({ sec_count: 100, min_count: 100 });
    clock.set(clock.start + 1000);
    const next = await limiter.consume(bucket);
    expect(next).toMatchObject({ allowed: true, limit: 100, remaining: 99, reset: clock.start / 1000 + 2 });
    expect(await stack.db('rate_limits').where({ bucket }).first()).toMatchObject({ sec_count: 1, min_count: 101 });
  });

  it('a burst of concurrent requests costs fewer statements than requests: one in flight, the rest as one batch', async () => {
    const clock = testClock();
    const limiter = limiterOn(clock.now);
    const bucket = `key:${uniq('k')}`;
    clock.set(clock.start + 100);
    const { sql, result } = await statementsOf(stack.db, () =>
      Promise.all(Array.from({ length: 20 }, () => limiter.consume(bucket))),
    );
    // the first request's upsert, then the 19 that waited for it, together (the old code: 20)
    expect(upserts(sql)).toHaveLength(2);
    expect(sql).toHaveLength(2);
    expect(result.every((d) => d.allowed)).toBe(true);
    expect(remainingOf(result)).toEqual(Array.from({ length: 20 }, (_, i) => 99 - i));
  });

  it('a batch that queued behind the refusing upsert is answered from the refusal, without a statement', async () => {
    const clock = testClock();
    const limiter = limiterOn(clock.now, 1);
    const bucket = `key:${uniq('k')}`;
    clock.set(clock.start + 300);
    const { sql, result } = await statementsOf(stack.db, async () => {
      const a = limiter.consume(bucket);
      const b = limiter.consume(bucket); // waits for a's upsert, then is sent (and refused)
      const first = await a;
      // b's upsert is in flight now: c and d wait for it
      const rest = await Promise.all([b, limiter.consume(bucket), limiter.consume(bucket)]);
      return [first, ...rest];
    });
    expect(result.map((d) => d.allowed)).toEqual([true, false, false, false]);
    for (const d of result.slice(1))
      expect(d).toMatchObject({ limit: 1, remaining: 0, retryAfter: 1, window: 'second' });
    expect(sql).toHaveLength(2);
  });

  it('a failed statement fails every request of its batch; the next batch is sent again', async () => {
    const clock = testClock();
    let calls = 0;
    // the limiter's statement takes a connection of db.client (src/db/prepared.ts): the second fails
    const real = stack.db.client as { acquireConnection(): Promise<unknown> };
    const client = Object.create(real) as typeof real;
    client.acquireConnection = () => {
      calls++;
      if (calls === 2) return Promise.reject(new Error('connection lost'));
      return real.acquireConnection();
    };
    const failing = { client, isTransaction: false } as unknown as Db;
    const limiter = limiterOn(clock.now, 100, 1000, failing);
    const bucket = `key:${uniq('k')}`;
    clock.set(clock.start + 200);
    const first = limiter.consume(bucket);
    const batch = Array.from({ length: 5 }, () => limiter.consume(bucket));
    expect(await first).toMatchObject({ allowed: true, remaining: 99 });
    const settled = await Promise.allSettled(batch);
    expect(settled.map((s) => s.status)).toEqual(Array(5).fill('rejected'));
    for (const s of settled) expect((s as PromiseRejectedResult).reason).toEqual(new Error('connection lost'));
    // the failed batch counted nothing; the key works again
    expect(await limiter.consume(bucket)).toMatchObject({ allowed: true, remaining: 98 });
    expect(calls).toBe(3);
  });
});

describe('two gateways on one database', () => {
  it('stay exact together: 100 of 300 interleaved concurrent requests, each admitted one with its own count', async () => {
    const clock = testClock();
    const one = limiterOn(clock.now);
    const two = limiterOn(clock.now);
    const bucket = `key:${uniq('k')}`;
    clock.set(clock.start + 700);
    const ds = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 ? one : two).consume(bucket)));
    expect(ds.filter((d) => d.allowed)).toHaveLength(100);
    expect(remainingOf(ds).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    for (const d of ds.filter((x) => !x.allowed)) expect(d).toMatchObject({ limit: 100, remaining: 0, retryAfter: 1 });
    expect(await stack.db('rate_limits').where({ bucket }).first()).toMatchObject({ sec_count: 100, min_count: 100 });
  });

  it('the minute limit too, when it binds before the second one', async () => {
    const clock = testClock();
    const one = limiterOn(clock.now, 100, 150);
    const two = limiterOn(clock.now, 100, 150);
    const bucket = `key:${uniq('k')}`;
    const burst = () => Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? one : two).consume(bucket)));
    clock.set(clock.start + 10);
    expect((await burst()).filter((d) => d.allowed)).toHaveLength(100);
    clock.set(clock.start + 1_010);
    const ds = await burst();
    expect(ds.filter((d) => d.allowed)).toHaveLength(50);
    expect(remainingOf(ds).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    for (const d of ds.filter((x) => x.allowed))
      expect(d).toMatchObject({ limit: 150, reset: clock.start / 1000 + 60, window: 'minute' });
    for (const d of ds.filter((x) => !x.allowed))
      expect(d).toEqual({
        allowed: false,
        limit: 150,
        remaining: 0,
        reset: clock.start / 1000 + 60,
        retryAfter: 59,
        window: 'minute',
      });
    expect(await stack.db('rate_limits').where({ bucket }).first()).toMatchObject({ min_count: 150 });
  });
});

describe('windows and their boundaries', () => {
  it('a batch is counted in the window of the moment it is sent: the queue crosses into the next second', async () => {
    const clock = testClock();
    const limiter = limiterOn(clock.now, 3);
    const bucket = `key:${uniq('k')}`;
    clock.set(clock.start + 999);
    const first = limiter.consume(bucket); // sent at once, in second 0
    const queued = Array.from({ length: 5 }, () => limiter.consume(bucket)); // wait for it
    clock.set(clock.start + 1000); // before the first upsert returns: the batch goes in second 1
    expect(await first).toMatchObject({ allowed: true, remaining: 2, reset: clock.start / 1000 + 1 });
    const ds = await Promise.all(queued);
    expect(ds.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(remainingOf(ds)).toEqual([2, 1, 0]);
    for (const d of ds) expect(d.reset).toBe(clock.start / 1000 + 2);
    expect(ds[3]).toMatchObject({ limit: 3, retryAfter: 1, window: 'second' });
    expect(await stack.db('rate_limits').where({ bucket }).first()).toMatchObject({ sec_count: 3, min_count: 4 });
  });

  it('the minute window: batches fill it to exactly perMinute, refusals are cached until it ends, then it starts afresh', async () => {
    const clock = testClock();
    const limiter = limiterOn(clock.now, 100, 250);
    const bucket = `key:${uniq('k')}`;
    const burst = (n: number) => Promise.all(Array.from({ length: n }, () => limiter.consume(bucket)));
    for (const s of [0, 1]) {
      clock.set(clock.start + s * 1000);
      expect((await burst(100)).every((d) => d.allowed)).toBe(true);
    }
    clock.set(clock.start + 2_000);
    const ds = await burst(100);
    // 200 counted in the minute: 50 more pass, each told the minute window (closer to running out)
    expect(ds.slice(0, 50).every((d) => d.allowed)).toBe(true);
    expect(remainingOf(ds)).toEqual(Array.from({ length: 50 }, (_, i) => 49 - i));
    for (const d of ds.slice(0, 50))
      expect(d).toMatchObject({ limit: 250, window: 'minute', reset: clock.start / 1000 + 60 });
    for (const d of ds.slice(50))
      expect(d).toMatchObject({ allowed: false, limit: 250, retryAfter: 58, window: 'minute' });

    clock.set(clock.start + 59_999);
    const { sql, result: late } = await statementsOf(stack.db, () => burst(10));
    expect(late.every((d) => !d.allowed && d.retryAfter === 1 && d.window === 'minute')).toBe(true);
    expect(sql).toHaveLength(0); // the refusal is cached until the minute ends

    clock.set(clock.start + 60_000);
    const fresh = await burst(3);
    expect(fresh.map((d) => d.allowed)).toEqual([true, true, true]);
    expect(remainingOf(fresh)).toEqual([99, 98, 97]);
    expect(fresh[0]).toMatchObject({ limit: 100, window: 'second', reset: clock.start / 1000 + 61 });
    expect(await stack.db('rate_limits').where({ bucket }).first()).toMatchObject({ sec_count: 3, min_count: 3 });
  });
});
