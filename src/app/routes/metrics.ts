/**
 * GET /metrics: Prometheus text format. The open dead letters are counted in Postgres at scrape
 * time (an indexed count, 1 s at most); the Temporal SDK runtime's own metrics (temporal_*),
 * when its exporter runs in this process (TEMPORAL_METRICS_PORT), are appended, so one scrape
 * target has both. The worker role serves the same on its WORKER_HTTP_PORT. METRICS_ACCESS=key (the default in production): only a key with the scope
 * `metrics`, as X-API-Key or `Authorization: Bearer` (Prometheus's `authorization` setting).
 */
import { openDeadLetters } from '../../webhooks/endpoints';
import Router from '@koa/router';
import type { AppDeps } from '../../http/deps';
import { deadLettersOpen, registry } from '../../metrics';
import { requireOperatorKey, type HeaderSource } from '../../http/middleware/api-key';
import { ApiKeyAuth, errorResponses, registry as openapi } from '../../http/openapi';

openapi.registerPath({
  method: 'get',
  path: '/metrics',
  operationId: 'getMetrics',
  summary: 'Prometheus metrics of this process (and of the Temporal SDK runtime, temporal_*)',
  description:
    'Public outside production; with METRICS_ACCESS=key (the default in production) only for an API key with the scope `metrics`, in X-API-Key or `Authorization: Bearer`.',
  tags: ['system'],
  security: [{}, { [ApiKeyAuth.name]: [] }],
  responses: {
    200: {
      description: 'Prometheus text exposition format',
      content: {
        'text/plain': {
          schema: { type: 'string' },
          example:
            '# HELP talat_callbacks_total Callbacks received, by provider and outcome\n# TYPE talat_callbacks_total counter\ntalat_callbacks_total{provider="qr",outcome="processed"} 42\n',
        },
      },
    },
    ...errorResponses([401, 403]),
  },
});

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One scrape of this process, for the gateway's route and the worker's port alike: the access
 * rule (METRICS_ACCESS: an AppError for a caller it refuses), then the text and its content type.
 */
export async function scrapeMetrics(
  deps: Pick<AppDeps, 'db' | 'config'>,
  headers: HeaderSource,
): Promise<{ contentType: string; text: string }> {
  if (deps.config.metricsNeedKey) await requireOperatorKey(deps.db, headers, 'metrics');
  const open = await withTimeout(
    openDeadLetters(deps.db).catch(() => undefined),
    1000,
  );
  if (open !== undefined) deadLettersOpen.set(open);
  let text = await registry.metrics();
  const port = deps.config.temporal.metricsPort;
  if (port) {
    const temporal = await withTimeout(
      fetch(`http://127.0.0.1:${port}/metrics`)
        .then((res) => (res.ok ? res.text() : undefined))
        .catch(() => undefined),
      1000,
    );
    if (temporal) text += `\n${temporal}`;
  }
  return { contentType: registry.contentType, text };
}

export function metricsRoutes(deps: Pick<AppDeps, 'config' | 'db'>): Router {
  const r = new Router();
  r.get('/metrics', async (ctx) => {
    const { contentType, text } = await scrapeMetrics(deps, ctx);
    ctx.type = contentType;
    ctx.body = text;
  });
  return r;
}
