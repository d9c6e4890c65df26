/**
 * Run by the front middleware (src/http/middleware/request.ts) once a request is answered: counts
 * it and its duration by route pattern and status, and derives from the final answer what the
 * callback and rate-limit metrics need (a rejected callback's error name, a 429). One counter,
 * one histogram per request.
 */
import type { Context } from 'koa';
import { CALLBACK_ENDPOINTS, WALLET_HANDLER_PATH } from '../../domain/callback-paths';
import { callbacks, httpDuration, httpRequests, rateLimitRefusals } from '../../metrics';

const PROVIDER_OF_PATH: Record<string, string> = {
  ...Object.fromEntries(CALLBACK_ENDPOINTS.map((e) => [e.path, e.provider])),
  [WALLET_HANDLER_PATH]: 'wallet_handler',
};

/** `seconds`: how long the request took */
export function recordHttpMetrics(ctx: Context, seconds: number): void {
  const status = ctx.status;
  const route =
    (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? (status === 404 ? 'unmatched' : 'middleware');
  const labels = { method: ctx.method, route: String(route), status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
  if (status >= 400) {
    const provider =
      ctx.state.area === 'callback' ? PROVIDER_OF_PATH[ctx.path.replace(/\/+$/, '').toLowerCase()] : undefined;
    if (provider) {
      const body = ctx.body as { body?: { error?: unknown } } | string | undefined;
      const reason =
        typeof body === 'object' && typeof body?.body?.error === 'string'
          ? body.body.error
          : status === 500
            ? 'HANDLER_FAILURE'
            : `HTTP_${status}`;
      callbacks.inc({ provider, outcome: 'rejected', reason });
    }
    if (status === 429)
      rateLimitRefusals.inc({
        limiter: ctx.state.area === 'storefront' ? 'storefront_auth' : provider ? 'wallet_handler' : 'payment_api',
      });
  }
}
