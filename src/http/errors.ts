/**
 * The error envelopes of the contract, chosen by area:
 *  - payment API (and storefront, which the contract leaves open): {statusCode, body: {error, code, details}}
 *  - callback API: {statusCode, body: {error: NAME, message}}
 * The HTTP status always equals statusCode.
 */
import type { Context } from 'koa';
import { CALLBACK_PATHS as CALLBACK_PATH_LIST } from '../callbacks';
import { AppError, ErrorCode, httpStatusOf, isAppError } from '../domain/errors';
import { isUnavailable as isTemporalUnavailable } from '../temporal/calls';

export type Area = 'payment' | 'callback' | 'storefront';

const CALLBACK_PATHS = new Set(CALLBACK_PATH_LIST);

export const areaOf = (path: string): Area =>
  CALLBACK_PATHS.has(path.replace(/\/+$/, '') || '/')
    ? 'callback'
    : /^\/(api|auth|public)\//.test(path) || path === '/app-first-page.json'
      ? 'storefront'
      : 'payment';

export function errorEnvelope(area: Area, err: AppError) {
  const body =
    area === 'callback'
      ? { error: err.code, message: err.message }
      : { error: err.message, code: err.code, details: err.details };
  return { statusCode: err.status, body };
}

export function sendError(ctx: Context, err: AppError): void {
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.body = errorEnvelope(ctx.state.area ?? areaOf(ctx.path), err);
}

const PG_UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'EPIPE',
  '53300',
  '57P01',
  '57P02',
  '57P03',
]);

/**
 * Postgres (or the pool in front of it) is down, restarting or full: the request may work later.
 * Looks through `cause` and AggregateError's `errors` (a refused connection to a name with an
 * IPv4 and an IPv6 address is an AggregateError of two ECONNREFUSED).
 */
export function isDatabaseUnavailable(e: unknown, depth = 0): boolean {
  const err = e as { code?: string; name?: string; message?: string; cause?: unknown; errors?: unknown } | undefined;
  if (!err || typeof err !== 'object' || depth > 4) return false;
  if (err.name === 'KnexTimeoutError') return true;
  if (typeof err.code === 'string' && (PG_UNAVAILABLE_CODES.has(err.code) || err.code.startsWith('08'))) return true;
  if (
    typeof err.message === 'string' &&
    /Connection terminated|connect ECONNREFUSED|Client has encountered a connection error|timeout exceeded when trying to connect/.test(
      err.message,
    )
  )
    return true;
  if (Array.isArray(err.errors) && err.errors.some((x) => isDatabaseUnavailable(x, depth + 1))) return true;
  return err.cause !== undefined && err.cause !== e && isDatabaseUnavailable(err.cause, depth + 1);
}

const UNAVAILABLE_MESSAGE = {
  postgres: 'The database is unavailable; try again later',
  temporal: 'The payment engine is unavailable; try again later',
};
const unavailable = (service: keyof typeof UNAVAILABLE_MESSAGE) =>
  new AppError(ErrorCode.SERVICE_UNAVAILABLE, UNAVAILABLE_MESSAGE[service], { service }, { 'Retry-After': '5' });

/** Map anything thrown below the error middleware to a safe AppError. */
export function toAppError(e: unknown): { error: AppError; unexpected: boolean } {
  if (isAppError(e)) return { error: e, unexpected: false };
  // a backstop of the input rule: a value Postgres refused (data exception, class 22) is the client's
  const pgCode = (e as { code?: unknown } | undefined)?.code;
  if (typeof pgCode === 'string' && /^22[0-9A-Z]{3}$/.test(pgCode))
    return {
      error: new AppError(ErrorCode.INVALID_INPUT, 'A value of the request cannot be stored', {
        reason: 'data exception',
      }),
      unexpected: true,
    };
  // a dependency down: 503 on every API (the callback API in its envelope), never a 500
  if (isDatabaseUnavailable(e)) return { error: unavailable('postgres'), unexpected: true };
  if (isTemporalUnavailable(e)) return { error: unavailable('temporal'), unexpected: true };
  const err = e as { status?: number; statusCode?: number; type?: string; message?: string; expose?: boolean };
  const status = err?.status ?? err?.statusCode;
  if (status === 413 || err?.type === 'entity.too.large')
    return { error: new AppError(ErrorCode.PAYLOAD_TOO_LARGE, 'Request body is too large', {}), unexpected: false };
  if (status === 415)
    return { error: new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Unsupported content type'), unexpected: false };
  if (status === 400 || err?.type === 'entity.parse.failed' || e instanceof SyntaxError)
    return {
      error: new AppError(ErrorCode.INVALID_INPUT, 'Malformed request body', { reason: 'body could not be parsed' }),
      unexpected: false,
    };
  if (status && status >= 400 && status < 500) {
    const code =
      (Object.keys(httpStatusOf) as ErrorCode[]).find((c) => httpStatusOf[c] === status) ?? ErrorCode.INVALID_INPUT;
    return { error: new AppError(code, err.expose && err.message ? err.message : 'Bad request'), unexpected: false };
  }
  return { error: new AppError(ErrorCode.INTERNAL_ERROR, 'Internal server error'), unexpected: true };
}
