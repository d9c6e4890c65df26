/**
 * createApp(deps) returns the Koa app of all three APIs (no listen): request ids, structured
 * logs, body parsing with limits, one error handler with the contract's envelopes, 404/405.
 */
import Router from '@koa/router';
import { IncomingMessage, type ServerResponse } from 'node:http';
import Koa from 'koa';
import { createNotifier } from '../notifier';
import type { AppDeps } from '../http/deps';
import { bodyReader } from '../http/middleware/body';
import { front } from '../http/middleware/request';
import { apiKeyContext, keyLookupCache } from '../http/middleware/api-key';
import { createEdge } from './edge';
import { bankRoutes } from '../bank/routes';
import { callbackIpGuard } from '../callbacks/verify';
import { callbackRoutes } from '../callbacks/routes';
import { AfterAnswer } from '../http/after-answer';
import { paymentRoutes } from '../payments/routes';
import { costRoutes } from '../payments/cost-routes';
import { storefrontPathPattern, storefrontRoutes } from '../storefront/routes';
import { cors } from '../http/middleware/cors';
import { systemRoutes } from './routes/system';
import { webhookRoutes } from '../webhooks/routes';
import { objectStoreRoutes } from '../storefront/assets/routes';
import { createAlertThrottle } from '../alerts';
import { callbackInputRefused } from '../callbacks/bad-input';
import { inputRule } from '../http/middleware/input';
import { metricsRoutes } from './routes/metrics';
import { codecRoutes } from './routes/codec';
import { timelineRoutes } from './timeline';
import { memoizeRouteMatching, routerMiddleware } from '../http/route-match';
import { latePaymentRoutes } from '../payments/late-payments';
import { checkoutRoutes } from '../checkout/routes';
import { paymentRecords } from '../payments/repository';
import { resultDelivery } from '../payments/workflow-client';
import { refundRoutes } from '../refunds/routes';
import { branchExists, productsAt } from '../storefront/cost-catalog';
import { reconciliationRoutes } from '../reconciliation/routes';
import { linkRoutes } from '../links/routes';
import { consoleRoutes } from './console/routes';
import { linkServiceOf, orderServiceOf, paymentSliceDeps } from './services';
import { orderRoutes } from '../orders/routes';
import { every } from '../periodic';

/** Every route of an app createApp made: method and path as the routers declare them (the doors test). */
export interface AppRoute {
  method: string;
  path: string;
}
const routesOfApps = new WeakMap<Koa, AppRoute[]>();
export const appRoutes = (app: Koa): AppRoute[] => routesOfApps.get(app) ?? [];

/**
 * The gateway's Koa app: its callback() answers the payment API's cheapest refusals at the edge
 * (src/app/edge.ts) before Koa, so every server of the app (npm start, the gateway role, the
 * tests) gets the edge through the one callback() Koa servers use.
 */
export class GatewayApp extends Koa {
  edge?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** the callbacks' signals and receipts' finishes after their answer (src/callbacks/processor.ts) */
  readonly afterAnswer: AfterAnswer;
  private readonly periodic: { stop: () => Promise<void> }[] = [];

  constructor(private readonly logger: AppDeps['logger']) {
    super({ proxy: false });
    this.afterAnswer = new AfterAnswer(logger);
  }

  /** Runs `work` every `ms` until stop(), never two passes at once (src/periodic.ts). */
  every(what: string, ms: number, work: () => Promise<unknown>): void {
    this.periodic.push(every(this.logger, what, ms, work));
  }

  /** Resolves when the work this app does after its answers has ended (read receipts after it). */
  idle(): Promise<void> {
    return this.afterAnswer.idle();
  }

  /** Stops the periodic work and waits for it and for idle(): await it before the pools close. */
  async stop(): Promise<void> {
    await Promise.all(this.periodic.splice(0).map((p) => p.stop()));
    await this.idle();
  }

