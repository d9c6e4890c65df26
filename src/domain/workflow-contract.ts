/**
 * The Temporal contract: the one home of every name, id, signal, query, update, input and
 * output that the gateway, the worker and the workflow code share. Workflow code implements
 * these signatures (workflows/), the gateway starts and signals through them (src/), and
 * activities throw the failure types listed here.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PaymentEventStatus, PaymentStatusEvent } from './events';
import type { Mode } from './mode';
import type { PaymentMethod, PaymentStatus } from './payment-state';

/** Workflow type names (the exported function names under workflows/). */
export const WorkflowType = {
  /**
   * The payment workflows the gateway starts: versioned by type (v2), not by `patched()`. Each
   * patch a new execution asked for cost it a marker and an upsert of the TemporalChangeVersion
   * search attribute (two events, two billed actions on Temporal Cloud),
   * though every new execution takes every patch. A v2 execution takes the patches below that
   * were in place when v2 began without asking (a later one it asks); the v1 types stay registered so executions started before replay as they
   * ran (workflows/patches.ts). Deploy workers before gateways: a v2 start waits for a worker
   * that knows the type.
   */
  card: 'cardPaymentWorkflowV2',
  qr: 'qrPaymentWorkflowV2',
  /** the payment workflows' first type: executions started before v2, which still replay */
  cardV1: 'cardPaymentWorkflow',
  qrV1: 'qrPaymentWorkflow',
  bank: 'bankRequestWorkflow',
  paidOrder: 'paidOrderProcessingWorkflow',
  webhookDelivery: 'webhookDeliveryWorkflow',
  /** the retries of a webhook whose first attempt (made by the payment workflow) failed */
  webhookRetry: 'webhookRetryWorkflow',
  webhookReplay: 'webhookReplayWorkflow',
  webhookResend: 'webhookResendWorkflow',
  webhookRecover: 'webhookRecoverWorkflow',
  refunds: 'orderRefundsWorkflow',
  /** a provider result that contradicts a settled payment (the gateway saw it settled first) */
  lateResult: 'lateResultWorkflow',
} as const;

/**
 * Patch ids (workflow versioning with `patched()`): histories recorded before a change replay
 * the old commands, new executions take the new ones. Never rename or reuse one.
 *  - lean-payment-v1: the gateway writes the payments row before it starts the workflow (no
 *    recordPayment activity); projection writes and the first webhook attempt are local
 *    activities; the expiry timer is left to lapse instead of being cancelled; webhook retries
 *    (only when the first attempt failed) run in a child webhookRetryWorkflow.
 */
export const Patch = {
  leanPayment: 'lean-payment-v1',
  /**
   * result-proof-v1: a signalled result is settled only when its proof verifies (checked inside
   * the settle local activity: no extra event); a rejected one changes nothing and the payment
   * keeps waiting. Its marker is recorded only when a result is rejected.
   */
  resultProof: 'result-proof-v1',
  /**
   * late-result-v1: a result that arrives after the payment was decided and contradicts it is
   * handed to resolveLateResult (workflows/late-result.ts) instead of being dropped. Its marker
   * is recorded only when such a result arrives.
   */
  lateResult: 'late-result-v1',
  /**
   * bulkhead-v1: webhook children (webhookRetryWorkflow, and the refunds' webhookDeliveryWorkflow)
   * run on the webhooks task queue, not on their parent's (marker only where a child starts).
   */
  bulkhead: 'bulkhead-v1',
  /**
   * refund-record-v1: a `refund` update names a refund that POST /refund recorded, with the
   * gateway's proof of it (talat-refund-v1, src/callbacks/result-proof.ts); the worker refunds
   * what the refunds row says, never what the update says. Asked in the refund's handler.
   */
  refundRecord: 'refund-record-v1',
} as const;

// ---- task queues (bulkheads) ----

