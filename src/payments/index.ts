/**
 * The payments slice's face and contract: what other slices, the workflows and the toolkit may
 * use of it. Pure (no I/O): its Temporal names, ids, signals, updates, inputs and outputs, and
 * the types and pure helpers others share. Names in recorded histories (test/replay) never change.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Mode } from '../domain/mode';
import type { CallbackProvider } from '../domain/providers';
import type { SqlFragment } from '../domain/sql';
import { orderReference } from '../domain/promptpay';

// ---- contract ----

/**
 * The payments' Temporal contract: workflow types and ids, the result signal, the view query,
 * the card's charge update, and the inputs and outputs the gateway, the worker and the workflow
 * code share (workflows/payments/ implements them). Pure: workflow code imports it.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
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
  /**
   * v3, the QR payment the gateway starts (issue 41): started with a start delay that ends at the
   * QR's expiry, so no workflow task runs until the provider's result comes (a signal-with-start,
   * which ends the delay) or the expiry: one workflow task and no timer per paid payment. Its
   * row's details.workflowType names it: its results go by signal-with-start (deliverResult).
   * `qr` stays what the orders' top-ups start (child workflows have no start delay).
   */
  qrDelayed: 'qrPaymentWorkflowV3',
  /** the payment workflows' first type: executions started before v2, which still replay */
  cardV1: 'cardPaymentWorkflow',
  qrV1: 'qrPaymentWorkflow',
  /** a provider result that contradicts a settled payment (the gateway saw it settled first) */
  lateResult: 'lateResultWorkflow',
  /** a verified result for a pending payment whose workflow was closed (terminated, failed, timed out) */
  redrive: 'paymentRedriveWorkflow',
} as const;

// Workflow ids: natural idempotency, one workflow per subject.
/** the payment of an order as ids were before order ids were scoped (and an order's top-up) */
export const paymentWorkflowId = (orderId: string): string => `payment-${orderId}`;
/** a payment's workflow since order ids are scoped: from its own id, stored in payments.workflow_id */
export const paymentWorkflowIdOf = (paymentId: string): string => `payment-${paymentId}`;
/** Whether a payment's workflow id is its own payment workflow's (either form), not an order's. */
export const isOwnPaymentWorkflow = (p: { id: string; orderId: string; workflowId: string }): boolean =>
  p.workflowId === paymentWorkflowIdOf(p.id) || p.workflowId === paymentWorkflowId(p.orderId);
/** Where an order id is unique (docs/concepts.md): the key's account (null: a keyless card payment) and the mode. */
export interface OrderScope {
  accountId: string | null;
  mode: Mode;
}
/** one late-result resolution per payment and contradicting status */
export const lateResultWorkflowId = (paymentId: string, status: PaymentResult['status']): string =>
  `late-result-${paymentId}-${status}`;
/** one re-drive per payment and result status */
export const paymentRedriveWorkflowId = (paymentId: string, status: PaymentResult['status']): string =>
  `payment-redrive-${paymentId}-${status}`;

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

// ---- re-drive of a result whose payment workflow was closed (paymentRedriveWorkflow) ----

/** A verified result (its talat-result-v1 proof) for a payment whose row was pending when its workflow was found closed. */
export interface PaymentRedriveInput {
  paymentId: string;
  orderId: string;
  result: PaymentResult;
}

export interface PaymentRedriveOutcome {
  /** the row's status after the re-drive (null: no such payment, or the proof did not verify) */
  status: PaymentStatus | null;
  /** true when the result settled the row (now or on an earlier attempt) and its webhook went out */
  settled: boolean;
}

export type PaymentRedriveWorkflow = (input: PaymentRedriveInput) => Promise<PaymentRedriveOutcome>;

// ---- the payments row, as the payments slice maps it for the others ----

export interface Payment {
  id: string;
  orderId: string;
  userId: string;
  status: PaymentStatus;
  method: PaymentMethod;
  mode: Mode;
  amountSatang: number;
  /** sum of the succeeded refunds */
  refundedSatang: number;
  callbackUrl: string | null;
  providerRef: string | null;
  workflowId: string;
  apiKeyId: string | null;
  /** the account of the key that created it (null: keyless): with mode and order id, unique */
  accountId: string | null;
  details: { charge?: { status?: string; authorizeUri?: string | null }; workflowType?: string } & Record<
    string,
    unknown
  >;
  expiresAt: Date | null;
  customerId?: string;
  createdAt: Date;
  updatedAt: Date;
}
/** What a callback refers to: the payment row. */
export type PaymentRef = Payment;

export interface PaymentEvent {
  status: PaymentStatus;
  at: Date;
  reason: string;
}

