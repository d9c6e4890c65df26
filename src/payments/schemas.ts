/**
 * Payment API request validators and response schemas (the contract "Payment API"), registered in the
 * OpenAPI document with their paths. Requests are `.strict()`: unknown fields are refused.
 */
import { envelope, registry, z } from '../http/openapi';
import { MODES } from '../domain/mode';
import { Amount, apiErrors, HttpUrl, Id, idempotencyHeader, rateLimitHeaders, security } from '../http/guards';
import { PageQuery, pageFields } from '../http/pagination';

export const CardPaymentRequest = registry.register(
  'CardPaymentRequest',
  z
    .object({
      orderId: Id.openapi({
        description:
          "your shop's order number: one payment per order id, across all keys and modes (the same order and amount again returns it)",
      }),
      userId: Id.openapi({
        description: "your shop's id of the person who pays (kept on the payment; the bank routes key users by it)",
      }),
      amount: Amount,
      token: z
        .string()
        .min(1)
        .max(256)
        .openapi({ description: "one-time card token from the card provider's client library" }),
      callback: HttpUrl.optional().openapi({
        description: 'where the user is redirected after the card callback (http or https URL)',
      }),
      capture: z.enum(['true', 'false']).optional().openapi({
        description:
          'false: authorise the amount plus ORDER_AUTH_MARGIN_PERCENT and settle the picked basket later (POST /orders/{orderId}/finalize, docs/orders.md); needs an X-API-Key',
      }),
    })
    .strict()
    .openapi({
      example: {
        orderId: 'ORD-2002',
        userId: 'u-1',
        amount: 250.5,
        token: 'tok_test',
        callback: 'http://localhost:5173/orders/ORD-2002/paid',
      },
    }),
);

export const QrPaymentRequest = registry.register(
  'QrPaymentRequest',
  z
    .object({
      orderId: Id.openapi({
        description:
          "your shop's order number: one payment per order id, across all keys and modes (the same order and amount again returns it)",
      }),
      userId: Id.openapi({
        description: "your shop's id of the person who pays (kept on the payment; the bank routes key users by it)",
      }),
      amount: Amount,
      customerId: Id.openapi({
        description:
          'your customer reference for this payment (e.g. a CRM number): kept and answered back, not interpreted; may equal userId',
      }),
      ref2: z
        .string()
        .regex(/^[A-Z0-9]{1,20}$/, '1 to 20 upper-case letters or digits')
        .optional()
        .openapi({
          description: 'bill payment Ref2 (only with PROMPTPAY_BILLER_ID): 1 to 20 upper-case letters or digits',
          example: 'BRANCH01',
        }),
      returnUrl: HttpUrl.optional().openapi({
        description:
          'where the hosted checkout page (checkoutUrl) links back to: a URL on one of CHECKOUT_RETURN_ORIGINS (unset: the origins of SHOP_ORIGIN, http://localhost:5173 in development); another origin is 400 INVALID_INPUT',
        example: 'http://localhost:5173/orders/ORD-1001',
      }),
    })
    .strict()
    .openapi({
      example: {
        orderId: 'ORD-2001',
        userId: 'u-1',
        amount: 120.5,
        customerId: 'c-1',
        returnUrl: 'http://localhost:5173/orders/ORD-2001',
      },
    }),
);

const Status = z.enum(['pending', 'authorized', 'paid', 'failed', 'expired', 'refunded']);

/** only on a card payment authorised with capture=false (docs/orders.md) */
const Authorization = z
  .object({
    state: z.enum(['authorized', 'captured', 'partially_captured', 'released', 'capture_failed']),
    authorizedAmount: z.number(),
    capturedAmount: z.number(),
    releasedAmount: z.number(),
  })
  .optional()
  .openapi({
    description:
      'a card authorisation (capture=false): held (`authorized`), captured in full or in part (the rest released), released, or its capture refused',
  });
const TopUpOf = z.string().optional().openapi({
  description: 'only on a top-up payment (order id `<orderId>.topup`): the order whose difference it pays',
});

const RefundOut = z.object({
  refundId: z.string().openapi({ description: 're_...' }),
  amount: z.number(),
  status: z.enum(['pending', 'succeeded', 'failed']),
  reason: z.string().nullable().optional(),
  failureReason: z.string().nullable().optional(),
  createdAt: z.string(),
});

export const CardPaymentCreated = registry.register(
  'CardPaymentCreated',
  z
    .object({
      paymentId: z.string(),
      orderId: z.string(),
      method: z.literal('card'),
      status: Status,
      amount: z.number(),
      currency: z.literal('THB'),
      chargeId: z
        .string()
        .nullable()
        .openapi({ description: "the provider's charge id (objectId in its callback); null if not created yet" }),
      authorizeUri: z
        .string()
        .nullable()
        .openapi({ description: 'where to send the user for 3-D Secure, when the provider asks for it' }),
      failureReason: z.string().optional(),
    })
    .openapi({
      example: {
        paymentId: 'pay_3c1f0b7a9e2d48c6a5b4f1e0d9c8b7a6',
        orderId: 'ORD-2002',
        method: 'card',
        status: 'pending',
        amount: 250.5,
        currency: 'THB',
        chargeId: 'chrg_test_5xq3vfc1tna4dbm0ox9',
        authorizeUri: null,
      },
    }),
);

