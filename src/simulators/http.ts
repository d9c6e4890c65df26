/**
 * The HTTP plumbing the sandbox simulators share (the bank's, src/simulators/bank.ts, and the
 * card provider's, src/simulators/card-provider.ts): a silent Koa app that answers an error a
 * route or the body parser throws with a JSON error (the 4xx status it carries, else 500), parses
 * JSON bodies up to 64 kB, then routes; and serving such an app on loopback.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';

/**
 * A simulator's app around its router; `errorBody` shapes the body of a thrown error in the
 * simulated API's own error format (code `invalid_request` with message `bad request` for a 4xx,
 * `internal_error` with `simulator error` otherwise).
 */
export function simulatorApp(
  router: Router,
  errorBody: (code: string, message: string) => Record<string, unknown>,
): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (e) {
      const status = (e as { status?: number }).status;
      ctx.status = status && status < 500 ? status : 500;
      ctx.body = errorBody(
        ctx.status < 500 ? 'invalid_request' : 'internal_error',
        ctx.status < 500 ? 'bad request' : 'simulator error',
      );
    }
  });
  app.use(koaBody({ json: true, urlencoded: false, multipart: false, jsonLimit: '64kb' }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/** Serve an app on 127.0.0.1 (an ephemeral port unless given); unref'd, so it never holds the process open. */
export async function serveOnLoopback(app: Koa, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  server.unref();
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