/**
 * What the payments slice offers the others over its records: built over a database by
 * paymentRecords (./repository.ts), passed to each slice that declares it by the composition root.
 */
export interface PaymentRecords {
  /** the order's payment in `scope`; without one, the only payment of that order id (undefined when none or several) */
  byOrderId(orderId: string, scope?: OrderScope): Promise<Payment | undefined>;
  byId(paymentId: string): Promise<Payment | undefined>;
  /**
   * byId, once the payment is marked watched: from then on each change of its status is
   * announced on `payment_status` (a checkout page's live status; unwatched payments announce none)
   */
  watch(paymentId: string): Promise<Payment | undefined>;
  /**
   * the payment of the order id that `named` (our payment id or the provider's reference) names,
   * whatever other accounts or modes use the order id; without one, the only payment of that
   * order id (undefined when none or several)
   */
  byOrderNamed(orderId: string, named: string): Promise<Payment | undefined>;
  /** byOrderNamed, with the count it chose among: 0, no payment of that order id; more than 1, several and none named */
  ofOrderNamed(orderId: string, named: string): Promise<{ payment?: Payment; candidates: number }>;
  /** the payment's status and amount, its row locked to the end of the caller's transaction */
  lockForRefund(paymentId: string): Promise<{ status: PaymentStatus; amountSatang: number } | undefined>;
  /**
   * adds a succeeded refund to the refunded total and, when that reaches the amount, moves the
   * payment paid -> refunded with its event (inside the caller's transaction)
   */
  addRefunded(paymentId: string, amountSatang: number, refundId: string): Promise<void>;
  /** whether the payment ever reached `status` (its events) */
  reached(paymentId: string, status: string): Promise<boolean>;
  /** the payment's status, amount and refunded total now */
  amounts(paymentId: string): Promise<{ status: PaymentStatus; amountSatang: number; refundedSatang: number }>;
}

// ---- states ----

/**
 * Payment states and their transition table: the one place transitions are decided.
 *
 *   pending --(provider success)--> paid
 *   pending --(provider failure)--> failed
 *   pending --(expiry passes)-----> expired
 *   paid    --(refunds reach the amount)--> refunded   (a partial refund keeps `paid`, with
 *                                                 payments.refunded_satang; workflows/refunds.ts)
 *   pending --(card authorised, capture=false)--> authorized   (the orders slice, docs/orders.md)
 *   authorized --(captured)--> paid;  --(released or lapsed)--> expired;  --(capture refused)--> failed
 */
export const PaymentStatus = {
  pending: 'pending',
  authorized: 'authorized',
  paid: 'paid',
  failed: 'failed',
  expired: 'expired',
  refunded: 'refunded',
} as const;
export type PaymentStatus = (typeof PaymentStatus)[keyof typeof PaymentStatus];
export const PAYMENT_STATUSES = Object.values(PaymentStatus);

/** A payment's method: one per provider (src/domain/providers), the same wire and DB value. */
export const PaymentMethod: { readonly [P in CallbackProvider]: P } = {
  card: 'card',
  qr: 'qr',
  wallet: 'wallet',
  cardnet: 'cardnet',
  bankapp: 'bankapp',
};
export type PaymentMethod = CallbackProvider;

const transitions: { readonly [S in PaymentStatus]: readonly PaymentStatus[] } = {
  pending: ['paid', 'failed', 'expired', 'authorized'],
  authorized: ['paid', 'failed', 'expired'],
  paid: ['refunded'],
  failed: [],
  expired: [],
  refunded: [],
};

export const canTransition = (from: PaymentStatus, to: PaymentStatus): boolean => transitions[from].includes(to);

/** What happened to a card authorisation (capture=false): held, captured in full or in part, released, refused. */
export type AuthorizationState = 'authorized' | 'captured' | 'partially_captured' | 'released' | 'capture_failed';
export interface PaymentSettlementView {
  authorization?: {
    state: AuthorizationState;
    authorizedAmount: number;
    capturedAmount: number;
    releasedAmount: number;
  };
  /** a top-up payment: the order whose difference it pays (docs/orders.md) */
  topUpOf?: string;
}

/**
 * The settlement fields /checkstatus and GET /payments add to a payment, from its row alone:
 * an authorisation's state (details.authorizedSatang and capturedSatang once it ended), and a
 * top-up's order. Empty for any other payment, so their answers are unchanged.
 */
