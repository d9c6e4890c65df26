/**
 * The refunds table and the refunded total of a payment. POST /refund writes a refund's row
 * (pending) before any money moves (recordRefundRequest); the refund activities read it, and
 * write the provider's outcome; GET /checkstatus reads them. Each activity write is idempotent,
 * so Temporal may retry it; the trigger refunds_within_amount keeps pending + succeeded refunds
 * within the amount paid whoever writes.
 */
import type { Db } from '../db/knex';
import { newId } from '../ids';
import type { Mode } from '../domain/mode';
import type { SqlFragment } from '../domain/sql';
import { succeededBetweenSql } from './index';
import type { PaymentMethod, PaymentRecords, PaymentStatus } from '../payments';

/**
 * The payments slice's records over a database or a transaction (paymentRecords): what a refund
 * reads and writes of its payment, in the refund's own transaction. Wired by the composition root.
 */
export type PaymentsOver = (
  db: Db,
) => Pick<PaymentRecords, 'byOrderId' | 'byId' | 'lockForRefund' | 'addRefunded' | 'amounts'>;

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

/** The order's payment when only one payment uses the order id (refund workflows before refund-record-v1). */
export async function refundablePayment(
  db: Db,
  payments: PaymentsOver,
  orderId: string,
): Promise<RefundablePayment | null> {
  return refundableOf(await payments(db).byOrderId(orderId));
}

/** The payment `paymentId` (a recorded refund's): whatever other account or mode uses its order id. */
export async function refundablePaymentById(
  db: Db,
  payments: PaymentsOver,
  paymentId: string,
): Promise<RefundablePayment | null> {
  return refundableOf(await payments(db).byId(paymentId));
}

function refundableOf(p: Awaited<ReturnType<PaymentRecords['byId']>>): RefundablePayment | null {
  if (!p) return null;
  return {
    paymentId: p.id,
    orderId: p.orderId,
    method: p.method,
    mode: p.mode,
    status: p.status,
    amountSatang: p.amountSatang,
    refundedSatang: p.refundedSatang,
    providerRef: p.providerRef,
    apiKeyId: p.apiKeyId,
  };
}

import type { RecordedRefund, RefundRequestDecision } from './index';
export type { RecordedRefund, RefundRequestDecision };

const recorded = (r: Record<string, unknown>): RecordedRefund => ({
  refundId: String(r.id),
  paymentId: String(r.payment_id),
  orderId: String(r.order_id),
  amountSatang: Number(r.amount_satang),
  status: r.status as RefundRow['status'],
  reason: (r.reason as string | null) ?? null,
  failureReason: (r.failure_reason as string | null) ?? null,
});

export async function refundById(db: Db, refundId: string): Promise<RecordedRefund | undefined> {
  const r = await db('refunds').where({ id: refundId }).first();
  return r ? recorded(r) : undefined;
}

/**
 * POST /refund's row, written before the provider is asked: a fresh id per refund; with an
 * Idempotency-Key, the key's refund for as long as its row exists (the same order and amount:
 * that refund again; anything else: IDEMPOTENCY_KEY_REUSED). With the payment row locked, only a
 * paid payment, never more than its amount less the pending and succeeded refunds.
 */
