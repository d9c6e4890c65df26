/**
 * Rate limit of the storefront's sign-in endpoints, per client address, in Postgres (shared by
 * every gateway instance). Every answer carries X-RateLimit-Limit, X-RateLimit-Remaining and
 * X-RateLimit-Reset (unix seconds); over the limit -> 429 RATE_LIMITED with Retry-After.
 */
import type { Context, Next } from 'koa';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../db/knex';
import { AppError, ErrorCode } from '../domain/errors';

export function authRateLimit(db: Db, pointsPerMinute: number, clock: () => Date) {
  const limiter = new RateLimiterPostgres({
    storeClient: db,
    storeType: 'knex',
    tableName: 'storefront_rate_limits',
    tableCreated: true,
    clearExpiredByTimeout: false,
    keyPrefix: 'sf-auth',
    points: pointsPerMinute,
    duration: 60,
  });
  const headers = (ctx: Context, res: RateLimiterRes) => {
    const reset = Math.ceil((clock().getTime() + res.msBeforeNext) / 1000);
    ctx.set('X-RateLimit-Limit', String(pointsPerMinute));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, res.remainingPoints)));
    ctx.set('X-RateLimit-Reset', String(reset));
    return reset;
  };
  return async (ctx: Context, next: Next) => {
    let res: RateLimiterRes;
    try {
      res = await limiter.consume(ctx.ip || 'unknown');
    } catch (e) {
      if (!(e instanceof RateLimiterRes)) throw e;
      headers(ctx, e);
      const retryAfter = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
      throw new AppError(
        ErrorCode.RATE_LIMITED,
        'Too many sign-in requests; try again later',
        { retryAfterSeconds: retryAfter, limit: pointsPerMinute },
        { 'Retry-After': String(retryAfter) },
      );
    }
    headers(ctx, res);
    await next();
  };
}