export const QrPaymentCreated = registry.register(
  'QrPaymentCreated',
  z
    .object({
      paymentId: z.string(),
      orderId: z.string(),
      method: z.literal('qr'),
      status: Status,
      amount: z.number(),
      currency: z.literal('THB'),
      customerId: z.string(),
      expiresAt: z
        .string()
        .openapi({ description: 'ISO 8601 UTC; the payment ends `expired` when no result arrived by then' }),
      qr: z.object({
        payload: z.string().openapi({
          description:
            'PromptPay (EMVCo) payload: tags 00 01, 29 (PROMPTPAY_ID) or 30 (bill payment: PROMPTPAY_BILLER_ID, Ref1 = the order reference, Ref2), 58 53 54, 59 merchant name, 60 city, 62 reference label, 63 CRC. Top-level tags may come in any order.',
          example:
            '00020101021229370016A000000677010111011300668123456785802TH53037645406120.505910Talat Shop6007Bangkok62210517ORD2001DNN960PGFI6304A9A3',
        }),
        reference: z.string().openapi({
          description:
            'the order reference (bill payment Ref1, tag 62 reference label): a QR callback may name the payment by it',
        }),
        crc: z.string().openapi({ description: 'CRC16 (CCITT-FALSE) of the payload: its last 4 characters' }),
        image: z.string().openapi({ description: 'the payload as a QR code: PNG data URL' }),
      }),
      checkoutUrl: z.string().openapi({
        description:
          'the hosted checkout page of this payment (QR, amount, countdown, live status): a signed link, valid until an hour after expiresAt',
      }),
    })
    .openapi({
      example: {
        paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
        orderId: 'ORD-2001',
        method: 'qr',
        status: 'pending',
        amount: 120.5,
        currency: 'THB',
        customerId: 'c-1',
        expiresAt: '2026-11-22T08:15:00.000Z',
        qr: {
          payload:
            '00020101021229370016A000000677010111011300668123456785802TH53037645406120.505910Talat Shop6007Bangkok62210517ORD2001DNN960PGFI6304A9A3',
          reference: 'ORD2001DNN960PGFI',
          crc: 'A9A3',
          image: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAQAAAAEAAQMAAABmvDolAAAABlBMVEUAAAD///+l2Z/dAAAA',
        },
        checkoutUrl:
          'http://127.0.0.1:3000/checkout/pay_9d85008165c15b44c1dfeac49cca3667.towf51.hsWihesnW4dBh-IHEzO7OA',
      },
    }),
);

export const PaymentStatusOut = registry.register(
  'PaymentStatus',
  z
    .object({
      paymentId: z.string(),
      orderId: z.string(),
      method: z.string(),
      status: Status,
      amount: z.number(),
      currency: z.literal('THB'),
      mode: z.enum(MODES),
      createdAt: z.string(),
      updatedAt: z.string(),
      expiresAt: z.string().nullable(),
      providerRef: z.string().nullable(),
      history: z.array(z.object({ status: Status, at: z.string(), reason: z.string() })),
      refundedAmount: z.number().openapi({ description: 'THB refunded so far (succeeded refunds)' }),
      authorization: Authorization,
      topUpOf: TopUpOf,
      refunds: z
        .array(RefundOut)
        .openapi({ description: 'every refund request, oldest first; failed ones count nothing' }),
    })
    .openapi({
      example: {
        paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
        orderId: 'ORD-2001',
        method: 'qr',
        status: 'paid',
        amount: 120.5,
        currency: 'THB',
        mode: 'sandbox',
        createdAt: '2026-11-22T08:00:00.213Z',
        updatedAt: '2026-11-22T08:00:01.501Z',
        expiresAt: '2026-11-22T08:15:00.212Z',
        providerRef: 'QR-7781203',
        history: [
          { status: 'pending', at: '2026-11-22T08:00:00.213Z', reason: 'created' },
          { status: 'paid', at: '2026-11-22T08:00:01.501Z', reason: 'qr: success' },
        ],
        refundedAmount: 20.5,
        refunds: [
          {
            refundId: 're_a893559aa54e59d461e5edcc2acaddc2',
            amount: 20.5,
            status: 'succeeded',
            reason: 'one item missing',
            failureReason: null,
            createdAt: '2026-11-22T09:30:00.000Z',
          },
        ],
      },
    }),
);

