/**
 * What keeps the hot paths off Postgres (bench:hotpaths): key lookups reused for API_KEY_CACHE_MS
 * (forgotten at once on a revocation notice),
 * storefront data versions reused for STOREFRONT_VERSION_CACHE_MS, anonymous rate-limit buckets
 * counted in memory, and a key refused by the shared limiter refused locally until its window ends.
 */
import { keyLookupCache, revokeApiKey } from '../../src/http/middleware/api-key';
import { revocationFeed } from '../../src/http/middleware/key-revocations';
import { createRateLimiter } from '../../src/http/middleware/rate-limit';
import { cachedVersions } from '../../src/storefront/versions';
import { newKey } from '../payments/support';
import { afterRevocationNotice, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';

const stack = useTestStack({ worker: false });

/** Counts the queries the pool runs. */
function countQueries() {
  let n = 0;
  const on = () => void n++;
  stack.db.on('query', on);
  return { get: () => n, stop: () => stack.db.off('query', on) };
}

it('a key lookup is reused within the TTL (valid and unknown alike); a revocation shows at once, by its notice', async () => {
  const feed = revocationFeed(stack.db);
  await feed.ready();
  const lookup = keyLookupCache(stack.db, 5000, 100, () => 0);
  const { key, id } = await newKey(stack.db, { scopes: ['payments:read'] });
  const unknown = key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a'); // well-formed, never issued
  const q = countQueries();
  expect((await lookup(key)).status).toBe('valid');
  expect((await lookup(key)).status).toBe('valid');
  expect((await lookup(unknown)).status).toBe('invalid');
  expect((await lookup(unknown)).status).toBe('invalid');
  expect(q.get()).toBe(2);
  q.stop();
  // the clock stays within the TTL: only the revocation notice can make the cache forget
  const { ms } = await afterRevocationNotice(stack.db, () => revokeApiKey(stack.db, id));
  expect(ms).toBeLessThan(1000);
  expect(lookup.peek(key)).toBeUndefined();
  expect((await lookup(key)).status).toBe('revoked');
  // TTL 0: every lookup asks
  const fresh = keyLookupCache(stack.db, 0);
  expect((await fresh(key)).status).toBe('revoked');
});

it('nothing is cached while the revocation feed is not listening', async () => {
  let listening = false;
  const feed = { generation: () => (listening ? 1 : undefined), ready: async () => undefined };
  const lookup = keyLookupCache(stack.db, 5000, 100, () => 0, feed);
  const { key } = await newKey(stack.db, { scopes: ['payments:read'] });
  const q = countQueries();
  await lookup(key);
  await lookup(key);
  expect(q.get()).toBe(2);
  listening = true;
  await lookup(key);
  await lookup(key);
  expect(q.get()).toBe(3);
  q.stop();
});

it('the data versions are read once per TTL, one query in flight', async () => {
  let t = 0;
  const versions = cachedVersions(stack.db, 1000, () => t);
  const q = countQueries();
  const [a, b] = await Promise.all([versions(), versions()]);
  expect(a).toBe(b);
  await versions();
  expect(q.get()).toBe(1);
  t = 1000;
  await versions();
  expect(q.get()).toBe(2);
  q.stop();
});

it('anonymous buckets are counted in memory by the same rule; a refused key is refused again without a query until its window ends', async () => {
  let now = Date.UTC(2031, 0, 1, 8, 0, 0);
  const limiter = createRateLimiter({ db: stack.db, clock: () => now, perSecond: 2, perMinute: 1000 });
  const ip = `ip:${uniq('10.0.0')}`;
  const q = countQueries();
  expect((await limiter.consume(ip)).allowed).toBe(true);
  expect((await limiter.consume(ip)).allowed).toBe(true);
  const third = await limiter.consume(ip);
  expect(third).toMatchObject({ allowed: false, limit: 2, window: 'second', retryAfter: 1 });
  expect(q.get()).toBe(0);
  q.stop();
  expect(await stack.db('rate_limits').where({ bucket: ip })).toHaveLength(0);
  now += 1000;
  expect((await limiter.consume(ip)).allowed).toBe(true);

  const key = `key:${uniq('key')}`;
  const k = countQueries();
  expect((await limiter.consume(key)).allowed).toBe(true);
  expect((await limiter.consume(key)).allowed).toBe(true);
  expect(k.get()).toBe(2);
  expect((await limiter.consume(key)).allowed).toBe(false);
  expect((await limiter.consume(key)).allowed).toBe(false);
  expect((await limiter.consume(key)).allowed).toBe(false);
  expect(k.get()).toBe(3); // one refusal from Postgres, then from memory
  now += 1000;
  expect((await limiter.consume(key)).allowed).toBe(true);
  expect(k.get()).toBe(4);
  k.stop();
});
