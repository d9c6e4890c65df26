/**
 * The Callback API's bodies as zod schemas, registered in the OpenAPI document with each
 * endpoint's path, headers and answers (the contract "Callback API"); ./routes.ts validates with them.
 */
import { CALLBACK_ENDPOINTS, CALLBACK_PATH_OF, WALLET_HANDLER_PATH, type CallbackSchema } from './index';
import type { CallbackProvider } from '../domain/providers';
import { CallbackError, errorResponses, registry, z } from '../http/openapi';

const Ref = z.string().min(1).max(256);
const IsoTimestamp = z.string().openapi({ example: '2026-11-22T08:00:00Z', description: 'ISO 8601 UTC' });
const Signature = z
  .string()
  .openapi({ description: 'hex HMAC-SHA256 over the canonical JSON of the payload without `signature`' });
const WireAmount = z.number().openapi({ example: 250.5, description: 'THB; must equal the payment amount' });

export const CardCallback = registry.register(
  'CardCallback',
  z
    .object({
      objectId: Ref.openapi({ description: 'charge id at the card provider' }),
      token: z.string().max(256),
      status: z.enum(['true', 'false']),
      message: z.string().max(2000).optional(),
      saveCard: z.enum(['true', 'false']).optional(),
    })
    .openapi({
      example: {
        objectId: 'chrg_test_0123456789abcdef01234567',
        token: 'tok_test',
        status: 'true',
        message: '',
        saveCard: 'false',
      },
    }),
);
export const CardTestCallback = z.object({
  status: z.enum(['success', 'failed', 'true', 'false']),
  orderId: Ref,
  amount: z.union([z.string(), z.number()]),
  transactionId: Ref,
});
const QrCallback = registry.register(
  'QrCallback',
  z
    .object({
      paymentId: Ref,
      status: z.enum(['success', 'failed']),
      amount: WireAmount,
      orderId: Ref,
      timestamp: IsoTimestamp,
      signature: Signature,
    })
    .openapi({
      example: {
        paymentId: 'pay_0123456789abcdef0123456789abcdef',
        status: 'success',
        amount: 250.5,
        orderId: 'ORD-1001',
        timestamp: '2026-11-22T08:00:00Z',
        signature: 'c61490988926999e93634b1114a956d668e0d197aec6962d2f6e4f4889d8048c',
      },
    }),
);
const WalletGatewayCallback = registry.register(
  'WalletGatewayCallback',
  z
    .object({
      walletId: Ref,
      status: z.enum(['success', 'failed']),
      amount: WireAmount,
      orderId: Ref,
      timestamp: IsoTimestamp,
      signature: Signature,
    })
    .openapi({
      example: {
        walletId: 'W-20261122-0001',
        status: 'success',
        amount: 250.5,
        orderId: 'ORD-1001',
        timestamp: '2026-11-22T08:00:00Z',
        signature: '03972a019f6e4056996e3cda6672edba51e944d33649d516d699c3e7b094fdfe',
      },
    }),
);
const HandlerForm = registry.register(
  'HandlerFormCallback',
  z
    .object({
      orderId: z.string().openapi({ description: 'required, non-empty; alias order_id' }),
      paymentId: z.string().openapi({ description: 'required, not null; alias payment_id' }),
      success: z.boolean().openapi({ description: 'required; only boolean true counts as success' }),
      userId: z.string().openapi({ description: 'required, non-empty; alias user_id' }),
      amount: z.number().optional().openapi({ description: 'THB, defaults to 0' }),
      message: z.string().optional().openapi({ description: "defaults to ''" }),
    })
    .openapi({
      description: 'The event; it may also arrive as a JSON string, or wrapped as {"body": <event or JSON string>}',
      example: {
        orderId: 'ORD-1001',
        paymentId: 'pay_0123456789abcdef0123456789abcdef',
        success: true,
        userId: 'u-1',
        amount: 250.5,
      },
    }),
);
const CallbackAccepted = registry.register(
  'CallbackAccepted',
  z
    .object({
      statusCode: z.literal(200),
      body: z.object({
        message: z.string(),
        orderId: z.string(),
        status: z.enum(['success', 'failed', 'unprocessed']),
      }),
    })
    .openapi({
      example: { statusCode: 200, body: { message: 'Callback processed', orderId: 'ORD-1001', status: 'success' } },
    }),
);
const WalletOk = registry.register(
  'WalletHandlerSuccess',
  z
    .object({
      success: z.literal(true),
      message: z.string(),
      orderId: z.string(),
      paymentId: z.string(),
      amount: z.number(),
    })
    .openapi({
      example: {
        success: true,
        message: 'Wallet callback processed successfully',
        orderId: 'ORD-1001',
        paymentId: 'pay_0123456789abcdef0123456789abcdef',
        amount: 250.5,
      },
    }),
);
const WalletFailed = registry.register(
  'WalletHandlerFailure',
  z.object({ success: z.literal(false), error: z.string(), message: z.string() }).openapi({
    example: { success: false, error: 'userId is required', message: 'Failed to process wallet callback' },
  }),
);

