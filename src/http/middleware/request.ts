/** Per request: an id, the access log line, and the one error handler with SPEC.md's envelopes. */
import type { Context, Next } from 'koa';
import { AppError, ErrorCode } from '../../domain/errors';
import { newId } from '../../ids';
import type { Logger } from '../../logger';
import { areaOf, sendError, toAppError } from '../errors';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;

export function requestId() {
  return async (ctx: Context, next: Next) => {
    const given = ctx.get('X-Request-Id');
    ctx.state.requestId = REQUEST_ID.test(given) ? given : newId('req');
    ctx.set('X-Request-Id', ctx.state.requestId);
    ctx.state.area = areaOf(ctx.path);
    await next();
  };
}

export function accessLog(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      logger.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(ms * 10) / 10,
        },
        'request',
      );
    }
  };
}

export function errorHandler(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404)
          throw new AppError(ErrorCode.NOT_FOUND, `No route for ${ctx.method} ${ctx.path}`, { path: ctx.path });
        // a method no route implements (TRACE, PROPFIND, ...): the router says 501 (with the path's
        // methods in Allow); for the client it is a 405 like any other, or a 404 when no route has the path
        if (ctx.status === 405 || ctx.status === 501) {
          const allowed = String(ctx.response.get('Allow')).split(/,\s*/).filter(Boolean);
          if (allowed.length === 0)
            throw new AppError(ErrorCode.NOT_FOUND, `No route for ${ctx.method} ${ctx.path}`, { path: ctx.path });
          throw new AppError(
            ErrorCode.METHOD_NOT_ALLOWED,
            `Method ${ctx.method} not allowed on ${ctx.path}`,
            { allowed },
            { Allow: allowed.join(', ') },
          );
        }
      }
    } catch (e) {
      const { error, unexpected } = toAppError(e);
      if (unexpected) logger.error({ err: e, requestId: ctx.state.requestId }, 'unhandled error');
      sendError(ctx, error);
    }
  };
}
