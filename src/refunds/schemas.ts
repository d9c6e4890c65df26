/** POST /refund: its request and answer (zod, registered in the OpenAPI document). */
import { envelope, registry, z } from '../http/openapi';
import { Amount, apiErrors, Id, idempotencyHeader, rateLimitHeaders, security } from '../http/guards';
import { PAYMENT_STATUSES, type PaymentStatus } from '../payments';

export const RefundRequest = registry.register(
  'RefundRequest',
  z
    .object({
      orderId: Id.openapi({
        description:
          "your shop's order number: one payment per order id, across all keys and modes (the same order and amount again returns it)",
      }),
      amount: Amount.optional().openapi({ description: 'THB to refund; absent: the whole refundable rest' }),
      reason: z.string().max(500).optional(),
    })
    .strict()
    .openapi({ example: { orderId: 'ORD-2001', amount: 20.5, reason: 'one item missing' } }),
);

export const RefundCreated = registry.register(
  'RefundCreated',
  z
    .object({
      refundId: z.string(),
      orderId: z.string(),
      paymentId: z.string(),
      status: z
        .enum(['succeeded', 'failed'])
        .openapi({ description: 'failed: the provider refused or could not be reached; no money was refunded' }),
      amount: z.number(),
      currency: z.literal('THB'),
      reason: z.string().optional(),
      failureReason: z.string().optional(),
      payment: z.object({
        status: z.enum(PAYMENT_STATUSES as [PaymentStatus, ...PaymentStatus[]]),
        amount: z.number(),
        refundedAmount: z.number(),
      }),
    })
    .openapi({
      example: {
        refundId: 're_a893559aa54e59d461e5edcc2acaddc2',
        orderId: 'ORD-2001',
        paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
        status: 'succeeded',
        amount: 20.5,
        currency: 'THB',
        reason: 'one item missing',
        payment: { status: 'paid', amount: 120.5, refundedAmount: 20.5 },
      },
    }),
);

registry.registerPath({
  method: 'post',
  path: '/refund',
  summary: 'Refund a paid payment, in full or in part',
  description:
    "Runs as a `refund` update of the order's refunds workflow (refunds-<orderId>, started on demand), which serialises the order's refunds and calls the card provider (card payments) or the bank (the others): sandbox simulators in sandbox mode. Only a paid payment can be refunded (409 CONFLICT); the refunded total never exceeds the amount (400 INVALID_INPUT). A full refund moves the payment to refunded; a partial one keeps it paid with refundedAmount. Each successful refund emits payment.status.updated (refunded or partially_refunded, with the refund's amount and refundId). Idempotency-Key honoured. Scope payments:write.",
  tags: ['payment'],
  security,
  request: { headers: idempotencyHeader, body: { content: { 'application/json': { schema: RefundRequest } } } },
  responses: {
    200: {
      description: 'the refund and the payment after it',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(RefundCreated) } },
    },
    ...apiErrors([400, 401, 403, 404, 409, 413, 422, 429, 503]),
  },
});

export type RefundRequest = z.infer<typeof RefundRequest>;
export type RefundCreated = z.infer<typeof RefundCreated>;
