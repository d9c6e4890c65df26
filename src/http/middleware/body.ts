/**
 * Request bodies: the content-type rule, then JSON with its raw text kept for signature checks
 * (rawBodyOf). Limits are checked on the raw bytes before anything recursive runs: size (413)
 * while reading, nesting depth (400) by an iterative scan of the text before JSON.parse.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { AppError, ErrorCode } from '../../domain/errors';
import { jsonDeeperThan, MAX_JSON_DEPTH } from '../../domain/json-depth';

/** The raw request body (bytes as received), for signature checks. */
export const rawBodyOf = (ctx: Context): string | undefined =>
  ctx.state.rawBody ?? (ctx.request.body as Record<symbol, string> | undefined)?.[UNPARSED];
const UNPARSED = Symbol.for('unparsedBody');

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The paths that take a form (application/x-www-form-urlencoded) body, as the contract and
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
/** HTML pages whose forms post here (the console, a payment link's button, an approval page): not the JSON API. */
export const FORM_PAGE_PREFIXES: readonly string[] = ['/console/', '/l/', '/approvals/'];
const takesForm = (p: string): boolean =>
  FORM_PATHS.has(p.replace(/\/+$/, '')) || FORM_PAGE_PREFIXES.some((pre) => p.startsWith(pre));

function checkBodyType(ctx: Context, json: boolean): void {
  const hasBody = (ctx.request.length ?? 0) > 0 || ctx.get('Transfer-Encoding') !== '';
  if (hasBody) {
    const form = takesForm(ctx.path) && ctx.request.is('urlencoded');
    if (!json && !form)
      throw new AppError(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        FORM_PATHS.has(ctx.path.replace(/\/+$/, ''))
          ? 'Content-Type must be application/json or application/x-www-form-urlencoded'
          : 'Content-Type must be application/json',
        { contentType: ctx.get('Content-Type') || null },
      );
  }
}

/**
 * JSON bodies, non-strict: any JSON value, including a JSON string (the wallet handler accepts
 * one), is parsed; the raw text is kept for signature checks. Over the limit -> 413; nested
 * deeper than MAX_JSON_DEPTH -> 400 INVALID_INPUT (before JSON.parse or canonical JSON recurse);
 * malformed -> 400 INVALID_INPUT; a compressed body -> 415.
 */
async function readJson(ctx: Context, limitBytes: number): Promise<void> {
  const encoding = ctx.get('Content-Encoding').toLowerCase();
  if (encoding && encoding !== 'identity')
    throw new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Content-Encoding ${encoding} is not supported`);
  if (Number(ctx.get('Content-Length')) > limitBytes) throw tooLarge();
  const raw = await readText(ctx.req, limitBytes);
  ctx.state.rawBody = raw;
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH))
    throw new AppError(ErrorCode.INVALID_INPUT, `JSON body nested deeper than ${MAX_JSON_DEPTH} levels`, {
      reason: 'too deeply nested',
      maxDepth: MAX_JSON_DEPTH,
    });
  ctx.request.body = raw.trim() === '' ? {} : JSON.parse(raw);
}

const tooLarge = () => Object.assign(new Error('request entity too large'), { status: 413 });
/**
 * The client went away (or broke the stream) before its body ended: a 400, as koa-body says for
 * a form (raw-body's "request aborted"), not a fault of ours. Not the socket's own error: its
 * ECONNRESET read as Postgres being down (a 503 and an error line, before).
 */
const aborted = () => Object.assign(new Error('request aborted'), { status: 400, code: 'ECONNABORTED' });

/**
 * The request's bytes as UTF-8 text, with the limit checked as they arrive (413 once over it).
 * Events, not `for await`: the async iterator was slower and destroyed the socket when the loop
 * threw, so a chunked body over the limit got a reset instead of its 413. Past the limit nothing
 * more is kept; Node discards the rest of the body once the answer is sent.
 */
function readText(req: IncomingMessage, limitBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        done();
        reject(tooLarge());
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8'));
    };
    // the stream broke or closed before its end: the client went away
    const onGone = () => {
      done();
      reject(aborted());
    };
    if (req.destroyed) return onGone(); // gone before its body was asked for
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

const nothing = () => Promise.resolve();

/**
 * The request body, read once into ctx.request.body (a step, not a middleware: see
 * src/app/app.ts). POST, PUT, PATCH and DELETE: the content-type rule, then JSON (readJson) or,
 * for anything else, koa-body (forms, with their raw text). Other methods carry no body: {} as
 * koa-body sets it, without asking koa-body (four content-type tests a request).
 */
export function bodyReader(limitBytes: number): (ctx: Context) => Promise<void> | undefined {
  const limit = `${limitBytes}b`;
  const form = koaBody({
    multipart: false,
    urlencoded: true,
    json: false, // read by readJson(): koa-body cannot keep the raw text of a body that is a JSON string
    text: false,
    jsonLimit: limit,
    formLimit: limit,
    textLimit: limit,
    includeUnparsed: true,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return (ctx: Context) => {
    if (!BODY_METHODS.has(ctx.method)) {
      ctx.request.body = {};
      return undefined;
    }
    const json = Boolean(ctx.request.is('json', '+json'));
    checkBodyType(ctx, json);
    if (json) return readJson(ctx, limitBytes);
    // koa-body leaves a body it refused (over the limit) paused: let the rest flow away, so the
    // connection can carry the answer and the next request (Node discards unread body bytes)
    return (form(ctx, nothing) as Promise<void>).catch((e: unknown) => {
      ctx.req.resume();
      throw e;
    });
  };
}
