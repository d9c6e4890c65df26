/**
 * orderRefundsWorkflow (id refunds-<orderId>): the refunds of one order, started by the gateway
 * with update-with-start; each refund is one `refund` update (update id: refund id and proof digest), served one
 * at a time in arrival order. refund-record-v1: POST /refund recorded the refund (pending) and
 * the update carries its proof; the worker loads the row, refunds what it says, asks the provider
 * (activity), records the outcome (a full refund moves the payment to `refunded`), and on success
 * emits payment.status.updated. An update without a valid proof refunds nothing. Before, the
 * workflow validated the update's own amount and recorded the row (old histories replay so). The
 * workflow ends after `idleSeconds` without a refund, or continues as new when its history grows.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DB_ACTIVITY } from './activity-options';
import { PROVIDER_CALL, providerFailureReason } from './provider-call';
import { ActivityFailureType, Patch } from '../src/domain/temporal';
import { refundUpdate, type RefundOutcome, type RefundRequest, type RefundsInput } from '../src/refunds';
import type { RefundablePayment } from '../activities/refunds';
import { emitPaymentStatusUpdated } from './webhooks';

const { loadRefundablePayment, loadRecordedRefund, recordRefund, settleRefund } =
  proxyActivities<Activities>(DB_ACTIVITY);
const { requestProviderRefund } = proxyActivities<Activities>(PROVIDER_CALL);

/** A refund failure as a short reason (the refunds row, the late-result resolution). */
export const providerFailure = (e: unknown): string =>
  providerFailureReason(
    e,
    [ActivityFailureType.RefundRejected, ActivityFailureType.ProviderNotConfigured],
    (f) => `refund refused: ${f.message}`,
    'refund provider unavailable',
  );

const notFound = (orderId: string): RefundOutcome => ({
  ok: false,
  code: 'NOT_FOUND',
  message: `No payment for order ${orderId}`,
  details: { orderId },
});

/** refund-record-v1: the recorded refund the update names and proves; nothing for anything else. */
async function refundRecorded(orderId: string, req: RefundRequest): Promise<RefundOutcome> {
  const found = await loadRecordedRefund({ orderId, refundId: req.refundId, proof: req.proof });
  if (!found.ok) return notFound(orderId);
  const { refund: r, payment: p } = found;
  if (r.status !== 'pending')
    return {
      ok: true,
      refundId: r.refundId,
      status: r.status,
      amountSatang: r.amountSatang,
      ...(r.failureReason ? { failureReason: r.failureReason } : {}),
      payment: {
        paymentId: p.paymentId,
        status: p.status,
        amountSatang: p.amountSatang,
        refundedSatang: p.refundedSatang,
      },
    };
  return moveMoney(orderId, p, r.refundId, r.amountSatang, r.reason ?? undefined);
}

/** Before refund-record-v1 (old histories replay this): the update's own amount, checked here. */
async function refundOnce(orderId: string, req: RefundRequest): Promise<RefundOutcome> {
  const p = await loadRefundablePayment(orderId);
  if (!p || (p.apiKeyId !== null && req.apiKeyId !== undefined && p.apiKeyId !== req.apiKeyId))
    return notFound(orderId);
  if (p.status !== 'paid')
    return {
      ok: false,
      code: 'CONFLICT',
      message: `Only a paid payment can be refunded; this one is ${p.status}`,
      details: { orderId, status: p.status },
    };
  const rest = p.amountSatang - p.refundedSatang;
  const amountSatang = req.amountSatang ?? rest;
  if (amountSatang <= 0 || amountSatang > rest) {
    return {
      ok: false,
      code: 'INVALID_INPUT',
      message: `amount: at most ${rest / 100} THB can still be refunded`,
      details: { field: 'amount', refundable: rest / 100 },
    };
  }
  await recordRefund({
    refundId: req.refundId,
    paymentId: p.paymentId,
    orderId,
    amountSatang,
    reason: req.reason,
    apiKeyId: req.apiKeyId,
  });
  return moveMoney(orderId, p, req.refundId, amountSatang, req.reason);
}

/** The provider's refund of a recorded pending refund, its outcome on the rows, and its webhook. */
async function moveMoney(
  orderId: string,
  p: RefundablePayment,
  refundId: string,
  amountSatang: number,
  reason: string | undefined,
): Promise<RefundOutcome> {
  let providerRef: string;
  try {
    ({ providerRef } = await requestProviderRefund({
      refundId,
      paymentId: p.paymentId,
      orderId,
      method: p.method,
      mode: p.mode,
      providerRef: p.providerRef,
      amountSatang,
      reason,
    }));
  } catch (e) {
    const failureReason = providerFailure(e);
    const after = await settleRefund({
      refundId,
      paymentId: p.paymentId,
      status: 'failed',
      failureReason,
    });
    return {
      ok: true,
      refundId,
      status: 'failed',
      amountSatang,
      failureReason,
      payment: { paymentId: p.paymentId, ...after },
    };
  }
  const after = await settleRefund({
    refundId,
    paymentId: p.paymentId,
    status: 'succeeded',
    providerRef,
  });
  await emitPaymentStatusUpdated({
    paymentId: p.paymentId,
    orderId,
    status: after.status === 'refunded' ? 'refunded' : 'partially_refunded',
    amountSatang,
    timestamp: new Date().toISOString(),
    mode: p.mode,
    apiKeyId: p.apiKeyId ?? undefined,
    refundId,
  });
  return {
    ok: true,
    refundId,
    status: 'succeeded',
    amountSatang,
    payment: { paymentId: p.paymentId, ...after },
  };
}

export async function orderRefundsWorkflow(input: RefundsInput): Promise<void> {
  let issued = 0;
  let serving = 0;
  setHandler(refundUpdate, async (req) => {
    const ticket = issued++;
    await condition(() => serving === ticket);
    try {
      return patched(Patch.refundRecord)
        ? await refundRecorded(input.orderId, req)
        : await refundOnce(input.orderId, req);
    } finally {
      serving++;
    }
  });

  let seen = 0;
  for (;;) {
    const more = await condition(() => issued > seen, `${input.idleSeconds} seconds`);
    if (!more && serving === issued) break;
    seen = issued;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(() => serving === issued && allHandlersFinished());
      await continueAsNew<typeof orderRefundsWorkflow>(input);
    }
  }
  await condition(allHandlersFinished);
}
