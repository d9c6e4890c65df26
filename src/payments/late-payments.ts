/**
 * GET /late-payments: the late payments (a provider's success on a payment that had already
 * expired or failed: the customer paid, the order was not sold), newest first, with what
 * LATE_PAYMENT_POLICY did about each: `refunded` / `refund_failed` (policy refund, through the
 * provider), `review` (policy review: refund or fulfil by hand). Rows are written by the worker
 * (activities/payments/late-results.ts, table payment_conflicts). Scope payments:read; the key's mode, and
 * its own payments or keyless ones (as /checkstatus). Cursor pagination as every list.
 */
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { guards } from '../http/guards';
import { requireApiKey } from '../http/middleware/api-key';
import { ApiKeyAuth, envelope, errorResponses, registry, z } from '../http/openapi';
import { afterCursor, pageFields, pageOf, PageQuery } from '../http/pagination';
import { validate } from '../http/validate';
import { satangToThb } from '../domain/money';
import { latePaymentsQuery } from './late-payments-repository';

const Resolution = z.enum(['review', 'refund_pending', 'refunded', 'refund_failed']);

const LatePaymentsQuery = PageQuery.extend({
  resolution: Resolution.optional().openapi({ description: 'only these (e.g. review: the ones waiting for a person)' }),
});

const LatePayment = registry.register(
  'LatePayment',
  z
    .object({
      id: z.string().openapi({ description: 'the conflict id (cfl_...)' }),
      orderId: z.string(),
      paymentId: z.string(),
      provider: z.string(),
      paymentStatus: z.enum(['expired', 'failed']).openapi({ description: 'what the payment had ended as' }),
      amount: z.number().openapi({ description: 'THB' }),
      resolution: Resolution,
      refundId: z.string().nullable(),
      detail: z.string().nullable().openapi({ description: 'why a refund failed' }),
      receiptId: z.string().nullable(),
      reference: z.string().nullable().openapi({ description: "the provider's reference" }),
      createdAt: z.string(),
      updatedAt: z.string(),
    })
    .openapi({
      example: {
        id: 'cfl_5e2a9c7b1d3f48a6b0c4e8d2f6a1b3c5',
        orderId: 'ORD-2003',
        paymentId: 'pay_c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5',
        provider: 'qr',
        paymentStatus: 'expired',
        amount: 89.03,
        resolution: 'refunded',
        refundId: 're_1f2e3d4c5b6a79880716253443526170',
        detail: null,
        receiptId: '48213',
        reference: 'QR-7781299',
        createdAt: '2026-11-22T08:16:02.118Z',
        updatedAt: '2026-11-22T08:16:03.940Z',
      },
    }),
);
const LatePaymentList = registry.register(
  'LatePaymentList',
  z.object({ latePayments: z.array(LatePayment), ...pageFields }),
);

registry.registerPath({
  method: 'get',
  path: '/late-payments',
  operationId: 'listLatePayments',
  summary: 'Late payments: a provider success after the payment expired or failed, and what LATE_PAYMENT_POLICY did',
  tags: ['payment'],
  security: [{ [ApiKeyAuth.name]: [] }],
  request: { query: LatePaymentsQuery },
  responses: {
    200: {
      description: 'one page, newest first',
      content: { 'application/json': { schema: envelope(LatePaymentList) } },
    },
    ...errorResponses([400, 401, 403, 429]),
  },
});

const iso = (d: unknown) => new Date(d as string).toISOString();

export function latePaymentRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db'>): Router {
  const r = new Router();
  const { limited } = guards(deps);
  r.get('/late-payments', limited, requireApiKey('payments:read'), async (ctx) => {
    const q = validate(LatePaymentsQuery, ctx.query);
    const key = ctx.state.apiKey!;
    const query = latePaymentsQuery(deps.db, key, q.resolution);
    afterCursor(query, { alias: 'c', table: 'payment_conflicts', cursor: q.starting_after, order: 'desc' });
    const page = await pageOf(query, q.limit, (c: Record<string, unknown>) => ({
      id: String(c.id),
      orderId: String(c.order_id),
      paymentId: String(c.payment_id),
      provider: String(c.provider),
      paymentStatus: c.payment_status as 'expired' | 'failed',
      amount: satangToThb(Number(c.amount_satang)),
      resolution: c.resolution as z.infer<typeof Resolution>,
      refundId: (c.refund_id as string | null) ?? null,
      detail: (c.detail as string | null) ?? null,
      receiptId: (c.receipt_id as string | null) ?? null,
      reference: (c.reference as string | null) ?? null,
      createdAt: iso(c.created_at),
      updatedAt: iso(c.updated_at),
    }));
    ctx.body = {
      statusCode: 200,
      body: { latePayments: page.items, hasMore: page.hasMore, nextCursor: page.nextCursor },
    };
  });
  return r;
}