/**
 * The task queues, each polled by its own worker with its own slots, so that work which waits
 * on others (integrators' endpoints, the bank, e-mail) never holds what the payments need:
 *  - payments: the payment workflows (and the refunds workflow), their local activities;
 *  - webhooks: webhook retries, replays, resends and recoveries, and their POSTs;
 *  - background: bank calls and paid-order processing (with its administrator e-mail).
 */
export const QUEUE_KINDS = ['payments', 'webhooks', 'background'] as const;
export type QueueKind = (typeof QUEUE_KINDS)[number];

/**
 * The queue of `kind`, named after the payments queue (TEMPORAL_TASK_QUEUE) so that the gateway,
 * the workers and the workflows (which know only their own queue) agree without more settings:
 * a name ending in `-payments` has that suffix replaced (talat-payments -> talat-webhooks,
 * talat-background); any other name q gets one added (q-webhooks, q-background).
 */
export function taskQueueOf(kind: QueueKind, paymentsQueue: string): string {
  if (kind === 'payments') return paymentsQueue;
  const base = paymentsQueue.endsWith('-payments') ? paymentsQueue.slice(0, -'-payments'.length) : paymentsQueue;
  return `${base}-${kind}`;
}

// Workflow ids: natural idempotency, one workflow per subject.
/** the payment of an order: one per order */
export const paymentWorkflowId = (orderId: string): string => `payment-${orderId}`;
/** one paid-order processing per order */
export const paidOrderWorkflowId = (orderId: string): string => `paid-order-${orderId}`;
/**
 * one webhook delivery per payment and status (and per refund: each refund is its own event);
 * webhookDeliveryWorkflow before lean-payment-v1, webhookRetryWorkflow since
 */
export const webhookDeliveryWorkflowId = (paymentId: string, status: PaymentEventStatus, refundId?: string): string =>
  refundId ? `webhook-${paymentId}-${status}-${refundId}` : `webhook-${paymentId}-${status}`;
/** one late-result resolution per payment and contradicting status */
export const lateResultWorkflowId = (paymentId: string, status: PaymentResult['status']): string =>
  `late-result-${paymentId}-${status}`;
/** the refunds of an order: one workflow at a time per order serialises them */
export const refundsWorkflowId = (orderId: string): string => `refunds-${orderId}`;
/** one replay of a dead letter at a time (a second request joins the running one) */
export const webhookReplayWorkflowId = (deadLetterId: string): string => `webhook-replay-${deadLetterId}`;
/** one resend of a message at a time (a second request joins the running one) */
export const webhookResendWorkflowId = (messageId: string): string => `webhook-resend-${messageId}`;
/** one recovery per endpoint at a time (a second request joins the running one) */
export const webhookRecoverWorkflowId = (endpointId: string): string => `webhook-recover-${endpointId}`;
/** one bank call; `unique` is a fresh random suffix */
export const bankRequestWorkflowId = (op: BankCall['op'], unique: string): string => `bank-${op}-${unique}`;

/** ApplicationFailure types that activities throw and workflows match. */
export const ActivityFailureType = {
  /** the card provider refused the charge (4xx): non-retryable */
  CardRejected: 'CardRejected',
  /** the partner bank refused the call (4xx): non-retryable, details {status, body} */
  BankRejected: 'BankRejected',
  /** neither the sandbox simulator nor a live URL is available */
  ProviderNotConfigured: 'ProviderNotConfigured',
  /** the card provider or the bank refused a refund (4xx): non-retryable */
  RefundRejected: 'RefundRejected',
} as const;
export type ActivityFailureType = (typeof ActivityFailureType)[keyof typeof ActivityFailureType];

// ---- payment workflows (card, qr) ----

/**
 * Signal `paymentResult`: the first valid one with a verified proof decides; a later one that
 * contradicts the decision is a late result (late-result-v1), one that agrees changes nothing.
 */
export interface PaymentResult {
  status: 'success' | 'failed';
  provider: string;
  reference?: string;
  message?: string;
  /** the callback receipt this result comes from (result-proof-v1) */
  receiptId?: string;
  /** HMAC over (receiptId, paymentId, status) with RESULT_SIGNING_KEY (src/callbacks/result-proof.ts) */
  proof?: string;
}