registry.registerPath({
  method: 'post',
  path: '/cardpayment',
  summary: 'Start a card payment (public, form-encoded)',
  description:
    'Starts the payment workflow payment-<orderId>; an activity creates the charge at the card provider (sandbox simulator unless live). Waits up to 10 s for the charge, then answers. The same order and amount again returns the existing payment; another amount is 409. An X-API-Key is optional: with one, the payment belongs to that key (its mode, its webhooks).',
  tags: ['payment'],
  request: {
    headers: idempotencyHeader,
    body: { content: { 'application/x-www-form-urlencoded': { schema: CardPaymentRequest } } },
  },
  responses: {
    200: {
      description: 'payment started (or the existing payment of this order)',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(CardPaymentCreated) } },
    },
    ...apiErrors([400, 401, 403, 409, 413, 422, 429, 503]),
  },
});

registry.registerPath({
  method: 'post',
  path: '/qrpayment',
  summary: 'Create a PromptPay QR payment',
  description:
    "Builds the PromptPay payload for the merchant's PromptPay id (PROMPTPAY_ID) and the amount, and starts the QR payment workflow, which waits for the QR callback or ends expired after QR_EXPIRY_S. The same order and amount again returns the existing payment (same QR); another amount is 409 CONFLICT. Scope payments:write.",
  tags: ['payment'],
  security,
  request: { headers: idempotencyHeader, body: { content: { 'application/json': { schema: QrPaymentRequest } } } },
  responses: {
    200: {
      description: 'the QR payment',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(QrPaymentCreated) } },
    },
    ...apiErrors([400, 401, 403, 409, 413, 422, 429, 503]),
  },
});

registry.registerPath({
  method: 'get',
  path: '/checkstatus/{orderId}',
  summary: "A payment's status and history",
  description:
    "Reads the record the payment's workflow keeps (the payments row and its events). A key sees the payments of its own mode that it created, and public card payments. Scope payments:read.",
  tags: ['payment'],
  security,
  request: { params: z.object({ orderId: Id.openapi({ example: 'ORD-2001' }) }) },
  responses: {
    200: {
      description: 'status and history',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(PaymentStatusOut) } },
    },
    ...apiErrors([400, 401, 403, 404, 429, 503]),
  },
});

export const PaymentListQuery = PageQuery.extend({
  status: Status.optional(),
  method: z.enum(['card', 'qr', 'wallet', 'cardnet', 'bankapp']).optional(),
  created_gte: z
    .string()
    .datetime({ offset: true })
    .optional()
    .openapi({ description: 'created at or after (ISO 8601)' }),
  created_lt: z.string().datetime({ offset: true }).optional().openapi({ description: 'created before (ISO 8601)' }),
}).strict();

export const PaymentSummary = registry.register(
  'PaymentSummary',
  z.object({
    paymentId: z.string(),
    orderId: z.string(),
    method: z.string(),
    status: Status,
    amount: z.number(),
    refundedAmount: z.number().openapi({ description: 'THB refunded so far' }),
    authorization: Authorization,
    topUpOf: TopUpOf,
    currency: z.literal('THB'),
    mode: z.enum(['live', 'sandbox']),
    createdAt: z.string(),
    updatedAt: z.string(),
  }),
);
export const PaymentList = registry.register(
  'PaymentList',
  z.object({ payments: z.array(PaymentSummary), ...pageFields }).openapi({
    example: {
      payments: [
        {
          paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
          orderId: 'ORD-2001',
          method: 'qr',
          status: 'paid',
          amount: 120.5,
          refundedAmount: 20.5,
          currency: 'THB',
          mode: 'sandbox',
          createdAt: '2026-11-22T08:00:00.213Z',
          updatedAt: '2026-11-22T09:30:00.412Z',
        },
      ],
      hasMore: true,
      nextCursor: 'pay_9d85008165c15b44c1dfeac49cca3667',
    },
  }),
);

registry.registerPath({
  method: 'get',
  path: '/payments',
  summary: "The key's own payments, newest first",
  description:
    'Payments created with this API key (its mode), filtered by status, method and creation time; cursor pagination (limit, starting_after = nextCursor). Scope payments:read.',
  tags: ['payment'],
  security,
  request: { query: PaymentListQuery },
  responses: {
    200: {
      description: 'one page',
      headers: rateLimitHeaders,
      content: { 'application/json': { schema: envelope(PaymentList) } },
    },
    ...apiErrors([400, 401, 403, 429]),
  },
});

export type PaymentListQuery = z.infer<typeof PaymentListQuery>;
export type PaymentSummary = z.infer<typeof PaymentSummary>;
export type PaymentList = z.infer<typeof PaymentList>;
export type CardPaymentRequest = z.infer<typeof CardPaymentRequest>;
export type QrPaymentRequest = z.infer<typeof QrPaymentRequest>;
export type CardPaymentCreated = z.infer<typeof CardPaymentCreated>;
export type QrPaymentCreated = z.infer<typeof QrPaymentCreated>;
export type PaymentStatusOut = z.infer<typeof PaymentStatusOut>;
