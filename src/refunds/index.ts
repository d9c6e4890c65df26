/**
 * The refunds slice's face and contract: what other slices, the workflows and the toolkit may
 * use of it. Pure (no I/O): its Temporal names, ids, signals, updates, inputs and outputs, and
 * the types and pure helpers others share. Names in recorded histories (test/replay) never change.
 */
import { defineUpdate } from '@temporalio/workflow';
import type { Mode } from '../domain/mode';
import type { SqlFragment } from '../domain/sql';
import type { PaymentMethod, PaymentStatus } from '../payments';

// ---- contract ----

/**
 * The refunds' Temporal contract: one orderRefundsWorkflow per order (workflows/refunds.ts)
 * serialises its refunds, one `refund` update each.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
export const RefundsWorkflowType = { refunds: 'orderRefundsWorkflow' } as const;

/** the refunds of an order: one workflow at a time per order serialises them */
export const refundsWorkflowId = (orderId: string): string => `refunds-${orderId}`;

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

/** What a provider refund call is given (the refund activities, and a late result's refund). */
export interface ProviderRefundInput {
  refundId: string;
  paymentId: string;
  orderId: string;
  method: PaymentMethod;
  mode: Mode;
  /** card: the charge id */
  providerRef: string | null;
  amountSatang: number;
  reason?: string;
}

// ---- rows: the SQL fragments reconciliation composes with the refunds table ----

/**
 * The refunds of the payments `payments` selects (`SELECT <id>`) whose provider reference is
 * one of `refs`: id, payment_id, order_id, amount_satang, status, ref.
 */
export const refundsByRefSql = (refs: string[], payments: SqlFragment): SqlFragment => ({
  sql: `SELECT r.id, r.payment_id, r.order_id, r.amount_satang, r.status, r.provider_ref AS ref
          FROM unnest(?::text[]) AS x(ref) JOIN refunds r ON r.provider_ref = x.ref
         WHERE r.payment_id IN (${payments.sql})`,
  bindings: [refs, ...payments.bindings],
});

/**
 * The refunds of the payments `payments` selects that succeeded in [from, to): id, payment_id,
 * order_id, amount_satang, provider_ref, updated_at (when they succeeded).
 */
export const succeededBetweenSql = (w: { from: Date; to: Date; payments: SqlFragment }): SqlFragment => ({
  sql: `SELECT r.id, r.payment_id, r.order_id, r.amount_satang, r.provider_ref, r.updated_at
          FROM refunds r
         WHERE r.status = 'succeeded' AND r.updated_at >= ? AND r.updated_at < ?
           AND r.payment_id IN (${w.payments.sql})`,
  bindings: [w.from, w.to, ...w.payments.bindings],
});

// ---- records others read ----

/** A refund as recorded: what the worker refunds, never what a Temporal call says. */
export interface RecordedRefund {
  refundId: string;
  paymentId: string;
  orderId: string;
  amountSatang: number;
  status: 'pending' | 'succeeded' | 'failed';
  reason: string | null;
  failureReason: string | null;
}

export type RefundRequestDecision =
  | { ok: true; refund: RecordedRefund }
  | {
      ok: false;
      code: RefundRejectionCode | 'IDEMPOTENCY_KEY_REUSED';
      message: string;
      details: Record<string, unknown>;
    };
