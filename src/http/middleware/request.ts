/**
 * The outermost middleware, one per app: what every request gets, in one function rather than
 * a stack of six (each Koa middleware is a dispatch, a promise and an await on every request):
 *  - a request id (X-Request-Id: the client's when it is well-formed, else req_<32 hex>) and its area;
 *  - the one error handler with the contract's envelopes, and 404/405 for what no route answered;
 *  - CORS for the storefront (src/http/middleware/cors.ts) and the callback API's address check
 *    (src/callbacks/verify.ts), both before any body is read;
 *  - once answered: the HTTP metrics (src/http/middleware/metrics.ts) and the access log line.
 */
import type { Context, Middleware, Next } from 'koa';
import { AppError, ErrorCode } from '../../domain/errors';
import { newId } from '../../ids';
import type { Logger } from '../../logger';
import { areaOf, sendError, toAppError } from '../errors';
import { recordHttpMetrics } from './metrics';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

/** The request's id: the client's X-Request-Id when it is well-formed, else a new req_<32 hex>. */
export const requestIdOf = (given: string | undefined): string =>
  given && REQUEST_ID.test(given) ? given : newId('req');

/**
 * The logger of access log lines: `logger` without redaction. A line's keys are the five below,
 * never a redacted path (REDACT_PATHS names keys, and no value is looked at), so redaction would
 * only cost time (pino's wildcard paths walk every key).
 */
export const accessLoggerOf = (logger: Logger): Logger => logger.child({}, { redact: { paths: [] } });

/** A path as the access log keeps it: a hosted checkout link's token opens a payment, so it is masked. */
export const loggedPath = (path: string): string =>
  path.startsWith('/checkout/') ? path.replace(/^\/checkout\/(?!assets\/)[^/]+/, '/checkout/[token]') : path;

/** The access log line of an answered request, through accessLoggerOf's logger; `ns`: how long it took. */
export function logAnswer(
  logger: Logger,
  a: { requestId: string; method: string; path: string; status: number },
  ns: number,
): void {
  logger.info(
    {
      requestId: a.requestId,
      method: a.method,
      path: loggedPath(a.path),
      status: a.status,
      ms: Math.round(ns / 1e5) / 10,
    },
    'request',
  );
}

/** No route gave the request an answer: 404, or 405 with Allow when the path exists for other methods. */
function unanswered(ctx: Context): void {
  if (ctx.status === 404)
    throw new AppError(ErrorCode.NOT_FOUND, `No route for ${ctx.method} ${ctx.path}`, { path: ctx.path });
  // a method no route implements (TRACE, PROPFIND, ...): the router says 501 (with the path's
  // methods in Allow); for the client it is a 405 like any other, or a 404 when no route has the path
  if (ctx.status === 405 || ctx.status === 501) {
    const allowed = String(ctx.response.get('Allow')).split(/,\s*/).filter(Boolean);
    if (allowed.length === 0)
      throw new AppError(ErrorCode.NOT_FOUND, `No route for ${ctx.method} ${ctx.path}`, { path: ctx.path });
    throw new AppError(
      ErrorCode.METHOD_NOT_ALLOWED,
      `Method ${ctx.method} not allowed on ${ctx.path}`,
      { allowed },
      { Allow: allowed.join(', ') },
    );
  }
}

export function front(opts: {
  logger: Logger;
  /** CORS: true when it answered the request (a preflight) */
  cors: (ctx: Context) => boolean;
  /** the callback API's address check: throws when refused */
  callbackIpGuard: (ctx: Context) => void;
}): Middleware {
  const { logger, cors, callbackIpGuard } = opts;
  const accessLog = accessLoggerOf(logger);
  return async (ctx: Context, next: Next) => {
    const start = process.hrtime.bigint();
    try {
      ctx.state.requestId = requestIdOf(ctx.get('X-Request-Id'));
      ctx.set('X-Request-Id', ctx.state.requestId);
      ctx.state.area = areaOf(ctx.path);
      try {
        if (!cors(ctx)) {
          callbackIpGuard(ctx);
          await next();
          if (ctx.body === undefined || ctx.body === null) unanswered(ctx);
        }
      } catch (e) {
        const { error, unexpected } = toAppError(e);
        if (unexpected) logger.error({ err: e, requestId: ctx.state.requestId }, 'unhandled error');
        sendError(ctx, error);
      }
    } finally {
      const ns = Number(process.hrtime.bigint() - start);
      recordHttpMetrics(ctx, ns / 1e9);
      logAnswer(
        accessLog,
        { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status },
        ns,
      );
    }
  };
}
