/**
 * webhookResendWorkflow (id webhook-resend-<messageId>): one more attempt of a message now,
 * signed anew (POST /webhooks/messages/{id}/resend).
 *
 * webhookRecoverWorkflow (id webhook-recover-<endpointId>): every message of the endpoint that
 * failed all its attempts since a time, resent in creation order, a few at a time, in batches;
 * continues as new after BATCHES_PER_RUN batches so its history stays short. Runs in the
 * background (POST /webhooks/endpoints/{id}/recover answers 202 at once).
 */
import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { DB_ACTIVITY } from '../activity-options';
import type { AttemptResult, RecoverOutcome, WebhookRecoverInput, WebhookResendInput } from '../../src/webhooks';

const { failedWebhookMessages } = proxyActivities<Activities>(DB_ACTIVITY);
/** An attempt is exactly one POST: never retried by Temporal. */
const { resendWebhookMessage } = proxyActivities<Activities>({
  startToCloseTimeout: '90 seconds',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
});

const BATCH = 20;
const PARALLEL = 5;
const BATCHES_PER_RUN = 25;

async function resendOnce(input: WebhookResendInput): Promise<AttemptResult> {
  try {
    return await resendWebhookMessage(input);
  } catch (e) {
    return { ok: false, error: `attempt did not complete: ${(e as Error).message}` };
  }
}

export async function webhookResendWorkflow(input: WebhookResendInput): Promise<AttemptResult> {
  return resendOnce(input);
}

export async function webhookRecoverWorkflow(input: WebhookRecoverInput): Promise<RecoverOutcome> {
  const totals: RecoverOutcome = { ...(input.totals ?? { resent: 0, delivered: 0, failed: 0 }) };
  let cursor = input.cursor;
  for (let batch = 0; batch < BATCHES_PER_RUN; batch++) {
    const messages = await failedWebhookMessages({
      endpointId: input.endpointId,
      since: input.since,
      cursor,
      limit: BATCH,
    });
    if (messages.length === 0) return totals;
    for (let i = 0; i < messages.length; i += PARALLEL) {
      const results = await Promise.all(
        messages.slice(i, i + PARALLEL).map((m) => resendOnce({ messageId: m.id, kind: 'recover' })),
      );
      for (const r of results) {
        totals.resent++;
        if (r.ok) totals.delivered++;
        else totals.failed++;
      }
    }
    const last = messages[messages.length - 1];
    cursor = { createdAt: last.createdAt, id: last.id };
    if (messages.length < BATCH) return totals;
  }
  return continueAsNew<typeof webhookRecoverWorkflow>({ ...input, cursor, totals });
}
