/**
 * The payments' Temporal contract: workflow types and ids, the result signal, the view query,
 * the card's charge update, and the inputs and outputs the gateway, the worker and the workflow
 * code share (workflows/payments/ implements them). Pure: workflow code imports it.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Mode } from '../domain/mode';
import type { PaymentMethod, PaymentStatus } from './states';

/** Workflow type names (the exported function names under workflows/payments/). */
export const PaymentWorkflowType = {
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
  /** a provider result that contradicts a settled payment (the gateway saw it settled first) */
  lateResult: 'lateResultWorkflow',
} as const;

// Workflow ids: natural idempotency, one workflow per subject.
/** the payment of an order: one per order */
export const paymentWorkflowId = (orderId: string): string => `payment-${orderId}`;
/** one late-result resolution per payment and contradicting status */
export const lateResultWorkflowId = (paymentId: string, status: PaymentResult['status']): string =>
  `late-result-${paymentId}-${status}`;

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
  /** HMAC over (receiptId, paymentId, status) with RESULT_SIGNING_KEY (src/result-proof.ts) */
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
   * the gateway's proof of this start (talat-start-v1: workflow type, id and this whole input):
   * what lets the worker act on the input at all (activities/payments/index.ts, vouched)
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
