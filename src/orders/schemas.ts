/**
 * Orders API validators and response schemas (docs/orders.md), registered in the OpenAPI
 * document with their paths. Requests are `.strict()`: unknown fields are refused.
 */
import { envelope, registry, z } from '../http/openapi';
import { thbToSatang } from '../domain/money';
import { apiErrors, Id, idempotencyHeader, rateLimitHeaders, security } from '../http/guards';
import { ADJUSTMENT_REASONS, APPROVAL_STATUSES } from './index';

/** A signed THB amount (an adjustment may lower or raise the basket): satang, never 0. */
const SignedAmount = z
  .any()
  .transform((v: unknown, ctx) => {
    const negative = typeof v === 'number' ? v < 0 : typeof v === 'string' && v.trim().startsWith('-');
    const abs = typeof v === 'number' ? Math.abs(v) : typeof v === 'string' ? v.trim().replace(/^-/, '') : v;
    const r = thbToSatang(abs);
    if (!r.ok) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `amount is invalid (${r.reason}): a signed THB amount with at most 2 decimals, not 0`,
      });
      return z.NEVER;
    }
    return negative ? -r.satang : r.satang;
  })
  .openapi({ type: 'number', example: -45.5, description: 'THB, signed: negative lowers the basket' });

export const AdjustmentRequest = registry.register(
  'OrderAdjustmentRequest',
  z
    .object({
      lines: z
        .array(
          z
            .object({
              description: z.string().min(1).max(200),
              amount: SignedAmount,
              reason: z.enum(ADJUSTMENT_REASONS),
            })
            .strict(),
        )
        .min(1)
        .max(50),
    })
    .strict()
    .openapi({
      example: {
        lines: [
          { description: 'Jasmine rice 5 kg: out of stock', amount: -189, reason: 'out_of_stock' },
          { description: 'Chicken 1.2 kg weighed 1.34 kg', amount: 12.6, reason: 'weight' },
        ],
      },
    }),
);
export type AdjustmentRequest = z.infer<typeof AdjustmentRequest>;

const Line = z.object({
  description: z.string(),
  amount: z.number(),
  reason: z.enum(ADJUSTMENT_REASONS),
  approval: z
    .object({
      approvalId: z.string(),
      status: z.enum(APPROVAL_STATUSES).openapi({
        description:
          'pending: waiting for the customer; approved / declined: their decision; timed_out: nobody decided by expiresAt and ORDER_APPROVAL_DEFAULT applied. A declined line (or one timed out with the default decline) is not in the final amount',
      }),
      url: z.string().openapi({
        description:
          'the signed page where the customer approves or declines (Thai or English); forward it to the customer (also sent in the webhook order.approval_requested when it exists: see docs/orders.md)',
      }),
      expiresAt: z.string(),
      decidedAt: z.string().nullable(),
    })
    .optional()
    .openapi({
      description: `present on a line with reason substitution raising the price above ORDER_APPROVAL_THRESHOLD: it waits for the customer's approval`,
    }),
});

export const OrderOut = registry.register(
  'Order',
  z
    .object({
      orderId: z.string(),
      paymentId: z.string(),
      method: z.enum(['card', 'qr']),
      status: z.enum([
        'authorizing',
        'open',
        'finalizing',
        'awaiting_topup',
        'settled',
        'short',
        'failed',
        'attention',
      ]),
      statusReason: z.string().nullable(),
      currency: z.literal('THB'),
      estimateAmount: z.number().openapi({ description: 'THB: the basket as first paid or authorised (no margin)' }),
      authorizedAmount: z.number(),
      capturedAmount: z.number(),
      paidAmount: z.number(),
      refundedAmount: z.number(),
      finalAmount: z.number().nullable(),
      lapsesAt: z.string().nullable(),
      adjustments: z.array(
        z.object({
          adjustmentId: z.string(),
          status: z.enum(['pending', 'applied', 'rejected']),
          amount: z.number(),
          lines: z.array(Line),
          rejection: z.string().nullable(),
          createdAt: z.string(),
        }),
      ),
      topUps: z.array(
        z.object({
          paymentId: z.string(),
          orderId: z.string().openapi({ description: "the top-up's own order id (<orderId>.topup)" }),
          amount: z.number(),
          status: z.enum(['pending', 'paid', 'expired']),
          qrPayload: z.string().nullable().openapi({ description: 'the PromptPay payload to pay the difference' }),
          expiresAt: z.string().nullable(),
          checkoutUrl: z.string().nullable().openapi({
            description:
              'the hosted checkout page of the top-up (QR, amount, countdown, what it is for): a signed link, as POST /qrpayment gives',
          }),
        }),
      ),
      authorizations: z
        .array(
          z.object({
            chargeId: z.string().nullable(),
            purpose: z.enum(['estimate', 'difference']).openapi({
              description:
                'estimate: the first authorisation (estimate + margin); difference: the new authorisation of a final amount above it, on the card on file',
            }),
            amount: z.number().openapi({ description: 'THB authorised' }),
            capturedAmount: z.number().openapi({ description: 'THB captured on this authorisation' }),
            status: z.enum(['pending', 'authorized', 'declined', 'captured', 'voided', 'failed']),
            failureReason: z.string().nullable(),
          }),
        )
        .openapi({ description: "a card order's authorisations and what each captured; empty for a QR order" }),
    })
    .openapi({
      example: {
        orderId: 'ORD-3001',
        paymentId: 'pay_3c1f0b7a9e2d48c6a5b4f1e0d9c8b7a6',
        method: 'card',
        status: 'settled',
        statusReason: 'captured 823.6 THB of 1100 THB authorised; the rest released',
        currency: 'THB',
        estimateAmount: 1000,
        authorizedAmount: 1100,
        capturedAmount: 823.6,
        paidAmount: 823.6,
        refundedAmount: 0,
        finalAmount: 823.6,
        lapsesAt: '2026-12-03T08:00:00.000Z',
        adjustments: [
          {
            adjustmentId: 'adj_5b1d3c0f6a2e4b8c9d7e1f0a2b3c4d5e',
            status: 'applied',
            amount: -176.4,
            lines: [
              { description: 'Jasmine rice 5 kg: out of stock', amount: -189, reason: 'out_of_stock' },
              { description: 'Chicken 1.2 kg weighed 1.34 kg', amount: 12.6, reason: 'weight' },
            ],
            rejection: null,
            createdAt: '2026-11-27T09:10:00.000Z',
          },
        ],
        topUps: [],
        authorizations: [
          {
            chargeId: 'chrg_test_5f1c2b3a4d5e6f708192a3b4',
            purpose: 'estimate',
            amount: 1100,
            capturedAmount: 823.6,
            status: 'captured',
            failureReason: null,
          },
        ],
      },
    }),
);
export type OrderOut = z.infer<typeof OrderOut>;

