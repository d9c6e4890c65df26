/**
 * The payments row as the slice maps it, and the SQL fragments by which another slice composes
 * one statement with it (the callback's claim of its receipt: one round trip, one snapshot).
 * The payments slice writes every fragment that names its table; the others embed them. Pure.
 */
import type { Mode } from '../domain/mode';
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
