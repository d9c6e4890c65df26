/**
 * Run by the front middleware (src/http/middleware/request.ts) once a request is answered: counts
 * it and its duration by route pattern and status, and derives from the final answer what the
 * callback and rate-limit metrics need (a rejected callback's error name, a 429). One counter,
 * one histogram per request.
 */
import type { Context } from 'koa';
import { CALLBACK_ENDPOINTS, WALLET_HANDLER_PATH } from '../../callbacks';
import { callbacks, httpDuration, httpRequests, rateLimitRefusals } from '../../metrics';

const PROVIDER_OF_PATH: Record<string, string> = {
  ...Object.fromEntries(CALLBACK_ENDPOINTS.map((e) => [e.path, e.provider])),
  [WALLET_HANDLER_PATH]: 'wallet_handler',
};

/** An answered request as the metrics see it. */
export interface Answer {
  method: string;
  /** the matched route's pattern, else 'unmatched' (404) or 'middleware' */
  route: string;
  status: number;
  area: string | undefined;
  path: string;
  /** the error name of a callback API error envelope (body.error) */
  errorName: string | undefined;
}

/** `seconds`: how long the request took */
export function recordHttpMetrics(ctx: Context, seconds: number): void {
  const body = ctx.body as { body?: { error?: unknown } } | string | undefined;
  recordAnswer(
    {
      method: ctx.method,
      route: String(
        (ctx as Context & { _matchedRoute?: string })._matchedRoute ??
          (ctx.status === 404 ? 'unmatched' : 'middleware'),
      ),
      status: ctx.status,
      area: ctx.state.area,
      path: ctx.path,
      // read only where it is counted: a refused callback
      errorName:
        ctx.state.area === 'callback' && typeof body === 'object' && typeof body?.body?.error === 'string'
          ? body.body.error
          : undefined,
    },
    seconds,
  );
}

export function recordAnswer(a: Answer, seconds: number): void {
  const { status } = a;
  const labels = { method: a.method, route: a.route, status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
  if (status >= 400) {
    const provider = a.area === 'callback' ? PROVIDER_OF_PATH[a.path.replace(/\/+$/, '').toLowerCase()] : undefined;
    if (provider) {
      const reason = a.errorName ?? (status === 500 ? 'HANDLER_FAILURE' : `HTTP_${status}`);
      callbacks.inc({ provider, outcome: 'rejected', reason });
    }
    if (status === 429)
      rateLimitRefusals.inc({
        limiter: a.area === 'storefront' ? 'storefront_auth' : provider ? 'wallet_handler' : 'payment_api',
      });
  }
}
