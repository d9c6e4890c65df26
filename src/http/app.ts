/**
 * createApp(deps) returns the Koa app of all three APIs (no listen): request ids, structured
 * logs, body parsing with limits, one error handler with SPEC.md's envelopes, 404/405.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { createNotifier } from '../notifier';
import type { AppDeps } from './deps';
import { bodyType, jsonBody } from './middleware/body';
import { accessLog, errorHandler, requestId } from './middleware/request';
import { apiKeyContext } from './middleware/api-key';
import { bankRoutes } from '../bank/routes';
import { callbackIpGuard } from '../callbacks/verify';
import { callbackRoutes } from '../callbacks/routes';
import { paymentRoutes } from '../payments/routes';
import { costRoutes } from '../payments/cost-routes';
import { isStorefrontPath, storefrontRoutes } from '../storefront/routes';
import { cors } from './middleware/cors';
import { systemRoutes } from './routes/system';
import { webhookRoutes } from '../webhooks/routes';
import { objectStoreRoutes } from '../objectstore/routes';
import { createAlertThrottle } from '../alerts';
import { callbackInputRefused } from '../callbacks/bad-input';
import { inputRule } from './middleware/input';
import { httpMetrics } from './middleware/metrics';
import { metricsRoutes } from './routes/metrics';
import { codecRoutes } from './routes/codec';
import { timelineRoutes } from '../payments/timeline';
import { memoizeRouteMatching } from './route-match';
import { latePaymentRoutes } from '../payments/late-payments';

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true;

  const bodyLimit = `${deps.config.bodyLimitBytes}b`;
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
  for (const r of [
    systemRoutes(deps),
    metricsRoutes(deps),
    codecRoutes(deps),
    paymentRoutes(deps),
    timelineRoutes(deps),
    latePaymentRoutes(deps),
    callbackRoutes({ ...deps, notifier, alerts }),
    webhookRoutes(deps),
    costRoutes(deps),
    bankRoutes(deps),
    storefrontRoutes(deps),
    objectStoreRoutes(deps),
  ])
    router.use(r.routes());
  memoizeRouteMatching(router); // every route is in: nothing is added after this

  app.use(httpMetrics());
  app.use(requestId());
  app.use(accessLog(deps.logger));
  app.use(errorHandler(deps.logger));
  app.use(cors({ origins: deps.config.storefront.shopOrigin, applies: (path) => isStorefrontPath(deps, path) }));
  app.use(callbackIpGuard(deps.config, deps.logger)); // before any body is read
  app.use(bodyType());
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
  app.use(inputRule(router, callbackInputRefused({ config: deps.config, logger: deps.logger, alerts })));
  app.use(apiKeyContext(deps.db, { cacheMs: deps.config.payments.apiKeyCacheMs }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
