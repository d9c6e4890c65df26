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
import { paymentRoutes } from './routes/payments';
import { systemRoutes } from './routes/system';

export interface AppDeps {
  config: Config;
  db: Db;
  temporal: TemporalDeps;
  logger: Logger;
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    area: 'payment' | 'callback' | 'storefront';
  }
}

/** The raw request body (bytes as received), for signature checks. */
export const rawBodyOf = (ctx: Context): string | undefined => (ctx.request.body as Record<symbol, string> | undefined)?.[UNPARSED];
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

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;

  const bodyLimit = `${deps.config.bodyLimitBytes}b`;
  const router = new Router();
  for (const r of [systemRoutes(deps), paymentRoutes(deps)]) router.use(r.routes());

  app.use(requestId());
  app.use(accessLog(deps.logger));
  app.use(errorHandler(deps.logger));
  app.use(
    koaBody({
      multipart: false,
      urlencoded: true,
      json: true,
      text: false,
      jsonStrict: false, // the wallet handler accepts a body that is a JSON string
      jsonLimit: bodyLimit,
      formLimit: bodyLimit,
      textLimit: bodyLimit,
      includeUnparsed: true,
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    }),
  );
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
