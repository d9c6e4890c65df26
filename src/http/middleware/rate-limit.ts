/**
 * Rate limits of the payment API: per API key (or per client address for calls without a valid
 * key), RATE_LIMIT_PER_MINUTE (1000) per minute and RATE_LIMIT_PER_SECOND (100) per second.
 *
 * Contract:
 *  - Fixed windows aligned to the clock (second and minute). A request is admitted when both
 *    windows have room; an admitted request counts in both, a refused one in neither.
 *  - The counters of API keys live in Postgres (table rate_limits) and are updated by one atomic
 *    upsert per request, so any number of gateway processes on one database enforce one limit
 *    together. Once a key is refused, this gateway refuses it again without asking Postgres
 *    until the refusing window ends (the answer Postgres would give).
 *  - Callers without a valid key (bucketed by client address) are counted in this gateway's
 *    memory, by the same rule: a flood of bad keys or anonymous calls costs no database write.
 *    With N gateways an address may get up to N times the limit.
 *  - Every response of a limited route carries X-RateLimit-Limit, X-RateLimit-Remaining and
 *    X-RateLimit-Reset (unix seconds). They describe the window closest to running out (as the
 *    IETF RateLimit header draft does with several policies): usually the one-second burst
 *    window, the minute window once fewer than 100 requests are left in it.
 *  - A refused request is 429 RATE_LIMITED with Retry-After (whole seconds until it would pass).
 *  - The clock is injected (tests move it; nothing sleeps).
 */
import type { Context, Middleware, Next } from 'koa';
import { clientAddress, compileCidrs, formatAddress } from '../ip';
import type { Db } from '../../db/knex';
import { AppError, ErrorCode } from '../../domain/errors';

export type Clock = () => number;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** unix seconds at which the reported window resets */
  reset: number;
  /** seconds until a refused request would be admitted */
  retryAfter: number;
  window: 'second' | 'minute';
}

export interface RateLimiter {
  consume(bucket: string): Promise<RateDecision>;
}

export function createRateLimiter(opts: { db: Db; clock?: Clock; perSecond: number; perMinute: number }): RateLimiter {
  const { db, perSecond, perMinute } = opts;
  const clock = opts.clock ?? Date.now;
  if (!Number.isInteger(perSecond) || !Number.isInteger(perMinute) || perSecond < 1 || perMinute < 1)
    throw new Error('rate limits must be positive integers');

  // Every SET expression sees the row as it was, so s0/m0 (the counts in the current windows
  // before this request) and ok are spelled out where needed. Values other than the bucket are
  // integers computed here, inlined after validation.
  const upsert = (secWindow: number, minWindow: number) => {
    const s0 = `(CASE WHEN EXCLUDED.sec_window <= rl.sec_window THEN rl.sec_count ELSE 0 END)`;
    const m0 = `(CASE WHEN EXCLUDED.min_window <= rl.min_window THEN rl.min_count ELSE 0 END)`;
    const ok = `(${s0} < ${perSecond} AND ${m0} < ${perMinute})`;
    return `
      INSERT INTO rate_limits AS rl (bucket, sec_window, sec_count, min_window, min_count, allowed, updated_at)
      VALUES (?, ${secWindow}, 1, ${minWindow}, 1, true, now())
      ON CONFLICT (bucket) DO UPDATE SET
        sec_window = GREATEST(rl.sec_window, EXCLUDED.sec_window),
        min_window = GREATEST(rl.min_window, EXCLUDED.min_window),
        sec_count = ${s0} + (CASE WHEN ${ok} THEN 1 ELSE 0 END),
        min_count = ${m0} + (CASE WHEN ${ok} THEN 1 ELSE 0 END),
        allowed = ${ok},
        updated_at = now()
      RETURNING sec_window, sec_count, min_window, min_count, allowed`;
  };

  type Counted = {
    sec_window: number | string;
    sec_count: number;
    min_window: number | string;
    min_count: number;
    allowed: boolean;
  };
  /** The same rule in this process's memory (anonymous buckets); bounded, the stalest go first. */
  const local = new Map<string, Counted>();
  const countLocally = (bucket: string, secWindow: number, minWindow: number): Counted => {
    const prev = local.get(bucket);
    const s0 = prev && Number(prev.sec_window) >= secWindow ? prev.sec_count : 0;
    const m0 = prev && Number(prev.min_window) >= minWindow ? prev.min_count : 0;
    const ok = s0 < perSecond && m0 < perMinute;
    const next = {
      sec_window: Math.max(secWindow, Number(prev?.sec_window ?? 0)),
      min_window: Math.max(minWindow, Number(prev?.min_window ?? 0)),
      sec_count: s0 + (ok ? 1 : 0),
      min_count: m0 + (ok ? 1 : 0),
      allowed: ok,
    };
    local.delete(bucket);
    local.set(bucket, next);
    if (local.size > 100_000) local.delete(local.keys().next().value!);
    return next;
  };
  /** Shared buckets refused by Postgres: the refusal, until the window that refused ends. */
  const refused = new Map<string, { until: number; r: Counted }>();

  return {
    async consume(bucket: string): Promise<RateDecision> {
      const now = clock();
      const secWindow = Math.floor(now / 1000);
      const minWindow = Math.floor(now / 60_000);
      let r: Counted;
      const block = refused.get(bucket);
      if (!bucket.startsWith('key:')) r = countLocally(bucket, secWindow, minWindow);
      else if (block && now < block.until) r = block.r;
      else {
        if (block) refused.delete(bucket);
        const { rows } = await db.raw<{ rows: Counted[] }>(upsert(secWindow, minWindow), [bucket]);
        r = rows[0];
        if (!r.allowed) {
          const minuteBlocks = r.min_count >= perMinute;
          refused.set(bucket, {
            until: minuteBlocks ? (Number(r.min_window) + 1) * 60_000 : (Number(r.sec_window) + 1) * 1000,
            r,
          });
          if (refused.size > 10_000) refused.delete(refused.keys().next().value!);
        }
      }
      const secResetMs = (Number(r.sec_window) + 1) * 1000;
      const minResetMs = (Number(r.min_window) + 1) * 60_000;
      const secLeft = Math.max(0, perSecond - r.sec_count);
      const minLeft = Math.max(0, perMinute - r.min_count);
      const untilMs = (t: number) => Math.max(1, Math.ceil((t - now) / 1000));
      if (!r.allowed) {
        const minuteBlocks = r.min_count >= perMinute;
        return {
          allowed: false,
          limit: minuteBlocks ? perMinute : perSecond,
          remaining: 0,
          reset: Math.ceil((minuteBlocks ? minResetMs : secResetMs) / 1000),
          retryAfter: untilMs(minuteBlocks ? minResetMs : secResetMs),
          window: minuteBlocks ? 'minute' : 'second',
        };
      }
      const second = secLeft < minLeft;
      return {
        allowed: true,
        limit: second ? perSecond : perMinute,
        remaining: second ? secLeft : minLeft,
        reset: Math.ceil((second ? secResetMs : minResetMs) / 1000),
        retryAfter: 0,
        window: second ? 'second' : 'minute',
      };
    },
  };
}