/** The body schema of each callback endpoint (src/callbacks/paths names it). */
export const SCHEMAS = {
  card: CardCallback,
  handler: HandlerForm,
  qr: QrCallback,
  walletGateway: WalletGatewayCallback,
} satisfies Record<CallbackSchema, z.ZodTypeAny>;
const SUMMARIES: Record<CallbackProvider, string> = {
  card: 'Card provider result (IP-restricted, X-Signature); 303 to the payment callback URL when there is one',
  cardnet: 'Card network result, handler form (IP-restricted, X-Signature)',
  bankapp: 'Bank app result, handler form (IP-restricted, X-Signature)',
  qr: 'QR payment result (IP-restricted, signature field)',
  wallet: 'Wallet result, gateway form (IP-restricted, signature field)',
};

const signedHeaders = z.object({
  'X-Timestamp': z.string().openapi({ description: 'unix seconds', example: '1795334400' }),
  'X-Signature': z.string().openapi({
    description: 'hex HMAC-SHA256 over `<X-Timestamp>.<raw body>`',
    example: 'd00f9dd1cadf0549f453ba1946464d47a05340da77e6899baa174ee32abf4a12',
  }),
});
const accepted = {
  200: {
    description:
      'recorded (or the first response of a duplicate). A result that contradicts the settled payment (success after expired or failed, failed after paid) is also 200, with a message starting "Callback recorded as a conflict": the provider must not retry',
    content: { 'application/json': { schema: CallbackAccepted } },
  },
};
for (const { path, provider, schema, body, signature } of CALLBACK_ENDPOINTS) {
  const type = body === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  registry.registerPath({
    method: 'post',
    path,
    summary: SUMMARIES[provider],
    tags: ['callback'],
    request: {
      ...(signature === 'header' ? { headers: signedHeaders } : {}),
      body: { content: { [type]: { schema: SCHEMAS[schema] } } },
    },
    responses: {
      ...accepted,
      ...(path === CALLBACK_PATH_OF.card
        ? { 303: { description: 'see the payment callback URL (?orderId=&status=)' } }
        : {}),
      ...errorResponses([400, 401, 403, 404, 413, 415, 503], CallbackError),
    },
  });
}
registry.registerPath({
  method: 'post',
  path: WALLET_HANDLER_PATH,
  summary: 'Wallet handler (public): records the callback; success true starts paid-order processing',
  tags: ['callback'],
  request: { body: { content: { 'application/json': { schema: HandlerForm } } } },
  responses: {
    200: { description: 'recorded', content: { 'application/json': { schema: WalletOk } } },
    500: {
      description:
        'validation or saving failed (logged, reported, e-mailed: once per order and error per ALERT_WINDOW_S, then in a digest)',
      content: { 'application/json': { schema: WalletFailed } },
    },
    ...errorResponses([400, 413, 415, 429], CallbackError),
  },
});
