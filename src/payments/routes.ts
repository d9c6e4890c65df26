/**
 * Payment API routes (the contract "Payment API"): POST /cardpayment, POST /qrpayment,
 * GET /checkstatus/{orderId}. Thin: validate (./schemas), call the payment service (./service),
 * shape the {statusCode, body} envelope. calculate-cost lives beside this file.
 */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { clockOf, guards, Id, requireProvider } from '../http/guards';
import { optionalApiKey, requireApiKey } from '../http/middleware/api-key';
import { z } from '../http/openapi';
import { validate } from '../http/validate';
import { CardPaymentRequest, PaymentListQuery, QrPaymentRequest, type CardPaymentCreated } from './schemas';
import { createPaymentService, type PaymentSliceDeps } from './service';
import type { ApiKeyInfo } from '../domain/api-keys';
import type { Mode } from '../domain/mode';
import { AppError, ErrorCode } from '../domain/errors';

/** What another slice adds to these routes (the composition root passes it in). */
export interface PaymentRouteExtras {
  /** capture=false: an order's authorisation (src/orders) */
  authorizeCard?: (
    req: { orderId: string; userId: string; amount: number; token: string; callback?: string },
    key: ApiKeyInfo,
    mode: Mode,
  ) => Promise<CardPaymentCreated>;
}

export function paymentRoutes(
  deps: Pick<AppDeps, 'clock' | 'config' | 'db' | 'temporal'> & PaymentSliceDeps,
  extras: PaymentRouteExtras = {},
): Router {
  const r = new Router();
  const { limited, idempotent } = guards(deps);
  const payments = createPaymentService({
    config: deps.config,
    db: deps.db,
    temporal: deps.temporal,
    clock: clockOf(deps),
    refunds: deps.refunds,
    checkout: deps.checkout,
  });

  r.post('/cardpayment', limited, optionalApiKey('payments:write'), idempotent, async (ctx) => {
    const req = validate(CardPaymentRequest, ctx.request.body);
    const key = ctx.state.apiKey;
    const mode = key?.mode ?? (deps.config.simulators ? 'sandbox' : 'live');
    requireProvider(deps, 'card-provider', mode);
    if (req.capture === 'false') {
      if (!key)
        throw new AppError(ErrorCode.UNAUTHORIZED, 'capture=false (an order to settle later) needs an X-API-Key');
      if (!extras.authorizeCard) throw new AppError(ErrorCode.INVALID_INPUT, 'capture=false is not available here');
      ctx.body = { statusCode: 200, body: await extras.authorizeCard(req, key, mode) };
      return;
    }
    ctx.body = { statusCode: 200, body: await payments.createCardPayment(req, key, mode) };
  });

  r.post('/qrpayment', limited, requireApiKey('payments:write'), idempotent, async (ctx) => {
    const req = validate(QrPaymentRequest, ctx.request.body);
    ctx.body = { statusCode: 200, body: await payments.createQrPayment(req, ctx.state.apiKey!) };
  });

  r.get('/checkstatus/:orderId', limited, requireApiKey('payments:read'), async (ctx) => {
    const { orderId } = validate(z.object({ orderId: Id }), { orderId: ctx.params.orderId });
    ctx.body = { statusCode: 200, body: await payments.paymentStatus(orderId, ctx.state.apiKey!) };
  });

  r.get('/payments', limited, requireApiKey('payments:read'), async (ctx) => {
    const q = validate(PaymentListQuery, ctx.query);
    ctx.body = { statusCode: 200, body: await payments.listPayments(q, ctx.state.apiKey!) };
  });

  return r;
}
