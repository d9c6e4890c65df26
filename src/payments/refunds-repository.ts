/**
 * The refunds table and the refunded total of a payment: written only by the refund activities
 * (after the refund workflow decided), read by GET /checkstatus. Each write is idempotent, so
 * Temporal may retry it.
 */
import type { Db } from '../db/knex';
import type { Mode } from '../domain/mode';
import type { PaymentMethod, PaymentStatus } from '../domain/payment-state';
import { canTransition } from '../domain/payment-state';

export interface RefundablePayment {
  paymentId: string;
  orderId: string;
  method: PaymentMethod;
  mode: Mode;
  status: PaymentStatus;
  amountSatang: number;
  refundedSatang: number;
  providerRef: string | null;
  apiKeyId: string | null;
}

export interface RefundRow {
  id: string;
  amountSatang: number;
  status: 'pending' | 'succeeded' | 'failed';
  reason: string | null;
  failureReason: string | null;
  providerRef: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export async function refundablePayment(db: Db, orderId: string): Promise<RefundablePayment | null> {
  const r = await db('payments').where({ order_id: orderId }).first();
  if (!r) return null;
  return {
    paymentId: r.id,
    orderId: r.order_id,
    method: r.method,
    mode: r.mode,
    status: r.status,
    amountSatang: Number(r.amount_satang),
    refundedSatang: Number(r.refunded_satang),
    providerRef: r.provider_ref ?? null,
    apiKeyId: r.api_key_id ?? null,
  };
}

/** The pending refund row; a retry finds it and does nothing. */
export async function insertRefund(
  db: Db,
  r: { refundId: string; paymentId: string; orderId: string; amountSatang: number; reason?: string; apiKeyId?: string },
): Promise<void> {
  await db('refunds')
    .insert({
      id: r.refundId,
      payment_id: r.paymentId,
      order_id: r.orderId,
      amount_satang: r.amountSatang,
      reason: r.reason ?? null,
      api_key_id: r.apiKeyId ?? null,
    })
    .onConflict('id')
    .ignore();
}

/**
 * The provider's answer: a failed refund counts nothing; a succeeded one adds its amount to the
 * payment's refunded total and, when that reaches the amount, moves the payment paid -> refunded
 * (with its payment_events row). Guarded on the refund being pending, so a retry is a no-op.
 * Returns the payment's status and refunded total afterwards.
 */
export async function settleRefund(
  db: Db,
  s: {
    refundId: string;
    paymentId: string;
    status: 'succeeded' | 'failed';
    providerRef?: string;
    failureReason?: string;
  },
): Promise<{ status: PaymentStatus; refundedSatang: number; amountSatang: number }> {
  return db.transaction(async (trx) => {
    const [refund] = await trx('refunds')
      .where({ id: s.refundId, status: 'pending' })
      .update({
        status: s.status,
        provider_ref: s.providerRef ?? null,
        failure_reason: s.failureReason ?? null,
        updated_at: trx.fn.now(),
      })
      .returning(['amount_satang']);
    if (refund && s.status === 'succeeded') {
      const [p] = await trx('payments')
        .where({ id: s.paymentId })
        .update({
          refunded_satang: trx.raw('refunded_satang + ?', [Number(refund.amount_satang)]),
          updated_at: trx.fn.now(),
        })
        .returning(['status', 'amount_satang', 'refunded_satang']);
      if (Number(p.refunded_satang) === Number(p.amount_satang) && canTransition(p.status, 'refunded')) {
        await trx('payments').where({ id: s.paymentId, status: p.status }).update({ status: 'refunded' });
        await trx('payment_events').insert({
          payment_id: s.paymentId,
          from_status: p.status,
          to_status: 'refunded',
          reason: `refunded in full (${s.refundId})`,
        });
      }
    }
    const now = await trx('payments').where({ id: s.paymentId }).first('status', 'amount_satang', 'refunded_satang');
    return { status: now.status, refundedSatang: Number(now.refunded_satang), amountSatang: Number(now.amount_satang) };
  });
}

export async function refundsOf(db: Db, paymentId: string): Promise<RefundRow[]> {
  const rows = await db('refunds')
    .where({ payment_id: paymentId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((r: Record<string, unknown>) => ({
    id: String(r.id),
    amountSatang: Number(r.amount_satang),
    status: r.status as RefundRow['status'],
    reason: (r.reason as string | null) ?? null,
    failureReason: (r.failure_reason as string | null) ?? null,
    providerRef: (r.provider_ref as string | null) ?? null,
    createdAt: r.created_at as Date,
    updatedAt: r.updated_at as Date,
  }));
}
