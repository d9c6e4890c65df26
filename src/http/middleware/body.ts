/**
 * Request bodies: the content-type rule, then JSON with its raw text kept for signature checks
 * (rawBodyOf). Limits are checked on the raw bytes before anything recursive runs: size (413)
 * while reading, nesting depth (400) by an iterative scan of the text before JSON.parse.
 */
import type { Context, Next } from 'koa';
import { AppError, ErrorCode } from '../../domain/errors';
import { jsonDeeperThan, MAX_JSON_DEPTH } from '../../domain/json-depth';

/** The raw request body (bytes as received), for signature checks. */
export const rawBodyOf = (ctx: Context): string | undefined =>
  ctx.state.rawBody ?? (ctx.request.body as Record<symbol, string> | undefined)?.[UNPARSED];
const UNPARSED = Symbol.for('unparsedBody');

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The paths that take a form (application/x-www-form-urlencoded) body, as SPEC.md and
 * /openapi.json say: the public card payment (which takes JSON too) and the card provider's
 * callback. Every other body is JSON (test/http/input-limits.test.ts holds this list to the
 * OpenAPI document).
 */
export const FORM_PATHS: ReadonlySet<string> = new Set(['/cardpayment', '/callback']);

/**
 * A request that carries a body must say it is JSON (`application/json` or `+json`), or a form
 * on FORM_PATHS: anything else (text/plain, multipart, no Content-Type at all) is 415
 * UNSUPPORTED_MEDIA_TYPE before a byte of it is read. Bodiless requests (no Content-Length or 0,
 * no Transfer-Encoding) pass.
 */
export function bodyType() {
  return async (ctx: Context, next: Next) => {
    const hasBody = (ctx.request.length ?? 0) > 0 || ctx.get('Transfer-Encoding') !== '';
    if (BODY_METHODS.has(ctx.method) && hasBody) {
      const json = ctx.request.is('json', '+json');
      const form = FORM_PATHS.has(ctx.path.replace(/\/+$/, '')) && ctx.request.is('urlencoded');
      if (!json && !form)
        throw new AppError(
          ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          FORM_PATHS.has(ctx.path.replace(/\/+$/, ''))
            ? 'Content-Type must be application/json or application/x-www-form-urlencoded'
            : 'Content-Type must be application/json',
          { contentType: ctx.get('Content-Type') || null },
        );
    }
    await next();
  };
}

/**
 * JSON bodies, non-strict: any JSON value, including a JSON string (the wallet handler accepts
 * one), is parsed; the raw text is kept for signature checks. Over the limit -> 413; nested
 * deeper than MAX_JSON_DEPTH -> 400 INVALID_INPUT (before JSON.parse or canonical JSON recurse);
 * malformed -> 400 INVALID_INPUT; a compressed body -> 415.
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
      if (jsonDeeperThan(raw, MAX_JSON_DEPTH))
        throw new AppError(ErrorCode.INVALID_INPUT, `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`, {
          reason: 'too deeply nested',
          maxDepth: MAX_JSON_DEPTH,
        });
      ctx.request.body = raw.trim() === '' ? {} : JSON.parse(raw);
    }
    await next();
  };
}
