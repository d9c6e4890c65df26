/**
 * createApp(deps) returns the Koa app of all three APIs (no listen): request ids, structured
 * logs, body parsing with limits, one error handler with SPEC.md's envelopes, 404/405.
 */
import Router from '@koa/router';
import Koa, { type Context, type Next } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import { AppError, ErrorCode } from '../domain/errors';
import { newId } from '../ids';
import type { Logger } from '../logger';
import type { TemporalDeps } from '../temporal/client';
import { areaOf, sendError, toAppError } from './errors';
import { apiKeyContext } from './middleware/api-key';
import { bankRoutes } from './routes/bank';
import { callbackIpGuard } from '../callbacks/verify';
import { callbackRoutes } from './routes/callbacks';
import { paymentRoutes } from './routes/payments';
import { costRoutes } from './routes/payments-cost';
import { isStorefrontPath, storefrontRoutes } from './routes/storefront';
import { cors } from './middleware/cors';
import { systemRoutes } from './routes/system';
import { webhookRoutes } from './routes/webhooks';
import { objectStoreRoutes } from '../objectstore/routes';

export interface AppDeps {
  config: Config;
  db: Db;
  temporal: TemporalDeps;
  logger: Logger;
  /** ms since the epoch; injected by tests (rate-limit windows, QR expiry, promotion dates) */
  clock?: () => number;
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    area: 'payment' | 'callback' | 'storefront';
    /** the raw text of a JSON body (see rawBodyOf) */
    rawBody?: string;
  }
}

/** The raw request body (bytes as received), for signature checks. */
export const rawBodyOf = (ctx: Context): string | undefined =>
  ctx.state.rawBody ?? (ctx.request.body as Record<symbol, string> | undefined)?.[UNPARSED];
const UNPARSED = Symbol.for('unparsedBody');

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

function requestId() {
  return async (ctx: Context, next: Next) => {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = REQUEST_ID.test(given) ? given : newId('req');
    ctx.set('X-Request-Id', ctx.state.requestId);
    ctx.state.area = areaOf(ctx.path);
    await next();
  };
}

function accessLog(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      logger.info(
        { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 },
        'request',
      );
    }
  };
}

function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) throw new AppError(ErrorCode.NOT_FOUND, `No route for ${ctx.method} ${ctx.path}`, { path: ctx.path });
        if (ctx.status === 405)
          throw new AppError(ErrorCode.METHOD_NOT_ALLOWED, `Method ${ctx.method} not allowed on ${ctx.path}`, {
            allowed: String(ctx.response.get('Allow')).split(/,\s*/).filter(Boolean),
          });
      }
    } catch (e) {
      const { error, unexpected } = toAppError(e);
      if (unexpected) logger.error({ err: e, requestId: ctx.state.requestId }, 'unhandled error');
      sendError(ctx, error);
    }
  };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * JSON bodies, non-strict: any JSON value, including a JSON string (the wallet handler accepts
 * one), is parsed; the raw text is kept for signature checks. Over the limit -> 413; malformed ->
 * 400 INVALID_INPUT; a compressed body -> 415.
 */
function jsonBody(limitBytes: number) {
  return async (ctx: Context, next: Next) => {
    if (BODY_METHODS.has(ctx.method) && ctx.request.is('json', '+json')) {
      const encoding = ctx.get('Content-Encoding').toLowerCase();
      if (encoding && encoding !== 'identity') throw new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Content-Encoding ${encoding} is not supported`);
      if (Number(ctx.get('Content-Length')) > limitBytes) throw Object.assign(new Error('request entity too large'), { status: 413 });
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

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;

  const bodyLimit = `${deps.config.bodyLimitBytes}b`;
  const router = new Router();
  for (const r of [systemRoutes(deps), paymentRoutes(deps), callbackRoutes(deps), webhookRoutes(deps), costRoutes(deps), bankRoutes(deps), storefrontRoutes(deps), objectStoreRoutes(deps)]) router.use(r.routes());

  app.use(requestId());
  app.use(accessLog(deps.logger));
  app.use(errorHandler(deps.logger));
  app.use(cors({ origins: deps.config.storefront.shopOrigin, applies: (path) => isStorefrontPath(deps, path) }));
  app.use(callbackIpGuard(deps.config, deps.logger)); // before any body is read
  app.use(jsonBody(deps.config.bodyLimitBytes));
  app.use(
    koaBody({
      multipart: false,
      urlencoded: true,
      json: false, // read by jsonBody(): koa-body cannot keep the raw text of a body that is a JSON string
      text: false,
      jsonLimit: bodyLimit,
      formLimit: bodyLimit,
      textLimit: bodyLimit,
      includeUnparsed: true,
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    }),
  );
  app.use(apiKeyContext(deps.db));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
