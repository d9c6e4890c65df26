/**
 * CORS for the storefront: the shop's web origin(s) (SHOP_ORIGIN, comma-separated) may call the
 * storefront paths from a browser; no other path answers CORS at all.
 *  - a preflight (OPTIONS with Access-Control-Request-Method) from the shop's origin -> 204 with
 *    the allowed methods and headers; from any other origin -> 403 FORBIDDEN;
 *  - other requests from the shop's origin get Access-Control-Allow-Origin and the exposed
 *    headers (ETag, rate limits, request id); error answers too, so the shop can read them.
 */
import type { Context } from 'koa';
import { AppError, ErrorCode } from '../../domain/errors';

const ALLOW_METHODS = 'GET, HEAD, POST, OPTIONS';
const ALLOW_HEADERS = 'Content-Type, X-API-Key, If-None-Match, X-Request-Id, Accept, Accept-Language';
const EXPOSE_HEADERS = 'ETag, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';

/**
 * A step of the front middleware (src/http/middleware/request.ts): true when it answered the
 * request (a preflight), false when the request goes on (with the CORS headers when they apply).
 */
export function cors(opts: {
  origins: string;
  applies: (path: string) => boolean;
  maxAgeSeconds?: number;
}): (ctx: Context) => boolean {
  const origins = new Set(
    opts.origins
      .split(',')
      .map((o) => o.trim().replace(/\/+$/, ''))
      .filter(Boolean),
  );
  return (ctx: Context): boolean => {
    if (!opts.applies(ctx.path)) return false;
    ctx.vary('Origin');
    const origin = ctx.get('Origin');
    const allowed = origin !== '' && origins.has(origin);
    if (ctx.method === 'OPTIONS' && ctx.get('Access-Control-Request-Method')) {
      if (!allowed) throw new AppError(ErrorCode.FORBIDDEN, 'Origin not allowed', { origin: origin || null });
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Methods', ALLOW_METHODS);
      ctx.set('Access-Control-Allow-Headers', ALLOW_HEADERS);
      ctx.set('Access-Control-Max-Age', String(opts.maxAgeSeconds ?? 600));
      ctx.status = 204;
      return true;
    }
    if (allowed) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    }
    return false;
  };
}
