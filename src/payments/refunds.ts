/**
 * The refund service (POST /refund): finds the key's payment of the order, then hands the refund
 * to the order's refunds workflow (./refund-workflow.ts), which decides and answers. The
 * refund id follows from the Idempotency-Key when there is one, so a request retried after a
 * timeout is the same refund (the same Temporal update), not a second one.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/knex';
import type { ApiKeyInfo } from '../domain/api-keys';
import { AppError, ErrorCode } from '../domain/errors';
import { satangToThb } from '../domain/money';
import { newId } from '../ids';
import type { TemporalDeps } from '../temporal/client';
import { executeRefund } from './refund-workflow';
import { paymentByOrderId } from './repository';
import type { RefundCreated, RefundRequest } from './schemas';

export function createRefundService({ db, temporal }: { db: Db; temporal: TemporalDeps }) {
  async function refund(
    req: RefundRequest,
    key: ApiKeyInfo,
    idempotencyKey: string | undefined,
  ): Promise<RefundCreated> {
    const p = await paymentByOrderId(db, req.orderId);
    if (!p || p.mode !== key.mode || (p.apiKeyId !== null && p.apiKeyId !== key.id)) {
      throw new AppError(ErrorCode.NOT_FOUND, `No payment for order ${req.orderId}`, { orderId: req.orderId });
    }
    const refundId = idempotencyKey
      ? `re_${createHash('sha256').update(`${key.id}\n${idempotencyKey}`).digest('hex').slice(0, 32)}`
      : newId('re');
    const out = await executeRefund(temporal.client, {
      taskQueue: temporal.taskQueue,
      orderId: req.orderId,
      request: { refundId, amountSatang: req.amount, reason: req.reason, apiKeyId: key.id },
    });
    if (!out.ok) throw new AppError(ErrorCode[out.code], out.message, out.details ?? { orderId: req.orderId });
    return {
      refundId: out.refundId,
      orderId: req.orderId,
      paymentId: out.payment.paymentId,
      status: out.status,
      amount: satangToThb(out.amountSatang),
      currency: 'THB',
      ...(req.reason ? { reason: req.reason } : {}),
      ...(out.failureReason ? { failureReason: out.failureReason } : {}),
      payment: {
        status: out.payment.status,
        amount: satangToThb(out.payment.amountSatang),
        refundedAmount: satangToThb(out.payment.refundedSatang),
      },
    };
  }
  return { refund };
}
