/**
 * Orders API routes (docs/orders.md): POST /orders/{orderId}/adjustments, POST
 * /orders/{orderId}/finalize, GET /orders/{orderId}; the customer's approval page GET and POST
 * /approvals/{token} (no API key: the signed token opens one approval). Thin: validate
 * (./schemas), call the orders service (./service). The owner check is the service's.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { chooseLang } from '../checkout';
import { sendSmallPage } from '../http/small-page';
import type { AppDeps } from '../http/deps';
import { clockOf, guards, Id } from '../http/guards';
import { requireApiKey } from '../http/middleware/api-key';
import { z } from '../http/openapi';
import { validate } from '../http/validate';
import { approvalPage, type ApprovalPageState } from './approval-page';
import { AdjustmentRequest, ApprovalDecisionIn } from './schemas';
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

  const page = (
    ctx: Context,
    status: number,
    state: ApprovalPageState,
    approval?: Parameters<typeof approvalPage>[0]['approval'],
  ) => {
    const lang = chooseLang(ctx.query.lang, ctx.get('Accept-Language'));
    sendSmallPage(
      ctx,
      status,
      lang,
      approvalPage({ lang, state, token: ctx.params.token, merchantName: deps.config.payments.merchantName, approval }),
    );
  };
  const clock = clockOf(deps);

  r.get('/approvals/:token', limited, async (ctx) => {
    const found = await orders.approvalOfLink(ctx.params.token, clock());
    if (!found.ok) return page(ctx, found.reason === 'expired' ? 410 : 404, found.reason);
    const a = found.approval;
    const late = a.status === 'pending' && !a.requested && a.expiresAt.getTime() <= clock();
    page(ctx, 200, late ? 'late' : a.status, a);
  });

  r.post('/approvals/:token', limited, async (ctx) => {
    const { decision } = validate(ApprovalDecisionIn, ctx.request.body);
    const out = await orders.decideApproval(ctx.params.token, decision, clock());
    if (!out.ok) return page(ctx, out.reason === 'expired' ? 410 : 404, out.reason);
    if ('late' in out) return page(ctx, 409, 'late', out.approval);
    if (!out.recorded) return page(ctx, 200, out.approval.status, out.approval); // decided before: it stands
    const lang = ctx.query.lang === 'th' || ctx.query.lang === 'en' ? `?lang=${ctx.query.lang}` : '';
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(`/approvals/${encodeURIComponent(ctx.params.token)}${lang}`);
  });

  return r;
}

export { createOrderService } from './service';