export function settlementView(p: Pick<Payment, 'status' | 'amountSatang' | 'details'>): PaymentSettlementView {
  const d = p.details as { authorizedSatang?: unknown; capturedSatang?: unknown; topUpOf?: unknown };
  const out: PaymentSettlementView = {};
  const thb = (satang: number) => Math.round(satang) / 100;
  if (p.status === 'authorized')
    out.authorization = {
      state: 'authorized',
      authorizedAmount: thb(p.amountSatang),
      capturedAmount: 0,
      releasedAmount: 0,
    };
  else if (typeof d.authorizedSatang === 'number') {
    const held = d.authorizedSatang;
    const captured = typeof d.capturedSatang === 'number' ? d.capturedSatang : 0;
    const state: AuthorizationState =
      captured === 0
        ? p.status === 'failed'
          ? 'capture_failed'
          : 'released'
        : captured < held
          ? 'partially_captured'
          : 'captured';
    out.authorization = {
      state,
      authorizedAmount: thb(held),
      capturedAmount: thb(captured),
      releasedAmount: thb(held - captured),
    };
  }
  if (typeof d.topUpOf === 'string') out.topUpOf = d.topUpOf;
  return out;
}

export const isTerminal = (s: PaymentStatus): boolean =>
  s === 'failed' || s === 'expired' || s === 'refunded' || s === 'paid';

/** Returns the next state, or null when the transition is not allowed (the event is ignored). */
export function transition(from: PaymentStatus, to: PaymentStatus): PaymentStatus | null {
  return canTransition(from, to) ? to : null;
}

/**
 * A provider result contradicts a decided payment when money and status disagree: a success on
 * a payment that expired or failed (the customer paid, nobody will ship), or a failure on one
 * that is paid (or refunded from paid). A result on a pending payment, or one that agrees with
 * the status, is no conflict.
 */
export const CONTRADICTED_BY: Record<'success' | 'failed', readonly PaymentStatus[]> = {
  success: ['failed', 'expired'],
  failed: ['paid', 'refunded'],
};

export function contradicts(result: 'success' | 'failed', status: PaymentStatus): boolean {
  return CONTRADICTED_BY[result].includes(status);
}

// ---- rows ----

/**
 * The payments row as the slice maps it, and the SQL fragments by which another slice composes
 * one statement with it (the callback's claim of its receipt: one round trip, one snapshot).
 * The payments slice writes every fragment that names its table; the others embed them. Pure.
 */
type Row = Record<string, unknown>;
/** A payments row (`SELECT p.*`, other columns beside it ignored) as a Payment. */
export const toPayment = (r: Row | undefined): Payment | undefined =>
  r && {
    id: String(r.id),
    orderId: String(r.order_id),
    userId: String(r.user_id),
    status: r.status as PaymentStatus,
    method: r.method as PaymentMethod,
    mode: r.mode as Mode,
    amountSatang: Number(r.amount_satang),
    refundedSatang: Number(r.refunded_satang ?? 0),
    callbackUrl: (r.callback_url as string | null) ?? null,
    providerRef: (r.provider_ref as string | null) ?? null,
    workflowId: String(r.workflow_id),
    apiKeyId: (r.api_key_id as string | null) ?? null,
    accountId: (r.account_id as string | null) ?? null,
    details: (r.details as Payment['details'] | null) ?? {},
    expiresAt: (r.expires_at as Date | null) ?? null,
    customerId: (r.customer_id as string | null) ?? undefined,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };

/**
 * `SELECT p.*, <columns> FROM payments p` of the payment of an order, or the newest with a
 * provider reference: one row named `p`, its lookup key the one binding.
 */
export const paymentLookupSql = (by: 'orderId' | 'providerRef' | 'id', columns = ''): string =>
  `SELECT p.*${columns ? `, ${columns}` : ''} FROM payments p WHERE ${
    by === 'orderId' ? 'p.order_id = ?' : by === 'id' ? 'p.id = ?' : 'p.provider_ref = ? ORDER BY p.created_at DESC'
  } LIMIT 1`;

/**
 * The payment a callback's order id means, in one row (order ids are unique per account and mode
 * only): of the order's payments, those `namedSql` (a condition on `p`, with `namedBindings`)
 * names when it names any, else all; the oldest, with `candidates`, their count (more than one:
 * ambiguous). Bindings: the order id, namedBindings, the order id, namedBindings.
 */
export const paymentOfOrderSql = (namedSql: string, columns = ''): string =>
  `SELECT p.*${columns ? `, ${columns}` : ''}, count(*) OVER () AS candidates FROM payments p
    WHERE p.order_id = ? AND (${namedSql} OR NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = ? AND ${namedSql}))
    ORDER BY p.created_at, p.id LIMIT 1`;

/**
 * A QR payment's reference (Ref1, tag 62): the one stored with it (from its payment id since order
 * ids are scoped, from its order id before); a row older than stored references, its order's.
 */
