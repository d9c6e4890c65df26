/** Request bodies: JSON with its raw text kept for signature checks (rawBodyOf). */
import type { Context, Next } from 'koa';
import { AppError, ErrorCode } from '../../domain/errors';

/** The raw request body (bytes as received), for signature checks. */
export const rawBodyOf = (ctx: Context): string | undefined =>
  ctx.state.rawBody ?? (ctx.request.body as Record<symbol, string> | undefined)?.[UNPARSED];
const UNPARSED = Symbol.for('unparsedBody');

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * JSON bodies, non-strict: any JSON value, including a JSON string (the wallet handler accepts
 * one), is parsed; the raw text is kept for signature checks. Over the limit -> 413; malformed ->
 * 400 INVALID_INPUT; a compressed body -> 415.
 */
export function jsonBody(limitBytes: number) {
  return async (ctx: Context, next: Next) => {
    if (BODY_METHODS.has(ctx.method) && ctx.request.is('json', '+json')) {
      const encoding = ctx.get('Content-Encoding').toLowerCase();
      if (encoding && encoding !== 'identity')
        throw new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Content-Encoding ${encoding} is not supported`);
      if (Number(ctx.get('Content-Length')) > limitBytes)
        throw Object.assign(new Error('request entity too large'), { status: 413 });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limitBytes) throw Object.assign(new Error('request entity too large'), { status: 413 });
        chunks.push(chunk);
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      ctx.state.rawBody = raw;
      ctx.request.body = raw.trim() === '' ? {} : JSON.parse(raw);
    }
    await next();
  };
}
