/**
 * The gateway's edge: the payment API's cheapest refusals (no usable API key, or a key or address
 * over its rate limit), answered before Koa without any I/O, each kind of refusal built once.
 * It takes only a request whose answer it knows to be Koa's: GET, no body, a plain path, a route
 * whose chain starts with the default rate limit and requireApiKey, a key whose lookup is cached
 * (KeyLookups.peek) and a limit decided here (RateLimiter.decideNow); everything else goes to Koa
 * untouched. test/http/edge.test.ts holds both paths' answers equal, header for header; why it
 * exists and what it saves: docs/architecture.md "Why some code is shaped as it is".
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import type { AppError } from '../domain/errors';
import type { Logger } from '../logger';
import { areaOf, errorEnvelope } from '../http/errors';
import { REQUIRED_SCOPE, unauthorized, type KeyLookups } from '../http/middleware/api-key';
import { recordAnswer } from '../http/middleware/metrics';
import { EDGE_LIMIT, rateLimited, rateLimitHeaders, type EdgeLimit } from '../http/middleware/rate-limit';
import { accessLoggerOf, logAnswer, requestIdOf } from '../http/middleware/request';

/** A path the input rule has nothing to say about and Koa reads as it is (no query, no escapes). */
const PLAIN_PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@/-]*$/;

type Refusal = { status: number; body: string; headers: string[] };
const MAX_REFUSALS = 256;

/** true: the edge answered the request; false: it did nothing, Koa answers. */
export type Edge = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createEdge(opts: { router: Router; keys: KeyLookups; logger: Logger }): Edge {
  const { router, keys } = opts;
  const accessLog = accessLoggerOf(opts.logger);
  /**
   * The route's guard when its chain starts with the default rate limit and requireApiKey. Found
   * once per route layer (the layers are fixed once createApp has built the router).
   */
  const guards = new WeakMap<object, { limit: EdgeLimit; route: string } | null>();
  const guardOf = (path: string): { limit: EdgeLimit; route: string } | undefined => {
    const m = router.match(path, 'GET');
    if (!m.route || m.pathAndMethod.length !== 1) return undefined;
    const layer = m.pathAndMethod[0];
    let guard = guards.get(layer);
    if (guard === undefined) {
      const [first, second] = layer.stack as unknown as [Record<symbol, unknown>?, Record<symbol, unknown>?];
      const limit = first?.[EDGE_LIMIT] as EdgeLimit | undefined;
      guard = limit && typeof second?.[REQUIRED_SCOPE] === 'string' ? { limit, route: String(layer.path) } : null;
      guards.set(layer, guard);
    }
    return guard ?? undefined;
  };

  /**
   * A refusal's status, headers after X-RateLimit-* and body, which depend only on its kind (a 401's
   * reason; a 429's limit, window and Retry-After): built once from its AppError and the payment
   * area's envelope, as Koa builds them, then reused. Bounded: the kinds are few, and the map
   * starts again if it ever fills.
   */
  const refusals = new Map<string, Refusal>();
  const refusalOf = (kind: string, error: () => AppError): Refusal => {
    let r = refusals.get(kind);
    if (!r) {
      const e = error();
      const body = JSON.stringify(errorEnvelope('payment', e));
      r = {
        status: e.status,
        body,
        headers: [
          ...Object.entries(e.headers).flat(),
          'Content-Type',
          'application/json; charset=utf-8',
          'Content-Length',
          String(Buffer.byteLength(body)),
        ],
      };
      if (refusals.size >= MAX_REFUSALS) refusals.clear();
      refusals.set(kind, r);
    }
    return r;
  };

  const answer = (req: IncomingMessage, res: ServerResponse): boolean => {
    const start = process.hrtime.bigint();
    const path = req.url ?? '';
    if (
      req.method !== 'GET' ||
      req.headers['content-length'] !== undefined ||
      req.headers['transfer-encoding'] !== undefined ||
      !PLAIN_PATH.test(path)
    )
      return false;
    // the payment API's envelope and no CORS (the storefront's) nor address check (the callbacks')
    const area = areaOf(path);
    if (area !== 'payment') return false;
    const guard = guardOf(path);
    if (!guard) return false;
    const given = req.headers['x-api-key'];
    const lookup = keys.peek(typeof given === 'string' && given !== '' ? given : undefined);
    if (!lookup) return false;
    const { limiter, addressBucketOf } = guard.limit;
    const decision = limiter.decideNow(
      lookup.status === 'valid'
        ? `key:${lookup.key.id}`
        : addressBucketOf(req.socket.remoteAddress, String(req.headers['x-forwarded-for'] ?? '')),
    );
    // a valid key under its limit is counted in Postgres, by Koa (decideNow admits only addresses)
    if (!decision || (decision.allowed && lookup.status === 'valid')) return false;
    const refusal =
      lookup.status === 'valid' || !decision.allowed
        ? refusalOf(`429 ${decision.limit} ${decision.window} ${decision.retryAfter}`, () => rateLimited(decision))
        : refusalOf(`401 ${lookup.status}`, () => unauthorized(lookup.status));

    const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
    // one writeHead with the headers in Koa's order: the request id, X-RateLimit-*, the refusal's own
    const head = ['X-Request-Id', requestId];
    for (const [name, value] of rateLimitHeaders(decision)) head.push(name, value);
    for (const h of refusal.headers) head.push(h);
    res.writeHead(refusal.status, head);
    res.end(refusal.body);

    const ns = Number(process.hrtime.bigint() - start);
    recordAnswer(
      { method: 'GET', route: guard.route, status: refusal.status, area, path, errorName: undefined },
      ns / 1e9,
    );
    logAnswer(accessLog, { requestId, method: 'GET', path, status: refusal.status }, ns);
    return true;
  };
  // a fault here must not end the process (nothing else catches a request listener's throw):
  // Koa answers a request the edge had not begun to answer, and the fault is logged
  return (req, res) => {
    try {
      return answer(req, res);
    } catch (err) {
      opts.logger.error({ err, path: req.url }, 'the edge failed on a request');
      return res.headersSent || res.writableEnded;
    }
  };
}
