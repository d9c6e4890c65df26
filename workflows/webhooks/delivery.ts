/**
 * webhookDeliveryWorkflow (id webhook-<paymentId>-<status>, started by the payment workflows
 * through notify.ts): payment.status.updated to every receiving endpoint. Per endpoint: a first
 * attempt, then retries after 1 s, 2 s and 4 s as workflow timers; a 2xx ends it; after the
 * fourth failure a dead-letter row (webhook-keep-trying-v1: `retrying`, and a
 * webhookKeepTryingWorkflow child carries on with the endpoint's longer schedule, keep-trying.ts).
 *
 * Since lean-payment-v1 the payment workflow makes the first attempt itself and starts
 * webhookRetryWorkflow only for the retries; webhookDeliveryWorkflow stays for the histories
 * (and children) of payments settled before, and for the refunds' events.
 * webhookReplayWorkflow (id webhook-replay-<deadLetterId>): one operator-requested attempt.
 */
import { patched, proxyActivities, sleep } from '@temporalio/workflow';
import { Patch } from '../../src/domain/temporal';
import { keepTrying } from './keep-trying';
import type { Activities } from '../../activities';
import type { WebhookEvent } from '../../src/webhooks';
import {
  WEBHOOK_RETRY_DELAYS_MS,
  type AttemptResult,
  type DeliveryOutcome,
  type ReplayOutcome,
  type WebhookReplayInput,
  type WebhookRetryInput,
} from '../../src/webhooks';

/** One transaction each: a worker killed during one is noticed within 5 s (the retry is idempotent). */
const { planWebhookDeliveries, deadLetterWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** An attempt is exactly one POST: never retried by Temporal; a lost worker is noticed by the heartbeat timeout. */
const { attemptWebhookDelivery, replayDeadLetter } = proxyActivities<Activities>({
  startToCloseTimeout: '90 seconds',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
});

async function attemptOnce(deliveryId: string, attempt: number): Promise<AttemptResult> {
  try {
    return await attemptWebhookDelivery({ deliveryId, attempt, kind: 'automatic' });
  } catch (e) {
    return { ok: false, error: `attempt did not complete: ${(e as Error).message}` };
  }
}

/** Attempts `from`..4 of a delivery (attempt n > 1 after WEBHOOK_RETRY_DELAYS_MS[n - 2]), then the dead letter. */
async function deliver(deliveryId: string, from = 1, firstAttemptAt?: number): Promise<DeliveryOutcome> {
  let last: AttemptResult = { ok: false, error: 'first attempt failed' };
  for (let attempt = from; attempt <= WEBHOOK_RETRY_DELAYS_MS.length + 1; attempt++) {
    // attempt 2 of a retry child: its 1 s count from the first attempt, made by the payment workflow
    const waited = attempt === from && firstAttemptAt !== undefined ? Math.max(0, Date.now() - firstAttemptAt) : 0;
    if (attempt > 1) await sleep(Math.max(1, WEBHOOK_RETRY_DELAYS_MS[attempt - 2] - waited));
    last = await attemptOnce(deliveryId, attempt);
    if (last.ok) return { deliveryId, state: 'delivered', attempts: attempt };
    if (last.cancelled) return { deliveryId, state: 'cancelled', attempts: attempt };
  }
  const attempts = WEBHOOK_RETRY_DELAYS_MS.length + 1;
  const reason = `${attempts} attempts failed; last: ${last.error ?? 'no response'}`;
  if (patched(Patch.webhookKeepTrying)) {
    const deadLetterId = await deadLetterWebhook({ deliveryId, reason, keepTrying: true });
    await keepTrying(deliveryId, deadLetterId);
    return { deliveryId, state: 'retrying', attempts, deadLetterId };
  }
  const deadLetterId = await deadLetterWebhook({ deliveryId, reason });
  return { deliveryId, state: 'dead', attempts, deadLetterId };
}

export async function webhookDeliveryWorkflow(event: WebhookEvent): Promise<DeliveryOutcome[]> {
  const deliveryIds = await planWebhookDeliveries(event);
  return Promise.all(deliveryIds.map((id) => deliver(id)));
}

/**
 * webhookRetryWorkflow (id webhook-<paymentId>-<status>, lean-payment-v1): the payment workflow
 * made the first attempt of each delivery itself; this child, started only when one failed,
 * makes attempts 2, 3 and 4 after 1 s, 2 s and 4 s, then the dead letter. A delivery the settle
 * step deferred (bulkhead-v1: its endpoint was failing or busy) gets its first attempt here, at once.
 */
export async function webhookRetryWorkflow(input: WebhookRetryInput): Promise<DeliveryOutcome[]> {
  const deferred = new Set(input.deferred ?? []);
  return Promise.all(
    input.deliveryIds.map((id) => (deferred.has(id) ? deliver(id) : deliver(id, 2, input.firstAttemptAt))),
  );
}

export async function webhookReplayWorkflow(input: WebhookReplayInput): Promise<ReplayOutcome> {
  return replayDeadLetter(input);
}
