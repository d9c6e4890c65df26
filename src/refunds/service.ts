/**
 * The refund service (POST /refund): finds the key's payment of the order, records the refund
 * (its row, pending, with a fresh id: src/refunds/repository.ts) before any money
 * moves, then hands it to the order's refunds workflow (./workflow-client.ts) with the gateway's
 * proof of that row (talat-refund-v1), and answers its outcome. With an Idempotency-Key, a
 * request retried after a timeout, even after the key's 24 h retention, is the same refund.
 * A keyless (public) payment is refunded only by a key with the operator scope refunds:public.
 */
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { ApiKeyInfo } from '../domain/api-keys';
import { AppError, ErrorCode } from '../domain/errors';
import { satangToThb } from '../domain/money';
import { signRefund } from '../proofs';
import type { TemporalDeps } from '../temporal/client';
import { executeRefund } from './workflow-client';
import { recordRefundRequest, type PaymentsOver } from './repository';
import type { RefundCreated, RefundRequest } from './schemas';
import type { OrderScope } from '../payments';

/** Who may refund a payment: its creating key; a keyless one, a key with the operator scope refunds:public. */
export const mayRefund = (p: { mode: string; apiKeyId: string | null }, key: ApiKeyInfo): boolean =>
  p.mode === key.mode && (p.apiKeyId === null ? key.scopes.includes('refunds:public') : p.apiKeyId === key.id);

export interface RefundServiceDeps {
  db: Db;
  temporal: TemporalDeps;
  config: Config;
  /** the payments slice's records (the order's payment; its lock and refunded total) */
  payments: PaymentsOver;
}

export function createRefundService({ db, temporal, config, payments }: RefundServiceDeps) {
  async function refund(
    req: RefundRequest,
    key: ApiKeyInfo,
    idempotencyKey: string | undefined,
  ): Promise<RefundCreated> {
    // the caller's payment of the order (order ids are unique per account and mode), else a
    // keyless card payment of it in the caller's mode (refunded with refunds:public only)
    const scope: OrderScope = { accountId: key.accountId ?? key.id, mode: key.mode };
    const p =
      (await payments(db).byOrderId(req.orderId, scope)) ??
      (await payments(db).byOrderId(req.orderId, { accountId: null, mode: key.mode }));
    if (!p || !mayRefund(p, key)) {
      throw new AppError(ErrorCode.NOT_FOUND, `No payment for order ${req.orderId}`, { orderId: req.orderId });
    }
    const recorded = await recordRefundRequest(db, payments, {
      paymentId: p.id,
      orderId: req.orderId,
      apiKeyId: key.id,
      idempotencyKey,
      amountSatang: req.amount,
      reason: req.reason,
    });
    if (!recorded.ok) throw new AppError(ErrorCode[recorded.code], recorded.message, recorded.details);
    const { refundId, paymentId, amountSatang } = recorded.refund;
    const proof = signRefund(config.results.signingKey, { refundId, paymentId, orderId: req.orderId, amountSatang });
    const out = await executeRefund(temporal.client, {
      taskQueue: temporal.taskQueue,
      orderId: req.orderId,
      request: { refundId, proof },
    });
    if (!out.ok) throw new AppError(ErrorCode[out.code], out.message, out.details ?? { orderId: req.orderId });
    const reason = recorded.refund.reason ?? undefined;
    return {
      refundId: out.refundId,
      orderId: req.orderId,
      paymentId: out.payment.paymentId,
      status: out.status,
      amount: satangToThb(out.amountSatang),
      currency: 'THB',
      ...(reason ? { reason } : {}),
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
