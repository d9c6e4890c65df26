/**
 * The error example of each operation's error responses in /openapi.json: what the gateway
 * answers with that status (the messages of src/http and src/callbacks), naming the operation's
 * own first field or path parameter where the error is about one.
 */

type Json = Record<string, unknown>;
type Envelope = { statusCode: number; body: Json };

/** Payment and storefront API errors, by HTTP status. */
const PAYMENT: Record<string, (field: string, param: string | undefined) => Json> = {
  400: (field) => ({ error: `${field} is required`, code: 'MISSING_FIELD', details: { field, fields: [field] } }),
  401: () => ({
    error: 'An API key is required (header X-API-Key)',
    code: 'UNAUTHORIZED',
    details: { reason: 'missing' },
  }),
  403: () => ({
    error: 'The API key lacks the scope payments:write',
    code: 'FORBIDDEN',
    details: { requiredScope: 'payments:write', scopes: ['payments:read'] },
  }),
  404: (_f, param) =>
    param === 'orderId'
      ? { error: 'No payment for order ORD-2001', code: 'NOT_FOUND', details: { orderId: 'ORD-2001' } }
      : { error: 'Not found', code: 'NOT_FOUND', details: param ? { [param]: 'unknown' } : {} },
  409: () => ({
    error: 'Order ORD-2001 already has a payment of 120.50 THB by qr',
    code: 'CONFLICT',
    details: { orderId: 'ORD-2001' },
  }),
  413: () => ({ error: 'Request body is too large', code: 'PAYLOAD_TOO_LARGE', details: {} }),
  415: () => ({
    error: 'Unsupported content type',
    code: 'UNSUPPORTED_MEDIA_TYPE',
    details: { contentType: 'text/plain' },
  }),
  422: () => ({
    error: 'This Idempotency-Key was used for another request',
    code: 'IDEMPOTENCY_KEY_REUSED',
    details: { idempotencyKey: 'refund-ORD-2001-1' },
  }),
  429: () => ({
    error: 'Rate limit exceeded: at most 100 requests per 60 s',
    code: 'RATE_LIMITED',
    details: { limit: 100, window: '60 s', retryAfterSeconds: 12 },
  }),
  500: () => ({ error: 'Internal server error', code: 'INTERNAL_ERROR', details: {} }),
  503: () => ({
    error: 'The database is unavailable, try again later',
    code: 'SERVICE_UNAVAILABLE',
    details: { service: 'postgres' },
  }),
};

/** Callback API errors, by HTTP status. */
const CALLBACK: Record<string, Json> = {
  400: { error: 'INVALID_TIMESTAMP', message: 'timestamp is older than 300 seconds' },
  401: { error: 'INVALID_SIGNATURE', message: 'HMAC signature invalid' },
  403: { error: 'INVALID_IP', message: 'Request from an unauthorised IP address' },
  404: { error: 'ORDER_NOT_FOUND', message: 'No payment for charge chrg_test_5xq3vfc1tna4dbm0ox9' },
  413: { error: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large' },
  415: { error: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported content type' },
  429: { error: 'RATE_LIMITED', message: 'Rate limit exceeded: at most 600 requests per 60 s' },
  500: { error: 'INTERNAL_ERROR', message: 'Internal server error' },
  503: { error: 'SERVICE_UNAVAILABLE', message: 'The database is unavailable, try again later' },
};

type Schema = { $ref?: string; properties?: { body?: { properties?: { code?: unknown } } } };

/**
 * The example of an error response whose schema is `PaymentError` (or has its shape) or
 * `CallbackError`; undefined for any other schema (those carry their own).
 */
export function errorExample(
  status: string,
  schema: Schema | undefined,
  op: { requestBody?: unknown; parameters?: { name: string; in: string }[] },
  path: string,
  schemas: Record<string, { required?: string[] }>,
): Envelope | undefined {
  const code = Number(status);
  if (schema?.$ref === '#/components/schemas/CallbackError' && CALLBACK[status])
    return { statusCode: code, body: CALLBACK[status] };
  const paymentShaped =
    schema?.$ref === '#/components/schemas/PaymentError' || !!schema?.properties?.body?.properties?.code;
  if (!paymentShaped || !PAYMENT[status]) return undefined;
  const param = /\{(\w+)\}/.exec(path)?.[1];
  const body = op.requestBody as
    { content?: Record<string, { schema?: { required?: string[]; $ref?: string } }> } | undefined;
  const input = Object.values(body?.content ?? {})[0]?.schema;
  const required = input?.$ref ? schemas[input.$ref.split('/').pop()!]?.required : input?.required;
  const first = required?.[0] ?? param ?? op.parameters?.find((p) => p.in === 'query')?.name ?? 'orderId';
  const example = { statusCode: code, body: PAYMENT[status](first, param) };
  if (status === '400' && !body)
    example.body = {
      error: `${first}: invalid`,
      code: 'INVALID_INPUT',
      details: { field: first, in: param ? 'path' : 'query' },
    };
  return example;
}
