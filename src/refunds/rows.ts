/**
 * The SQL fragments by which another slice composes one statement with the refunds table
 * (reconciliation's matching). The refunds slice writes every fragment naming its table; which
 * payments count comes in as the payments slice's fragment (`paymentIdsSql`). Pure.
 */
import type { SqlFragment } from '../domain/sql';

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
