/**
 * The payments row as the slice maps it, and the SQL fragments by which another slice composes
 * one statement with it (the callback's claim of its receipt, reconciliation's matching: one
 * round trip, one snapshot). The payments slice writes every fragment that names its tables
 * (payments, payment_events, payment_conflicts); the others embed them. Pure.
 */
import type { Mode } from '../domain/mode';
import type { SqlFragment } from '../domain/sql';
import type { Payment } from './contract';
import type { PaymentMethod, PaymentStatus } from './states';

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
    details: (r.details as Payment['details'] | null) ?? {},
    expiresAt: (r.expires_at as Date | null) ?? null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  };

/**
 * `SELECT p.*, <columns> FROM payments p` of the payment of an order, or the newest with a
 * provider reference: one row named `p`, its lookup key the one binding.
 */
export const paymentLookupSql = (by: 'orderId' | 'providerRef', columns = ''): string =>
  `SELECT p.*${columns ? `, ${columns}` : ''} FROM payments p WHERE ${
    by === 'orderId' ? 'p.order_id = ?' : 'p.provider_ref = ? ORDER BY p.created_at DESC'
  } LIMIT 1`;

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
  sql: `SELECT p.id, p.id AS payment_id, p.order_id, p.amount_satang, p.status, ${settlementRefSql(ref)} AS ref
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
 * event) and failed_conflict (the id of a failure recorded after paid, else null).
 */
export const paidBetweenSql = (w: {
  ref: SettlementRef;
  method: PaymentMethod;
  mode: Mode;
  from: Date;
  to: Date;
}): SqlFragment => ({
  sql: `SELECT p.id, p.order_id, p.amount_satang, ${settlementRefSql(w.ref)} AS ref, e.at AS paid_at,
               c.id AS failed_conflict
          FROM (SELECT payment_id, min(created_at) AS at FROM payment_events
                 WHERE to_status = 'paid' AND created_at >= ? AND created_at < ? GROUP BY payment_id) e
          JOIN payments p ON p.id = e.payment_id
          LEFT JOIN payment_conflicts c ON c.payment_id = p.id AND c.result_status = 'failed'
         WHERE p.method = ? AND p.mode = ? AND p.status IN ('paid', 'refunded')`,
  bindings: [w.from, w.to, w.method, w.mode],
});
