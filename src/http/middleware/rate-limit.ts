/**
 * Rate limits of the payment API: per API key (per client address without a valid key),
 * RATE_LIMIT_PER_MINUTE and RATE_LIMIT_PER_SECOND, in fixed windows aligned to the clock; a request
 * is admitted when both windows have room and counts in both. API keys are counted in Postgres
 * (rate_limits), so every gateway enforces one limit, by atomic upserts coalesced per key: the
 * requests that wait behind a key's upsert in flight go together as one, admitted in arrival
 * order while there is room. A refused key is refused here, without Postgres, until its window
 * ends. Addresses are counted in memory (a flood costs no write; N gateways allow N times).
 * Answers carry X-RateLimit-Limit/-Remaining/-Reset of the window closest to running out; a
 * refusal is 429 RATE_LIMITED with Retry-After. The clock is injected.
 */
import type { Context, Middleware, Next } from 'koa';
import { clientAddress, compileCidrs, formatAddress } from '../ip';
import type { Db } from '../../db/knex';
import { AppError, ErrorCode } from '../../domain/errors';
import { prepared } from '../../db/prepared';

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
  /**
   * The decision when this process can make it without Postgres (the same consume would make):
   * an address bucket (counted here, like consume), or a key refused until its window ends (a
   * refusal counts nothing); otherwise undefined and nothing counted. For the gateway's edge.
   */
  decideNow(bucket: string): RateDecision | undefined;
}

