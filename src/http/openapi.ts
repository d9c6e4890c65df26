/**
 * One OpenAPI registry: each router module registers its paths and zod schemas here,
 * and /openapi.json is generated from it.
 */
import { extendZodWithOpenApi, OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ErrorCode } from '../domain/errors';
import { OPERATION_DESCRIPTIONS, TAGS } from './openapi-descriptions';
import { errorExample } from './openapi-errors';

extendZodWithOpenApi(z);

export const registry = new OpenAPIRegistry();

export const ApiKeyAuth = registry.registerComponent('securitySchemes', 'ApiKeyAuth', {
  type: 'apiKey',
  in: 'header',
  name: 'X-API-Key',
  description:
    'An API key (`npm run apikey -- create --name N --scopes a,b [--sandbox]`); scopes decide what it may call (missing scope: 403 FORBIDDEN).',
});

registry.registerComponent('securitySchemes', 'CallbackSignature', {
  type: 'apiKey',
  in: 'header',
  name: 'X-Signature',
  description:
    "Callback HMAC (card, card network, bank app): `X-Signature` = hex HMAC-SHA256 with the provider's shared secret over `<X-Timestamp>.<raw body>`, `X-Timestamp` = unix seconds (at most CALLBACK_MAX_AGE_S old, 60 s ahead). The QR and wallet gateway forms carry a `signature` field instead: hex HMAC-SHA256 over the canonical JSON of the payload without `signature` (keys sorted recursively, no whitespace). Requests come only from the provider's IP ranges.",
});

const ALL_CODES = Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]];
const CALLBACK_NAMES = [
  'INVALID_INPUT',
  'MISSING_FIELD',
  'INVALID_SIGNATURE',
  'INVALID_IP',
  'INVALID_TIMESTAMP',
  'ORDER_NOT_FOUND',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'SERVICE_UNAVAILABLE',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
] as const;

export const PaymentError = registry.register(
  'PaymentError',
  z
    .object({
      statusCode: z.number().int().openapi({ example: 400 }),
      body: z.object({
        error: z.string().openapi({ example: 'orderId: a NUL character is not allowed' }),
        code: z.enum(ALL_CODES).openapi({ example: 'INVALID_INPUT' }),
        details: z.record(z.unknown()).openapi({ example: { field: 'orderId', in: 'body', reason: 'NUL character' } }),
      }),
    })
    .openapi({ description: 'Payment and storefront API error envelope; the HTTP status equals statusCode' }),
);

export const CallbackError = registry.register(
  'CallbackError',
  z
    .object({
      statusCode: z.number().int().openapi({ example: 401 }),
      body: z.object({
        error: z.enum(CALLBACK_NAMES).openapi({ example: 'INVALID_SIGNATURE' }),
        message: z.string().openapi({ example: 'HMAC signature invalid' }),
      }),
    })
    .openapi({ description: 'Callback API error envelope; the HTTP status equals statusCode' }),
);

const paidExample = {
  event: 'payment.status.updated',
  data: {
    orderId: 'ORD-2001',
    status: 'paid',
    amount: 120.5,
    timestamp: '2026-11-22T08:00:03Z',
    paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
    mode: 'live',
  },
  type: 'payment.paid',
} as const;
const addedField = 'on every event created since it was added; a resend of an older message sends it as first sent';

/** The body of every webhook delivery (also kept in a dead letter). */
export const PaymentStatusUpdated = registry.register(
  'PaymentStatusUpdated',
  z
    .object({
      event: z.literal('payment.status.updated'),
      type: z
        .enum(['payment.paid', 'payment.failed', 'payment.expired', 'payment.refunded', 'payment.partially_refunded'])
        .optional()
        .openapi({ description: `the specific event: payment.<data.status> (${addedField})` }),
      data: z.object({
        orderId: z.string(),
        status: z.enum(['authorized', 'paid', 'failed', 'expired', 'refunded', 'partially_refunded']).openapi({
          description: 'authorized: a card held with capture=false (docs/orders.md); paid after its capture',
        }),
        amount: z.number().openapi({
          description:
            'THB: the payment amount (authorized: the amount held; paid after a capture: the amount captured); on refunded and partially_refunded, the amount of that refund',
        }),
        timestamp: z.string().openapi({ description: 'ISO 8601 UTC' }),
        refundId: z.string().optional().openapi({
          description: 'on refunded and partially_refunded: the refund (re_...) that made the change',
        }),
        paymentId: z
          .string()
          .optional()
          .openapi({ description: `the payment (pay_...), as GET /payments/{paymentId} knows it (${addedField})` }),
        mode: z
          .enum(['live', 'sandbox'])
          .optional()
          .openapi({ description: `the mode of the payment's API key (${addedField})` }),
      }),
    })
    .openapi({ example: paidExample }),
);