/**
 * Count the request, set the X-RateLimit-* headers, refuse with 429 when over the limit.
 * The bucket is the request's valid API key, else the client address (X-Forwarded-For believed
 * only from `trustedProxies`, as the callback API does).
 */
export function rateLimit(
  limiter: RateLimiter,
  opts: {
    trustedProxies?: readonly string[];
    /** the bucket of a request, or undefined when it is not limited (an allow-listed address); default: API key, else address */
    bucketOf?: (ctx: Context) => Promise<string | undefined> | string | undefined;
  } = {},
): Middleware {
  const proxies = compileCidrs(opts.trustedProxies ?? []);
  // the address bucket is a pure function of the peer, X-Forwarded-For and the (fixed) trusted
  // proxies: worked out once per pair, not parsed again on every request (bounded)
  const addressBuckets = new Map<string, string>();
  const addressBucketOf = (peer: string | undefined, forwardedFor: string) => {
    const pair = `${peer}|${forwardedFor}`;
    let bucket = addressBuckets.get(pair);
    if (bucket === undefined) {
      bucket = `ip:${formatAddress(clientAddress(peer, forwardedFor || undefined, proxies))}`;
      addressBuckets.set(pair, bucket);
      if (addressBuckets.size > 10_000) addressBuckets.delete(addressBuckets.keys().next().value!);
    }
    return bucket;
  };
  const bucketOf =
    opts.bucketOf ??
    (async (ctx: Context): Promise<string> => {
      const found = ctx.state.lookupApiKey ? await ctx.state.lookupApiKey() : undefined;
      if (found?.status === 'valid') return `key:${found.key.id}`;
      return addressBucketOf(ctx.req.socket.remoteAddress, ctx.get('X-Forwarded-For'));
    });
  return async (ctx: Context, next: Next) => {
    const bucket = await bucketOf(ctx);
    if (bucket === undefined) return next();
    const d = await limiter.consume(bucket);
    ctx.set('X-RateLimit-Limit', String(d.limit));
    ctx.set('X-RateLimit-Remaining', String(d.remaining));
    ctx.set('X-RateLimit-Reset', String(d.reset));
    if (!d.allowed) {
      throw new AppError(
        ErrorCode.RATE_LIMITED,
        `Rate limit exceeded: at most ${d.limit} requests per ${d.window}`,
        { limit: d.limit, window: d.window, retryAfterSeconds: d.retryAfter },
        { 'Retry-After': String(d.retryAfter) },
      );
    }
    await next();
  };
}