export function createRateLimiter(opts: { db: Db; clock?: Clock; perSecond: number; perMinute: number }): RateLimiter {
  const { db, perSecond, perMinute } = opts;
  const clock = opts.clock ?? Date.now;
  if (!Number.isInteger(perSecond) || !Number.isInteger(perMinute) || perSecond < 1 || perMinute < 1)
    throw new Error('rate limits must be positive integers');

  // Counts n requests at once (the batch of one key) and admits k of them. Every SET expression
  // sees the row as it was, so s0/m0 (the counts in the current windows before this batch) and k
  // are spelled out where needed. Values other than the bucket are integers computed here,
  // inlined after validation. RETURNING sees only the new row: `admitted` carries k out.
  // one text for every batch (a prepared statement): the windows and counts are its bindings
  const s0 = `(CASE WHEN EXCLUDED.sec_window <= rl.sec_window THEN rl.sec_count ELSE 0 END)`;
  const m0 = `(CASE WHEN EXCLUDED.min_window <= rl.min_window THEN rl.min_count ELSE 0 END)`;
  const k = `LEAST(?::bigint, GREATEST(0, ?::bigint - ${s0}), GREATEST(0, ?::bigint - ${m0}))`;
  const UPSERT = `
      INSERT INTO rate_limits AS rl (bucket, sec_window, sec_count, min_window, min_count, allowed, admitted, updated_at)
      VALUES (?, ?::bigint, ?::int, ?::bigint, ?::int, ?::boolean, ?::int, now())
      ON CONFLICT (bucket) DO UPDATE SET
        sec_window = GREATEST(rl.sec_window, EXCLUDED.sec_window),
        min_window = GREATEST(rl.min_window, EXCLUDED.min_window),
        sec_count = ${s0} + ${k},
        min_count = ${m0} + ${k},
        allowed = ${k} = ?::bigint,
        admitted = ${k},
        updated_at = now()
      RETURNING sec_window, sec_count, min_window, min_count, admitted`;
  const upsert = (bucket: string, secWindow: number, minWindow: number, n: number) => {
    for (const v of [secWindow, minWindow, n])
      if (!Number.isSafeInteger(v) || v < 0) throw new Error(`rate limit: not a count or window: ${v}`);
    if (n < 1) throw new Error('rate limit: an empty batch');
    const first = Math.min(n, perSecond, perMinute); // k of a new row
    const kb = [n, perSecond, perMinute];
    return [bucket, secWindow, first, minWindow, first, first === n, first, ...kb, ...kb, ...kb, n, ...kb];
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
  const refuse = (bucket: string, r: Counted) => {
    const minuteBlocks = r.min_count >= perMinute;
    refused.set(bucket, {
      until: minuteBlocks ? (Number(r.min_window) + 1) * 60_000 : (Number(r.sec_window) + 1) * 1000,
      r,
    });
    if (refused.size > 10_000) refused.delete(refused.keys().next().value!);
  };

  /** One request's count and the moment it was counted at (its batch's). */
  type Counting = { r: Counted; now: number };
  type Waiter = { resolve: (c: Counting) => void; reject: (e: unknown) => void };
  /** Shared buckets with an upsert in flight: the requests that arrived since, in arrival order. */
  const queued = new Map<string, Waiter[]>();

  /** Counts one batch of a shared bucket in one statement, then sends the batch that queued meanwhile. */
  const send = async (bucket: string, batch: Waiter[], now: number): Promise<void> => {
    try {
      const block = refused.get(bucket);
      if (block && now < block.until) {
        for (const w of batch) w.resolve({ r: block.r, now });
        return;
      }
      if (block) refused.delete(bucket);
      const n = batch.length;
      const { rows } = await prepared<Counted & { admitted: number }>(
        db,
        UPSERT,
        upsert(bucket, Math.floor(now / 1000), Math.floor(now / 60_000), n),
      );
      const { admitted: k, ...after } = rows[0];
      // the i-th admitted request (0-based) saw the counts before the batch plus i + 1
      for (let i = 0; i < k; i++)
        batch[i].resolve({
          r: {
            ...after,
            sec_count: after.sec_count - k + i + 1,
            min_count: after.min_count - k + i + 1,
            allowed: true,
          },
          now,
        });
      if (k < n) {
        const no = { ...after, allowed: false };
        refuse(bucket, no);
        for (let i = k; i < n; i++) batch[i].resolve({ r: no, now });
      }
    } catch (e) {
      for (const w of batch) w.reject(e);
    } finally {
      const next = queued.get(bucket)!;
      if (next.length === 0) queued.delete(bucket);
      else {
        queued.set(bucket, []);
        void send(bucket, next, clock());
      }
    }
  };

  /** This request's count in a shared bucket: sent at once, or in the batch after the one in flight. */
  const countShared = (bucket: string, now: number): Promise<Counting> =>
    new Promise((resolve, reject) => {
      const waiting = queued.get(bucket);
      if (waiting) waiting.push({ resolve, reject });
      else {
        queued.set(bucket, []);
        void send(bucket, [{ resolve, reject }], now);
      }
    });

  const decisionOf = (r: Counted, now: number): RateDecision => {
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
  };
  const decideNow = (bucket: string, now: number): RateDecision | undefined => {
    if (!bucket.startsWith('key:'))
      return decisionOf(countLocally(bucket, Math.floor(now / 1000), Math.floor(now / 60_000)), now);
    const block = refused.get(bucket);
    return block && now < block.until ? decisionOf(block.r, now) : undefined;
  };

  return {
    decideNow: (bucket) => decideNow(bucket, clock()),
    async consume(bucket: string): Promise<RateDecision> {
      const now = clock();
      const known = decideNow(bucket, now);
      if (known) return known;
      const counted = await countShared(bucket, now);
      return decisionOf(counted.r, counted.now);
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
  const middleware = async (ctx: Context, next: Next) => {
    const bucket = await bucketOf(ctx);
    if (bucket === undefined) return next();
    const d = await limiter.consume(bucket);
    for (const [name, value] of rateLimitHeaders(d)) ctx.set(name, value);
    if (!d.allowed) throw rateLimited(d);
    await next();
  };
  // the edge (src/app/edge.ts) may decide a request of the default bucket rule before Koa
  return opts.bucketOf ? middleware : Object.assign(middleware, { [EDGE_LIMIT]: { limiter, addressBucketOf } });
}

/** What rateLimit() tells the edge: its limiter and its address bucket rule (default bucket rule only). */
export const EDGE_LIMIT = Symbol('edge rate limit');
export type EdgeLimit = {
  limiter: RateLimiter;
  addressBucketOf: (peer: string | undefined, forwardedFor: string) => string;
};

/** The X-RateLimit-* headers of a decision, in the order they are sent. */
export const rateLimitHeaders = (d: RateDecision): [string, string][] => [
  ['X-RateLimit-Limit', String(d.limit)],
  ['X-RateLimit-Remaining', String(d.remaining)],
  ['X-RateLimit-Reset', String(d.reset)],
];

/** The 429 of a refusal. */
export const rateLimited = (d: RateDecision): AppError =>
  new AppError(
    ErrorCode.RATE_LIMITED,
    `Rate limit exceeded: at most ${d.limit} requests per ${d.window}`,
    { limit: d.limit, window: d.window, retryAfterSeconds: d.retryAfter },
    { 'Retry-After': String(d.retryAfter) },
  );
