/** POST /refund: the refunds slice's one route (a payments:write key, Idempotency-Key honoured). */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { guards } from '../http/guards';
import { requireApiKey } from '../http/middleware/api-key';
import { validate } from '../http/validate';
import { RefundRequest } from './schemas';
import { createRefundService, type RefundServiceDeps } from './service';

export function refundRoutes(
  deps: Pick<AppDeps, 'clock' | 'config' | 'db' | 'temporal'> & Pick<RefundServiceDeps, 'payments'>,
): Router {
  const r = new Router();
  const { limited, idempotent } = guards(deps);
  const refunds = createRefundService(deps);
  r.post('/refund', limited, requireApiKey('payments:write'), idempotent, async (ctx) => {
    const req = validate(RefundRequest, ctx.request.body);
    ctx.body = {
      statusCode: 200,
      body: await refunds.refund(req, ctx.state.apiKey!, ctx.get('Idempotency-Key') || undefined),
    };
  });
  return r;
}