export interface ChargeView {
  id: string;
  status: string;
  authorizeUri: string | null;
}

export interface PaymentView {
  paymentId: string;
  orderId: string;
  method: PaymentMethod;
  amountSatang: number;
  status: PaymentStatus;
  history: { status: PaymentStatus; at: string; reason: string }[];
  /** card: the charge at the card provider, once created */
  charge?: ChargeView;
  /** why the payment failed or expired */
  failureReason?: string;
}

export interface PaymentOutcome {
  paymentId: string;
  orderId: string;
  status: PaymentStatus;
}

/** What every payment workflow starts from (the gateway builds it). */
export interface PaymentInput {
  paymentId: string;
  orderId: string;
  userId: string;
  amountSatang: number;
  mode: Mode;
  apiKeyId?: string;
  customerId?: string;
  /** card: where the user is sent after the provider's callback */
  callbackUrl?: string;
  /**
   * the gateway's proof of this start (talat-payment-v1: payment, order, amount, mode, key,
   * workflow id): what lets the worker write a payments row the gateway's insert left missing
   */
  proof?: string;
}

export interface CardPaymentInput extends PaymentInput {
  /** one-time card token from the provider's client library */
  token: string;
  /** the provider's browser return address (our /callback) */
  returnUri?: string;
  timeoutSeconds: number;
}

export interface QrPaymentInput extends PaymentInput {
  /** ISO 8601 UTC; the workflow's timer runs until then */
  expiresAt: string;
  qr: { payload: string; crc: string; promptPayId: string; billerId?: string; ref1?: string };
}

export const paymentResultSignal = defineSignal<[PaymentResult]>('paymentResult');
export const paymentQuery = defineQuery<PaymentView>('payment');
/** Card: resolves once the charge exists at the provider (or the payment ended); returns the view. */
export const chargeUpdate = defineUpdate<PaymentView>('charge');

export type CardPaymentWorkflow = (input: CardPaymentInput) => Promise<PaymentOutcome>;
export type QrPaymentWorkflow = (input: QrPaymentInput) => Promise<PaymentOutcome>;

// ---- late and conflicting results (lateResultWorkflow, or the payment workflow's own handler) ----

export interface LateResultInput {
  paymentId: string;
  orderId: string;
  /** the status the payment had been decided to when the result came */
  paymentStatus: PaymentStatus;
  result: PaymentResult;
}

/** What became of the conflict: the policy's action and, for a refund, how it went. */
export type ConflictResolution = 'recorded' | 'review' | 'refund_pending' | 'refunded' | 'refund_failed';

export interface LateResultOutcome {
  /** rejected: the proof did not verify; duplicate: this conflict was recorded before; agrees: no conflict */
  verdict: 'recorded' | 'duplicate' | 'rejected' | 'agrees';
  conflictId?: string;
  resolution?: ConflictResolution;
}

export type LateResultWorkflow = (input: LateResultInput) => Promise<LateResultOutcome>;

// ---- bank calls ----

export type BankCall =
  | { op: 'createUser'; mode: Mode; body: { userId: string; name: string; email?: string; phone?: string } }
  | { op: 'getUser'; mode: Mode; userId: string }
  | {
      op: 'createOrder';
      mode: Mode;
      body: { orderId: string; userId: string; amountSatang: number; currency: 'THB'; description?: string };
    };

export type BankOutcome =
  | { ok: true; status: number; body: unknown }
  | { ok: false; kind: 'rejected'; status: number; body: unknown; message: string }
  | { ok: false; kind: 'unavailable'; message: string };

export type BankRequestWorkflow = (call: BankCall) => Promise<BankOutcome>;

// ---- paid-order processing (wallet handler) ----

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

// ---- webhooks ----