export async function recordRefundRequest(
  db: Db,
  payments: PaymentsOver,
  r: {
    paymentId: string;
    orderId: string;
    apiKeyId: string;
    idempotencyKey?: string;
    amountSatang?: number;
    reason?: string;
  },
): Promise<RefundRequestDecision> {
  const prior = async (): Promise<RefundRequestDecision | undefined> => {
    if (!r.idempotencyKey) return undefined;
    const row = await db('refunds').where({ api_key_id: r.apiKeyId, idempotency_key: r.idempotencyKey }).first();
    if (!row) return undefined;
    const requested = row.requested_satang === null ? undefined : Number(row.requested_satang);
    if (row.order_id === r.orderId && requested === r.amountSatang) return { ok: true, refund: recorded(row) };
    return {
      ok: false,
      code: 'IDEMPOTENCY_KEY_REUSED',
      message: 'This Idempotency-Key was used for another refund',
      details: { idempotencyKey: r.idempotencyKey, refundId: row.id },
    };
  };
  const found = await prior();
  if (found) return found;
  try {
    return await db.transaction(async (trx): Promise<RefundRequestDecision> => {
      const p = (await payments(trx).lockForRefund(r.paymentId))!;
      if (p.status !== 'paid')
        return {
          ok: false,
          code: 'CONFLICT',
          message: `Only a paid payment can be refunded; this one is ${p.status}`,
          details: { orderId: r.orderId, status: p.status },
        };
      const [{ counted }] = await trx('refunds')
        .where({ payment_id: r.paymentId })
        .whereIn('status', ['pending', 'succeeded'])
        .sum({ counted: 'amount_satang' });
      const rest = p.amountSatang - Number(counted ?? 0);
      const amountSatang = r.amountSatang ?? rest;
      if (amountSatang <= 0 || amountSatang > rest)
        return {
          ok: false,
          code: 'INVALID_INPUT',
          message: `amount: at most ${rest / 100} THB can still be refunded`,
          details: { field: 'amount', refundable: rest / 100 },
        };
      const [row] = await trx('refunds')
        .insert({
          id: newId('re'),
          payment_id: r.paymentId,
          order_id: r.orderId,
          amount_satang: amountSatang,
          reason: r.reason ?? null,
          api_key_id: r.apiKeyId,
          idempotency_key: r.idempotencyKey ?? null,
          requested_satang: r.amountSatang ?? null,
        })
        .returning('*');
      return { ok: true, refund: recorded(row) };
    });
  } catch (e) {
    // the same Idempotency-Key in a concurrent request (after its retention): that one's refund
    if ((e as { code?: string }).code === '23505' && r.idempotencyKey) {
      const again = await prior();
      if (again) return again;
    }
    throw e;
  }
}

/** The pending refund row (refund workflows before refund-record-v1); a retry finds it and does nothing. */
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
  payments: PaymentsOver,
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
    if (refund && s.status === 'succeeded')
      await payments(trx).addRefunded(s.paymentId, Number(refund.amount_satang), s.refundId);
    return payments(trx).amounts(s.paymentId);
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

/** A payment's refunds as stored, for the order timeline. */
export const refundRowsOfPayment = (db: Db, paymentId: string) => db('refunds').where({ payment_id: paymentId });

/** The amount of a succeeded refund of the payment, or undefined (a webhook's check of its event). */
export async function succeededRefundAmount(db: Db, refundId: string, paymentId: string): Promise<number | undefined> {
  const r = await db('refunds')
    .where({ id: refundId, payment_id: paymentId, status: 'succeeded' })
    .first('amount_satang');
  return r ? Number(r.amount_satang) : undefined;
}

/**
 * The refunds of the payments `payments` selects (the payments slice's `paymentIdsSql`) that
 * succeeded in [from, to) with a provider reference, oldest first (a sandbox day file).
 */
export async function refundsSucceededBetween(
  db: Db,
  w: { from: Date; to: Date; payments: SqlFragment },
): Promise<{ ref: string; amountSatang: number; at: Date }[]> {
  const f = succeededBetweenSql(w);
  const { rows } = await db.raw(
    `SELECT r.provider_ref, r.amount_satang, r.updated_at FROM (${f.sql}) r
      WHERE r.provider_ref IS NOT NULL ORDER BY r.updated_at, r.id`,
    f.bindings,
  );
  return (rows as { provider_ref: string; amount_satang: string; updated_at: Date }[]).map((r) => ({
    ref: r.provider_ref,
    amountSatang: Number(r.amount_satang),
    at: r.updated_at,
  }));
}
