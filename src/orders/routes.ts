/**
 * Orders API routes (docs/orders.md): POST /orders/{orderId}/adjustments, POST
 * /orders/{orderId}/finalize, GET /orders/{orderId}. Thin: validate (./schemas), call the
 * orders service (./service), shape the {statusCode, body} envelope. The owner check is the
 * service's: another key's order, or none, is 404.
 */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { guards, Id } from '../http/guards';
import { requireApiKey } from '../http/middleware/api-key';
import { z } from '../http/openapi';
import { validate } from '../http/validate';
import { AdjustmentRequest } from './schemas';
import type { OrderService } from './service';

export function orderRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db'>, orders: OrderService): Router {
  const r = new Router();
  const { limited, idempotent } = guards(deps);
  const orderIdOf = (raw: string) => validate(z.object({ orderId: Id }), { orderId: raw }).orderId;

  r.post('/orders/:orderId/adjustments', limited, requireApiKey('payments:write'), idempotent, async (ctx) => {
    const orderId = orderIdOf(ctx.params.orderId);
    const req = validate(AdjustmentRequest, ctx.request.body);
    ctx.body = {
      statusCode: 200,
      body: await orders.adjust(orderId, req, ctx.state.apiKey!, ctx.get('Idempotency-Key') || undefined),
    };
  });

  r.post('/orders/:orderId/finalize', limited, requireApiKey('payments:write'), idempotent, async (ctx) => {
    const orderId = orderIdOf(ctx.params.orderId);
    ctx.body = { statusCode: 200, body: await orders.finalize(orderId, ctx.state.apiKey!) };
  });

  r.get('/orders/:orderId', limited, requireApiKey('payments:read'), async (ctx) => {
    const orderId = orderIdOf(ctx.params.orderId);
    ctx.body = { statusCode: 200, body: await orders.orderView(orderId, ctx.state.apiKey!) };
  });

  return r;
}

export { createOrderService } from './service';
