/**
 * Late and conflicting results (late-result-v1): a provider result that contradicts a decided
 * payment is never dropped. resolveLateResult runs in lateResultWorkflow (started by the callback
 * processor when the row was already settled the other way) or in the payment workflow's signal
 * handler (the workflow had decided first). recordLateResult checks the proof and records the
 * conflict once per payment and status; the claimant applies LATE_PAYMENT_POLICY to a late
 * success (refund through the provider, or review in GET /late-payments) and e-mails the
 * administrator, once.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { ADMIN_MAIL, DB_ACTIVITY } from '../activity-options';
import { PROVIDER_CALL } from '../provider-call';
import type { LateRecord } from '../../activities/payments/late-results';
import type { ConflictResolution, LateResultInput, LateResultOutcome } from '../../src/payments';
import { providerFailure } from '../refunds';

const { recordLateResult, settleLateResult, recordRefund, settleRefund } = proxyActivities<Activities>(DB_ACTIVITY);
/** Provider calls: as the refunds workflow's (a few quick retries; a 4xx is non-retryable). */
const { requestProviderRefund } = proxyActivities<Activities>(PROVIDER_CALL);
const { notifyAdmin } = proxyActivities<Activities>(ADMIN_MAIL);

const WHAT: Record<ConflictResolution, string> = {
  recorded: 'recorded; the payment keeps its status. Check with the provider which result is true.',
  review: 'listed for review (LATE_PAYMENT_POLICY=review): GET /late-payments. Refund or fulfil the order by hand.',
  refund_pending: 'a refund through the provider was requested.',
  refunded: 'refunded in full through the provider (LATE_PAYMENT_POLICY=refund).',
  refund_failed: 'the automatic refund FAILED: refund the customer by hand.',
};

async function refundLatePayment(rec: LateRecord): Promise<{ resolution: ConflictResolution; detail?: string }> {
  const refund = rec.refund!;
  await recordRefund({
    refundId: refund.refundId,
    paymentId: refund.paymentId,
    orderId: refund.orderId,
    amountSatang: refund.amountSatang,
    reason: refund.reason,
  });
  let resolution: ConflictResolution = 'refunded';
  let detail: string | undefined;
  try {
    const { providerRef } = await requestProviderRefund(refund);
    await settleRefund({ refundId: refund.refundId, paymentId: refund.paymentId, status: 'succeeded', providerRef });
  } catch (e) {
    resolution = 'refund_failed';
    detail = providerFailure(e);
    await settleRefund({
      refundId: refund.refundId,
      paymentId: refund.paymentId,
      status: 'failed',
      failureReason: detail,
    });
  }
  await settleLateResult({ conflictId: rec.conflictId!, resolution, detail });
  return { resolution, detail };
}

export async function resolveLateResult(input: LateResultInput): Promise<LateResultOutcome> {
  const rec = await recordLateResult(input);
  if (rec.verdict !== 'recorded')
    return { verdict: rec.verdict, conflictId: rec.conflictId, resolution: rec.resolution };
  let resolution = rec.resolution!;
  let detail: string | undefined;
  if (rec.refund) ({ resolution, detail } = await refundLatePayment(rec));

  const r = input.result;
  try {
    await notifyAdmin({
      subject: `[Talat] Conflicting payment result: order ${input.orderId}, ${r.provider} ${r.status} after the payment ${input.paymentStatus}`,
      text: [
        `The ${r.provider} provider reported ${r.status} for payment ${input.paymentId} (order ${input.orderId}),`,
        `but the payment had already ended ${input.paymentStatus}.`,
        '',
        `Amount: ${((rec.amountSatang ?? 0) / 100).toFixed(2)} THB (${rec.mode ?? 'unknown'} mode)`,
        `Provider reference: ${r.reference ?? '-'}`,
        `Callback receipt: ${r.receiptId ?? '-'}`,
        `Conflict: ${rec.conflictId}`,
        '',
        `What happened: ${WHAT[resolution]}${detail ? ` (${detail})` : ''}`,
        '',
        `The order's timeline: GET /payments/${input.orderId}/timeline`,
        '',
      ].join('\n'),
    });
  } catch (e) {
    log.warn('administrator e-mail failed', { orderId: input.orderId, error: (e as Error).message });
  }
  return { verdict: 'recorded', conflictId: rec.conflictId, resolution };
}

/** lateResultWorkflow (id late-result-<paymentId>-<status>): started by the callback processor. */
export async function lateResultWorkflow(input: LateResultInput): Promise<LateResultOutcome> {
  return resolveLateResult(input);
}
