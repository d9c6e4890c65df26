/**
 * The orders slice's face and contract: what other slices, the workflows and the toolkit may
 * use of it. Pure (no I/O): its Temporal names, ids, signals, updates, inputs and outputs, and
 * the types and pure helpers others share. Names in recorded histories (test/replay) never change.
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { Mode } from '../domain/mode';
import type { CardPaymentInput } from '../payments';

// ---- contract ----

/**
 * The orders' Temporal contract: one orderSettlementWorkflow per order (workflows/orders.ts)
 * authorises the card (or takes the paid QR payment), applies adjustments and the finalisation
 * one at a time (updates `adjust` and `finalize`), and captures, releases or refunds once.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
export const OrderWorkflowType = { order: 'orderSettlementWorkflow' } as const;

/** an order's workflow as ids were before order ids were scoped (kept in orders.workflow_id) */
export const orderWorkflowId = (orderId: string): string => `order-${orderId}`;
/** one settlement workflow per order since order ids are scoped: from its (scoped) payment id */
export const orderWorkflowIdOf = (paymentId: string): string => `order-${paymentId}`;

export type OrderMethod = 'card' | 'qr';
export type OrderStatus =
  'authorizing' | 'open' | 'finalizing' | 'awaiting_topup' | 'settled' | 'short' | 'failed' | 'attention';

/**
 * `patched()` ids of orderSettlementWorkflow (recorded histories keep their path):
 * cardReauth: a card final above the authorisation gets a new authorisation of the difference;
 * webhooks: each step is also an order.* webhook event (docs/webhooks.md).
 */
export const OrderPatch = { cardReauth: 'order-card-reauth-v1', webhooks: 'order-webhooks-v1' } as const;
/** The provider Idempotency-Keys of a finalisation's steps at the card provider. */
export const finalizeKeys = (finalizeId: string) => ({
  capture: `${finalizeId}.capture`,
  void: `${finalizeId}.void`,
  reauth: `${finalizeId}.reauth`,
  reauthCapture: `${finalizeId}.reauth.capture`,
  reauthVoid: `${finalizeId}.reauth.void`,
});

/** the top-up of an order: its own QR payment (and order id) for the difference */
export const topUpOrderId = (orderId: string): string => `${orderId}.topup`;
export const ADJUSTMENT_REASONS = ['out_of_stock', 'substitution', 'weight', 'other'] as const;
export type AdjustmentReason = (typeof ADJUSTMENT_REASONS)[number];

/** A costlier substitution's approval: waiting for the customer, decided, or decided by the timeout. */
export const APPROVAL_STATUSES = ['pending', 'approved', 'declined', 'timed_out'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export type ApprovalDecision = 'approve' | 'decline';
/** patched() id of the approval waits in orderSettlementWorkflow (histories before it have none) */
export const ORDER_APPROVALS_PATCH = 'order-approvals-v1';
/** what applying an adjustment asked of the customer: each approval and how long the workflow waits */
export interface ApprovalWait {
  approvalId: string;
  timeoutSeconds: number;
}

export interface OrderInput {
  orderId: string;
  paymentId: string;
  method: OrderMethod;
  mode: Mode;
  apiKeyId: string;
  /** card: the authorisation to make first (amount = estimate + margin); the payments row names this workflow */
  card?: CardPaymentInput;
  /** after this long without a finalisation the authorisation is captured or released */
  lapseSeconds: number;
  lapseAction: 'capture' | 'release';
  /** an unpaid top-up: settle at what was paid, or cancel (refund what was paid) */
  topUpExpired?: 'settle' | 'cancel';
}

/**
 * Updates `adjust` and `finalize` carry only the id of a row the gateway recorded and its proof
 * (talat-order-v1, src/proofs.ts): lines, amounts and the order come from the rows.
 */
export interface OrderStepRequest {
  stepId: string;
  proof: string;
}

export interface OrderView {
  orderId: string;
  paymentId: string;
  method: OrderMethod;
  status: OrderStatus;
  authorizedSatang: number;
  capturedSatang: number;
  paidSatang: number;
  refundedSatang: number;
  finalSatang: number | null;
}

export type OrderRejectionCode = 'CONFLICT' | 'NOT_FOUND';
export type OrderStepOutcome =
  | { ok: true; order: OrderView }
  | { ok: false; code: OrderRejectionCode; message: string; details?: Record<string, unknown> };

export const adjustUpdate = defineUpdate<OrderStepOutcome, [OrderStepRequest]>('adjust');
export const finalizeUpdate = defineUpdate<OrderStepOutcome, [OrderStepRequest]>('finalize');
/** the customer's decision on a costlier substitution: the approval row's id and its talat-order-v1 proof */
export const decideApprovalUpdate = defineUpdate<OrderStepOutcome, [OrderStepRequest]>('decideApproval');
export const orderQuery = defineQuery<{ status: OrderStatus }>('order');

export type OrderSettlementWorkflow = (input: OrderInput) => Promise<OrderView | { status: OrderStatus }>;

/** The settlement steps an order adds to its payment's timeline (GET /payments/{orderId}/timeline). */
export const ORDER_TIMELINE_TYPES = [
  'order.authorized',
  'order.adjusted',
  'order.finalized',
  'order.captured',
  'order.released',
  'order.voided',
  'order.refunded',
  'order.topup_pending',
  'order.topup_paid',
  'order.topup_expired',
  'order.settled',
  'order.failed',
  'order.attention',
] as const;
export type OrderTimelineType = (typeof ORDER_TIMELINE_TYPES)[number];