registry.registerWebhook({
  method: 'post',
  path: 'payment.status.updated',
  operationId: 'paymentStatusUpdated',
  security: [],
  summary: 'payment.status.updated: sent to your endpoint URL on every terminal transition and on authorized',
  description:
    'Signed with Standard Webhooks: headers `webhook-id`, `webhook-timestamp` (unix seconds), `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" with the endpoint secret>`). First attempt, then retries after 1 s, 2 s, 4 s; then a dead letter (`/webhooks/dead-letters`, state `retrying`) that keeps being retried on the endpoint\'s `retrySchedule` (default: after 1 min, 5 min, 10 min, 30 min, 1 h, 2 h, 4 h, 8 h, 12 h, 24 h and 24 h: 3 days 3 h 46 min in all) until a 2xx, then gives up (state `gave_up`; replay or recover it). Answer 2xx to acknowledge.',
  tags: ['webhooks'],
  request: {
    headers: z.object({
      'webhook-id': z.string().openapi({ example: 'msg_2a1b3c' }),
      'webhook-timestamp': z.string().openapi({ example: '1795852800' }),
      'webhook-signature': z.string().openapi({ example: 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' }),
    }),
    body: {
      required: true,
      content: {
        'application/json': {
          schema: PaymentStatusUpdated,
          examples: {
            paid: { summary: 'a payment is paid', value: paidExample },
            partially_refunded: {
              summary: 'a refund of part of it (amount: that refund)',
              value: {
                event: 'payment.status.updated',
                data: {
                  orderId: 'ORD-2001',
                  status: 'partially_refunded',
                  amount: 20.5,
                  timestamp: '2026-11-22T09:12:40Z',
                  refundId: 're_5f0c8a2e9b1d47c3a6e4f8b2d0c9a7e1',
                  paymentId: 'pay_9d85008165c15b44c1dfeac49cca3667',
                  mode: 'live',
                },
                type: 'payment.partially_refunded',
              },
            },
          },
        },
      },
    },
  },
  responses: { 200: { description: 'any 2xx acknowledges the delivery' } },
});

/** Success envelope {statusCode, body} around a body schema. */
export const envelope = <T extends z.ZodTypeAny>(body: T) => z.object({ statusCode: z.literal(200), body });

export const errorResponses = (codes: number[], schema: z.ZodTypeAny = PaymentError) =>
  Object.fromEntries(
    codes.map((c) => [String(c), { description: `error (${c})`, content: { 'application/json': { schema } } }]),
  );

type Media = { schema?: Parameters<typeof errorExample>[1]; example?: unknown };
type Operation = {
  description?: string;
  parameters?: { name: string; in: string }[];
  operationId?: string;
  security?: unknown[];
  requestBody?: { required?: boolean };
  tags?: string[];
  responses?: Record<string, { content?: Record<string, Media> } | unknown>;
};

/** `post /bank/user/{userId}` -> `postBankUserByUserId` */
const operationIdOf = (method: string, path: string): string =>
  method +
  path
    .split(/[^A-Za-z0-9{}]+/)
    .filter(Boolean)
    .map((w) =>
      w.startsWith('{') ? `By${w.slice(1, 2).toUpperCase()}${w.slice(2, -1)}` : w[0].toUpperCase() + w.slice(1),
    )
    .join('');

const CALLBACK_HEADER_SIGNED = new Set(['/callback', '/cardnetcallback', '/bankappcallback']);

/** zod-to-openapi leaves null out of a nullable enum's values: put it in (type says null, enum must too). */
function nullableEnums(node: unknown): void {
  if (!node || typeof node !== 'object') return;
  const s = node as { type?: unknown; enum?: unknown[] };
  if (Array.isArray(s.enum) && Array.isArray(s.type) && s.type.includes('null') && !s.enum.includes(null))
    s.enum = [...s.enum, null]; // a copy: the generator shares the array with other schemas (and the domain)
  for (const v of Object.values(node)) nullableEnums(v);
}

/**
 * What the registry cannot say per route, applied to every operation: an operationId, request
 * bodies required, explicit security (`[]` for public operations; the callback HMAC where a
 * header carries it), the 415 of every body that is not of a type the route takes
 * (src/http/middleware/body.ts).
 */
function finish(doc: {
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, { required?: string[] }> };
}): void {
  for (const [path, item] of Object.entries(doc.paths ?? {}))
    for (const [method, op] of Object.entries(item)) {
      op.operationId ??= operationIdOf(method, path);
      op.description ??= OPERATION_DESCRIPTIONS[`${method.toUpperCase()} ${path}`];
      if (op.requestBody) op.requestBody.required = true;
      if (op.requestBody && op.responses && !op.responses['415'])
        op.responses['415'] = {
          description: 'error (415): the body is not of a type the operation takes',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentError' } } },
        };
      op.security ??= CALLBACK_HEADER_SIGNED.has(path) ? [{ CallbackSignature: [] }] : [];
      if (op.responses && !Object.keys(op.responses).some((c) => c.startsWith('4')))
        op.responses['404'] = {
          description: 'not found',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/PaymentError' } } },
        };
      for (const [status, res] of Object.entries(op.responses ?? {}))
        for (const media of Object.values((res as { content?: Record<string, Media> }).content ?? {}))
          if (status >= '400' && media.example === undefined)
            media.example = errorExample(status, media.schema, op, path, doc.components?.schemas ?? {});
    }
}

let cached: unknown;
export function openApiDocument(): unknown {
  if (cached) return cached;
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Talat',
      version: '2.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Storefront, payment and callback APIs of an online grocery shop. Payments run as Temporal workflows. Amounts are baht with satang decimals on the wire: 120.50 is ฿120.50 (not 12050 satang as Opn/Omise take it); at most 2 decimals. Ids, amounts and modes (live, sandbox): docs/concepts.md; error codes: docs/errors.md.\n\n' +
        'Authenticate with **Authorize** (X-API-Key), then **Try it out** on any operation. Errors: `{statusCode, body: {error, code, details}}` (payment and storefront APIs), `{statusCode, body: {error, message}}` (callback API). ' +
        'Every string field refuses NUL characters and unpaired surrogates (400 INVALID_INPUT naming the field).',
    },
    servers: [{ url: '/', description: 'the gateway serving this document (http://127.0.0.1:3000 under npm start)' }],
    tags: TAGS,
  });
  finish(doc as never);
  nullableEnums(doc);
  cached = doc;
  return cached;
}

export { z };