const orderPath = { params: z.object({ orderId: Id.openapi({ example: 'ORD-3001' }) }) };

registry.registerPath({
  method: 'post',
  path: '/orders/{orderId}/adjustments',
  summary: 'Record adjustments of a picked order',
  description:
    "Records lines that change the basket (out of stock, substitution, weight) while the order is open: a card order authorised with capture=false, or a paid PromptPay payment. Applied one at a time by the order's workflow; after finalize: 409. Scope payments:write.",
  tags: ['orders'],
  security,
  request: {
    ...orderPath,
    headers: idempotencyHeader,
    body: { required: true, content: { 'application/json': { schema: AdjustmentRequest } } },
  },
  responses: {
    200: {
      description: 'the order after the adjustment',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(OrderOut) } },
    },
    ...apiErrors([400, 401, 403, 404, 409, 413, 422, 429, 503]),
  },
});

registry.registerPath({
  method: 'post',
  path: '/orders/{orderId}/finalize',
  summary: 'Settle a picked order',
  description:
    'Fixes the final amount (the estimate plus the applied adjustments) and settles it once: a card order captures it and releases the rest of the authorisation; a PromptPay order refunds the difference. Repeated or concurrent calls settle once. Scope payments:write.',
  tags: ['orders'],
  security,
  request: { ...orderPath, headers: idempotencyHeader },
  responses: {
    200: {
      description: 'the settled order',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(OrderOut) } },
    },
    ...apiErrors([400, 401, 403, 404, 409, 429, 503]),
  },
});

registry.registerPath({
  method: 'get',
  path: '/orders/{orderId}',
  summary: "An order's settlement",
  description:
    'Status, the amounts authorised, captured, paid, refunded and final, and the adjustments. Scope payments:read.',
  tags: ['orders'],
  security,
  request: orderPath,
  responses: {
    200: {
      description: 'the order',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(OrderOut) } },
    },
    ...apiErrors([400, 401, 403, 404, 429]),
  },
});

/** The approval page's form (or a JSON body): the customer's decision. */
export const ApprovalDecisionIn = z
  .object({ decision: z.enum(['approve', 'decline']) })
  .strict()
  .openapi({ example: { decision: 'approve' } });

const ApprovalToken = z.object({
  token: z.string().openapi({
    description: "the signed token of an adjustment line's `approval.url`",
    example: 'apr_5b1d3c0f6a2e4b8c9d7e1f0a2b3c4d5e.tomkcw.hsWihesnW4dBh-IHEzO7OA',
  }),
});
const html = (description: string) => ({
  description,
  content: { 'text/html': { schema: z.string(), example: '<!doctype html><html lang="en">…</html>' } },
});
registry.registerPath({
  method: 'get',
  path: '/approvals/{token}',
  operationId: 'approvalPage',
  summary: "A costlier substitution's approval page (HTML; Thai or English by Accept-Language or ?lang=th|en)",
  description: 'No API key: the signed token opens exactly one approval. See docs/orders.md.',
  tags: ['orders'],
  security: [],
  request: { params: ApprovalToken, query: z.object({ lang: z.enum(['th', 'en']).optional() }) },
  responses: {
    200: html('the substitution, its price difference and the approve / decline buttons, or its outcome'),
    404: html('a link that is not valid (tampered, or no such approval)'),
    410: html('a link past its expiry'),
    429: { description: 'too many requests from this address' },
  },
});
registry.registerPath({
  method: 'post',
  path: '/approvals/{token}',
  operationId: 'approvalDecide',
  summary: "The page's buttons: the customer approves or declines the substitution",
  description:
    "Recorded on the approval first, then delivered to the order's workflow with its proof. The first decision stands: a second one changes nothing. The page's buttons post it as a form (`decision=approve`); JSON is taken too.",
  tags: ['orders'],
  security: [],
  request: {
    params: ApprovalToken,
    query: z.object({ lang: z.enum(['th', 'en']).optional() }),
    body: {
      required: true,
      content: {
        'application/json': { schema: ApprovalDecisionIn },
      },
    },
  },
  responses: {
    200: html('decided before (or timed out): the page shows the decision that stands; nothing changes'),
    303: html('the decision recorded: to the approval page, which shows the outcome (Location)'),
    ...apiErrors([400]),
    404: html('a link that is not valid (tampered, or no such approval)'),
    409: html('past the deadline: nothing recorded (the shop default applies)'),
    410: html('a link past its expiry'),
    429: { description: 'too many requests from this address' },
  },
});
