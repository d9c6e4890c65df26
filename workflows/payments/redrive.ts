/**
 * paymentRedriveWorkflow (id payment-redrive-<paymentId>-<status>): started by the callback
 * processor when a verified provider result finds the payment's workflow closed (terminated,
 * failed, timed out: by an operator or an attacker) while its row is still pending. The row is
 * the truth: settleClosedPayment settles it from the result (proof checked first) and makes the
 * webhook's first attempts; retries go to a webhookRetryWorkflow child as the payment's own would.
 * A result that contradicts the row (settled otherwise meanwhile) is a late result.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { ADMIN_MAIL, DB_ACTIVITY } from '../activity-options';
import { contradicts, type PaymentRedriveInput, type PaymentRedriveOutcome } from '../../src/payments';
import { retryWebhookDeliveries } from '../webhooks';
import { v2Patches } from '../patches';
import { resolveLateResult } from './late-result';

const { settleClosedPayment } = proxyActivities<Activities>(DB_ACTIVITY);
const { notifyAdmin } = proxyActivities<Activities>(ADMIN_MAIL);

export async function paymentRedriveWorkflow(input: PaymentRedriveInput): Promise<PaymentRedriveOutcome> {
  const out = await settleClosedPayment(input);
  if (out.rejected || out.status === null) return { status: out.status, settled: false };
  if (!out.event) {
    if (contradicts(input.result.status, out.status)) await resolveLateResult({ ...input, paymentStatus: out.status });
    return { status: out.status, settled: false };
  }
  await retryWebhookDeliveries(out.event, out.retry, out.firstAttemptAt, out.deferred, v2Patches);
  try {
    await notifyAdmin({
      subject: `[Talat] Payment ${input.paymentId} (order ${input.orderId}) re-driven: its workflow had been closed`,
      text: [
        `The ${input.result.provider} provider reported ${input.result.status} for payment ${input.paymentId}`,
        `(order ${input.orderId}) while its workflow was closed (terminated, failed or timed out) and its`,
        `record still pending. The record is now ${out.status} and the merchant's webhook was sent.`,
        'Find out who closed the workflow: an operator, or someone who reached the Temporal frontend.',
        '',
      ].join('\n'),
    });
  } catch (e) {
    log.warn('administrator e-mail failed', { paymentId: input.paymentId, error: (e as Error).message });
  }
  return { status: out.status, settled: true };
}