  override callback(): ReturnType<Koa['callback']> {
    const handle = super.callback();
    const edge = this.edge;
    if (!edge) return handle;
    return (req, res) =>
      req instanceof IncomingMessage && edge(req, res as ServerResponse) ? Promise.resolve() : handle(req, res);
  }
}

export function createApp(deps: AppDeps): GatewayApp {
  const app = new GatewayApp(deps.logger);
  app.silent = true;

  const router = new Router();
  const notifier = deps.notifier ?? createNotifier(deps);
  const alerts =
    deps.alerts ??
    createAlertThrottle({
      notifier,
      logger: deps.logger,
      windowMs: deps.config.alertWindowSeconds * 1000,
      clock: deps.clock,
    });
  // each slice's declared dependencies on the others, wired here (docs/architecture.md)
  const payments = paymentRecords(deps.db);
  const { refunds, checkout } = paymentSliceDeps(deps);
  const orders = orderServiceOf(deps);
  for (const r of [
    systemRoutes(deps),
    metricsRoutes(deps),
    codecRoutes(deps),
    paymentRoutes({ ...deps, refunds, checkout }, { authorizeCard: orders.authorizeCard }),
    refundRoutes({ ...deps, payments: paymentRecords }),
    orderRoutes(deps, orders),
    timelineRoutes(deps),
    latePaymentRoutes(deps),
    callbackRoutes({
      ...deps,
      notifier,
      alerts,
      payments,
      deliverResult: resultDelivery(deps),
      afterAnswer: app.afterAnswer,
      every: (what, ms, work) => app.every(what, ms, work),
    }),
    webhookRoutes(deps),
    costRoutes({
      ...deps,
      catalog: {
        branchExists: (branchId) => branchExists(deps.db, branchId),
        productsAt: (branchId, ids) => productsAt(deps.db, branchId, ids),
      },
    }),
    bankRoutes(deps),
    storefrontRoutes(deps),
    objectStoreRoutes(deps),
    checkoutRoutes({ ...deps, payments }),
    reconciliationRoutes(deps),
    linkRoutes({ ...deps, links: linkServiceOf(deps) }),
    consoleRoutes(deps),
  ])
    router.use(r.routes());
  memoizeRouteMatching(router); // every route is in: nothing is added after this
  routesOfApps.set(
    app,
    router.stack.flatMap((layer) =>
      layer.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(layer.path) })),
    ),
  );

  // Two middlewares before the router, not ten: each Koa middleware is a dispatch, a promise and
  // an await on every request. The front: request id, error envelopes, CORS, the callback address
  // check, metrics and the access log (src/http/middleware/request.ts).
  const storefrontPaths = storefrontPathPattern(deps);
  app.use(
    front({
      logger: deps.logger,
      cors: cors({ origins: deps.config.storefront.shopOrigin, applies: (path) => storefrontPaths.test(path) }),
      callbackIpGuard: callbackIpGuard(deps.config, deps.logger), // before any body is read
    }),
  );
  // then, in this order: the body, the input rule, the request's key lookup
  const readBody = bodyReader(deps.config.bodyLimitBytes);
  const checkInput = inputRule(router, callbackInputRefused({ config: deps.config, logger: deps.logger, alerts }));
  const keys = keyLookupCache(deps.db, deps.config.payments.apiKeyCacheMs);
  const keyContext = apiKeyContext(keys);
  const afterBody = (ctx: Koa.Context, next: Koa.Next) => {
    checkInput(ctx);
    keyContext(ctx);
    return next();
  };
  // not an async function: a bodiless request (GET) goes on without a promise of its own
  app.use((ctx, next) => {
    const reading = readBody(ctx);
    return reading ? reading.then(() => afterBody(ctx, next)) : afterBody(ctx, next);
  });
  app.use(routerMiddleware(router)); // router.routes(), each match's chain composed once
  app.use(router.allowedMethods());

  app.edge = createEdge({ router, keys, logger: deps.logger });
  return app;
}
