/** /healthz (process up), /readyz (Postgres and Temporal reachable), /openapi.json, /docs. */
import Router from '@koa/router';
import type { AppDeps } from '../../http/deps';
import { temporalReachable } from '../../temporal/client';
import { AppError, ErrorCode } from '../../domain/errors';
import { openApiDocument, registry, z } from '../../http/openapi';
import { DOCS_ASSETS, DOCS_HTML, docsAsset } from './docs-page';

/** Each check of /readyz gives up after this long, so /readyz answers within 1 s whatever hangs. */
export const READY_CHECK_TIMEOUT_MS = 800;

async function postgresReachable(deps: Pick<AppDeps, 'db' | 'temporal'>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      deps.db.raw('select 1'),
      new Promise((_, r) => (timer = setTimeout(() => r(new Error('timeout')), timeoutMs))),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

const Health = z.object({ status: z.string(), checks: z.record(z.enum(['ok', 'unreachable'])).optional() });
registry.registerPath({
  method: 'get',
  path: '/healthz',
  summary: 'Process is up',
  tags: ['system'],
  responses: {
    200: { description: 'up', content: { 'application/json': { schema: Health, example: { status: 'ok' } } } },
  },
});
registry.registerPath({
  method: 'get',
  path: '/readyz',
  summary: 'Postgres and Temporal are reachable (each check gives up after 800 ms)',
  tags: ['system'],
  responses: {
    200: {
      description: 'ready',
      content: {
        'application/json': {
          schema: Health,
          example: { status: 'ready', checks: { postgres: 'ok', temporal: 'ok' } },
        },
      },
    },
    503: { description: 'a dependency is unreachable' },
  },
});

export function systemRoutes(deps: Pick<AppDeps, 'db' | 'temporal'>): Router {
  const r = new Router();
  r.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  r.get('/readyz', async (ctx) => {
    const [pg, temporal] = await Promise.all([
      postgresReachable(deps, READY_CHECK_TIMEOUT_MS),
      temporalReachable(deps.temporal.client, READY_CHECK_TIMEOUT_MS),
    ]);
    const checks = { postgres: pg ? 'ok' : 'unreachable', temporal: temporal ? 'ok' : 'unreachable' };
    if (!pg || !temporal) throw new AppError(ErrorCode.SERVICE_UNAVAILABLE, 'A dependency is unreachable', { checks });
    ctx.body = { status: 'ready', checks };
  });
  r.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument();
  });
  const csp =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'";
  r.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', csp);
    ctx.body = DOCS_HTML;
  });
  r.get('/docs/assets/:file', (ctx) => {
    const body = docsAsset(ctx.params.file);
    if (!body) throw new AppError(ErrorCode.NOT_FOUND, 'No such docs asset', { file: ctx.params.file });
    ctx.type = DOCS_ASSETS[ctx.params.file] ?? 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('Content-Security-Policy', csp);
    ctx.body = body;
  });
  return r;
}