/** Retries of a webhook delivery after the first attempt (the contract "Limits"). */
export const WEBHOOK_RETRY_DELAYS_MS = [1000, 2000, 4000] as const;

/** One delivery attempt as the webhook activities report it. */
export interface AttemptResult {
  ok: boolean;
  /** the endpoint was removed: nothing more to do */
  cancelled?: boolean;
  statusCode?: number;
  error?: string;
}

export interface DeliveryOutcome {
  deliveryId: string;
  state: 'delivered' | 'dead' | 'cancelled';
  attempts: number;
  deadLetterId?: string;
}

export interface WebhookReplayInput {
  deadLetterId: string;
}
export type ReplayOutcome = AttemptResult & { status: 'dead' | 'delivered' };

export type WebhookDeliveryWorkflow = (event: PaymentStatusEvent) => Promise<DeliveryOutcome[]>;

/** The deliveries of one event whose first attempt failed: retried after 1 s, 2 s, 4 s, then dead-lettered. */
export interface WebhookRetryInput {
  event: PaymentStatusEvent;
  deliveryIds: string[];
  /** ms since the epoch when the first attempts began: the 1 s before attempt 2 counts from it */
  firstAttemptAt?: number;
  /**
   * those of deliveryIds the payment workflow did not attempt (the settle step's bulkhead: their
   * endpoint was failing or had enough first attempts in flight): this workflow makes attempt 1 too
   */
  deferred?: string[];
}
export type WebhookRetryWorkflow = (input: WebhookRetryInput) => Promise<DeliveryOutcome[]>;
export type WebhookReplayWorkflow = (input: WebhookReplayInput) => Promise<ReplayOutcome>;

/** Resend one message (delivery) to its endpoint now: one attempt, signed anew. */
export interface WebhookResendInput {
  messageId: string;
  kind: 'resend' | 'recover';
}
export interface WebhookRecoverInput {
  endpointId: string;
  /** ISO 8601: messages created at or after this time that failed every attempt */
  since: string;
  /** continue-as-new state: where the previous run stopped, and its counts */
  cursor?: { createdAt: string; id: string };
  totals?: RecoverOutcome;
}
export interface RecoverOutcome {
  resent: number;
  delivered: number;
  failed: number;
}
export type WebhookResendWorkflow = (input: WebhookResendInput) => Promise<AttemptResult>;
export type WebhookRecoverWorkflow = (input: WebhookRecoverInput) => Promise<RecoverOutcome>;

// ---- refunds (workflow refunds-<orderId>, one update per refund) ----

export interface RefundsInput {
  orderId: string;
  /** the workflow ends after this long without a refund (a later refund starts it again) */
  idleSeconds: number;
}

/**
 * Update `refund`: one refund; its update id is the refund id and a digest of its proof
 * (refundUpdateId: a retried request is the same refund). Since refund-record-v1 the gateway sends the refund id and its proof only: amount,
 * reason and payment come from the refunds row. The other fields are those of older histories.
 */
export interface RefundRequest {
  refundId: string;
  /** HMAC over the recorded refund (refund id, payment id, order id, amount) with RESULT_SIGNING_KEY */
  proof?: string;
  /** before refund-record-v1: satang; absent: the whole refundable rest */
  amountSatang?: number;
  reason?: string;
  apiKeyId?: string;
}

export type RefundRejectionCode = 'CONFLICT' | 'INVALID_INPUT' | 'NOT_FOUND';

export type RefundOutcome =
  | {
      ok: true;
      refundId: string;
      status: 'succeeded' | 'failed';
      amountSatang: number;
      failureReason?: string;
      payment: { paymentId: string; status: PaymentStatus; amountSatang: number; refundedSatang: number };
    }
  | { ok: false; code: RefundRejectionCode; message: string; details?: Record<string, unknown> };

export const refundUpdate = defineUpdate<RefundOutcome, [RefundRequest]>('refund');
export type OrderRefundsWorkflow = (input: RefundsInput) => Promise<void>;