export const qrReferenceOf = (p: Pick<Payment, 'orderId' | 'details'>): string => {
  const stored = (p.details.qr as { ref1?: unknown } | undefined)?.ref1;
  return typeof stored === 'string' ? stored : orderReference(p.orderId);
};

/** qrReferenceOf as SQL over the payments row `p`; its one binding: orderReference of the row's order id. */
export const qrReferenceSql = "COALESCE(p.details->'qr'->>'ref1', ?)";

/** A scalar subquery: the status of the payment whose id is the SQL expression `idSql`. */
export const paymentStatusSql = (idSql: string): string => `(SELECT status FROM payments WHERE id = ${idSql})`;

/** How a provider's settlement lines name a payment: its provider reference, or its QR's ref1. */
export type SettlementRef = 'providerRef' | 'qrRef1';

/** The column (of the payments row named `p`) that is the settlement reference `ref`. */
export const settlementRefSql = (ref: SettlementRef): string =>
  ref === 'providerRef' ? 'p.provider_ref' : "p.details->'qr'->>'ref1'";

/** `SELECT p.id FROM payments p` of one method and mode (to restrict another table's rows by). */
export const paymentIdsSql = (method: PaymentMethod, mode: Mode): SqlFragment => ({
  sql: 'SELECT p.id FROM payments p WHERE p.method = ? AND p.mode = ?',
  bindings: [method, mode],
});

/**
 * The payments of a method and mode whose settlement reference is one of `refs`, one row per
 * match: id, payment_id, order_id, amount_satang, status, ref.
 */
export const paymentsByRefSql = (
  ref: SettlementRef,
  refs: string[],
  method: PaymentMethod,
  mode: Mode,
): SqlFragment => ({
  sql: `SELECT p.id, p.id AS payment_id, p.order_id, p.amount_satang, p.status, ${settlementRefSql(ref)} AS ref,
               p.details->>'authorizedSatang' AS authorized_satang, p.details->>'topUpOf' AS top_up_of
          FROM unnest(?::text[]) AS x(ref) JOIN payments p ON ${settlementRefSql(ref)} = x.ref
         WHERE p.method = ? AND p.mode = ?`,
  bindings: [refs, method, mode],
});

/** The conflicts of the payments `ids`, oldest first: id, payment_id, result_status, resolution. */
export const conflictsOfSql = (ids: string[]): SqlFragment => ({
  sql: `SELECT c.id, c.payment_id, c.result_status, c.resolution
          FROM unnest(?::text[]) AS x(id) JOIN payment_conflicts c ON c.payment_id = x.id ORDER BY c.created_at`,
  bindings: [ids],
});

/**
 * The payments of a method and mode first paid in [from, to) and paid or refunded now: id,
 * order_id, amount_satang, ref (the settlement reference `ref`), paid_at (the first paid
 * event: a card authorisation's capture), failed_conflict (the id of a failure recorded after
 * paid, else null) and authorized_satang (a captured authorisation's held amount, else null).
 */
export const paidBetweenSql = (w: {
  ref: SettlementRef;
  method: PaymentMethod;
  mode: Mode;
  from: Date;
  to: Date;
}): SqlFragment => ({
  sql: `SELECT p.id, p.order_id, p.amount_satang, ${settlementRefSql(w.ref)} AS ref, e.at AS paid_at,
               c.id AS failed_conflict, p.details->>'authorizedSatang' AS authorized_satang
          FROM (SELECT payment_id, min(created_at) AS at FROM payment_events
                 WHERE to_status = 'paid' AND created_at >= ? AND created_at < ? GROUP BY payment_id) e
          JOIN payments p ON p.id = e.payment_id
          LEFT JOIN payment_conflicts c ON c.payment_id = p.id AND c.result_status = 'failed'
         WHERE p.method = ? AND p.mode = ? AND p.status IN ('paid', 'refunded')`,
  bindings: [w.from, w.to, w.method, w.mode],
});

/** A payments row the gateway (or an order's top-up) writes before its workflow starts. */
export interface NewPayment {
  paymentId: string;
  orderId: string;
  userId: string;
  method: PaymentMethod;
  amountSatang: number;
  mode: Mode;
  workflowId: string;
  customerId?: string;
  callbackUrl?: string;
  apiKeyId?: string;
  /** the key's account (OrderScope); absent: the key's id (each key its own account unless linked) */
  accountId?: string | null;
  expiresAt?: string;
  details?: Record<string, unknown>;
}

/** A capture or a void of a card authorisation at the provider (the orders slice's finalisation). */
export interface HoldOperationInput {
  chargeId: string;
  mode: Mode;
  /** the provider's Idempotency-Key: a retried capture is the same capture */
  idempotencyKey: string;
  /** capture: satang to capture (the rest is released) */
  amountSatang?: number;
}
