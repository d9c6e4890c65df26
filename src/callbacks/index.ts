/**
 * The callbacks slice's face and contract: what other slices, the workflows and the toolkit may
 * use of it. Pure (no I/O): its Temporal names, ids, signals, updates, inputs and outputs, and
 * the types and pure helpers others share. Names in recorded histories (test/replay) never change.
 */
import type { CallbackProvider } from '../domain/providers';

// ---- contract ----

/**
 * The callbacks' Temporal contract: paid-order processing of a wallet handler post
 * (paidOrderProcessingWorkflow, workflows/callbacks.ts), its id, input and outcome.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
export const CallbackWorkflowType = { paidOrder: 'paidOrderProcessingWorkflow' } as const;

/** the prefix of a post's processing that names no payment of its order (unmatchedPaidOrderWorkflowId) */
export const paidOrderWorkflowId = (orderId: string): string => `paid-order-${orderId}`;

/**
 * one paid-order processing per payment: order ids are unique per account and mode only
 * (docs/concepts.md), so the payment's (unique) id names it; before, paid-order-<orderId>
 */
export const paidPaymentWorkflowId = (paymentId: string): string => `paid-order-${paymentId}`;

export interface PaidOrderInput {
  /** the full request body of the wallet handler, as received (JSON text) */
  body: string;
  source: 'wallet';
  /** how long to wait for the payment to be confirmed paid by a verified callback */
  confirmWindowSeconds: number;
}

export interface PaidOrderOutcome {
  orderId: string;
  paymentId: string;
  status: 'confirmed' | 'rejected';
  reason: string;
}

export type PaidOrderProcessingWorkflow = (input: PaidOrderInput) => Promise<PaidOrderOutcome>;

// ---- paths ----

/**
 * The callback endpoints, listed once: path -> provider -> body schema, with how each is sent and
 * signed. Read by the error envelope's area detection (src/http/errors), the IP guard and
 * verification (src/callbacks/verify) and the routes and their OpenAPI (src/callbacks/routes),
 * which map `schema` to the body's zod schema.
 */
/** The IP-restricted endpoints: the provider's allow-list and secret apply. */
export const CALLBACK_ENDPOINTS = [
  { path: '/callback', provider: 'card', schema: 'card', body: 'form', signature: 'header' },
  { path: '/cardnetcallback', provider: 'cardnet', schema: 'handler', body: 'json', signature: 'header' },
  { path: '/bankappcallback', provider: 'bankapp', schema: 'handler', body: 'json', signature: 'header' },
  { path: '/qrcallback', provider: 'qr', schema: 'qr', body: 'json', signature: 'field' },
  { path: '/walletcallback', provider: 'wallet', schema: 'walletGateway', body: 'json', signature: 'field' },
] as const satisfies readonly {
  path: string;
  provider: CallbackProvider;
  schema: string;
  body: 'form' | 'json';
  /** header: X-Signature over `<X-Timestamp>.<raw body>`; field: `signature` over the canonical JSON */
  signature: 'header' | 'field';
}[];
export type CallbackEndpoint = (typeof CALLBACK_ENDPOINTS)[number];
export type CallbackSchema = CallbackEndpoint['schema'];

/** The public wallet handler (handler form, no IP restriction, no signature). */
export const WALLET_HANDLER_PATH = '/wallet/callback';

/** Every callback path: these answer with the callback error envelope. */
export const CALLBACK_PATHS: readonly string[] = [...CALLBACK_ENDPOINTS.map((e) => e.path), WALLET_HANDLER_PATH];

/** The restricted endpoints whose body has the given schema. */
export const endpointsWithSchema = <S extends CallbackSchema>(...schemas: S[]) =>
  CALLBACK_ENDPOINTS.filter((e): e is Extract<CallbackEndpoint, { schema: S }> =>
    (schemas as readonly CallbackSchema[]).includes(e.schema),
  );

/** The restricted endpoint of each provider. */
export const CALLBACK_PATH_OF = Object.fromEntries(CALLBACK_ENDPOINTS.map((e) => [e.provider, e.path])) as {
  readonly [E in CallbackEndpoint as E['provider']]: E['path'];
};

// ---- receipts, as other slices read them ----

/**
 * SQL, one binding (the payment id): the oldest result for the payment that a callback committed
 * and whose delivery has not finished (`status` success or failed, `provider`; every provider is
 * named, so the unique key serves it). A payment's expiry yields to it (activities/payments, the
 * settle step): the provider may have been answered.
 */
export const UNDELIVERED_RESULT_SQL = `SELECT r.status, r.provider FROM callback_receipts r
  WHERE r.provider IN (${CALLBACK_ENDPOINTS.map((e) => `'${e.provider}'`).join(', ')}) AND r.payment_id = ?
    AND r.status IN ('success', 'failed') AND r.outcome IS NULL
  ORDER BY r.created_at LIMIT 1`;
