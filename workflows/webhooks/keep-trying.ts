/**
 * webhookKeepTryingWorkflow (id webhook-keep-trying-<deliveryId>, webhook-keep-trying-v1): a
 * delivery dead-lettered after the 1, 2 and 4 s retries is tried again on its endpoint's longer
 * schedule (`retrySchedule`, default DEFAULT_RETRY_SCHEDULE_S: over three days): one durable
 * timer and one attempt per step, continuing as new every STEPS_PER_RUN steps so the history
 * stays short. A 2xx (or a replay or resend that delivered it meanwhile) ends it; after the last
 * step the dead letter gives up.
 */
import {
  continueAsNew,
  ParentClosePolicy,
  proxyActivities,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { OrderIdKey } from '../../src/domain/search-attributes';
import {
  webhookKeepTryingWorkflowId,
  WebhookWorkflowType,
  type KeepTryingAttempt,
  type KeepTryingOutcome,
  type WebhookKeepTryingInput,
  type WebhookKeepTryingWorkflow,
} from '../../src/webhooks';
import { DB_ACTIVITY } from '../activity-options';

const { beginWebhookRetries, endWebhookRetries } = proxyActivities<Activities>(DB_ACTIVITY);
/** An attempt is exactly one POST: never retried by Temporal; a lost worker is noticed by the heartbeat timeout. */
const { keepTryingWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '90 seconds',
  heartbeatTimeout: '5 seconds',
  retry: { maximumAttempts: 1 },
});

/** Steps per run before continue-as-new: about 10 events each. */
export const STEPS_PER_RUN = 10;

/** Starts the dead letter's longer schedule as an abandoned child (one per delivery; a second start is a no-op). */
export async function keepTrying(deliveryId: string, deadLetterId: string): Promise<void> {
  const orderId = workflowInfo().typedSearchAttributes.get(OrderIdKey);
  try {
    await startChild<WebhookKeepTryingWorkflow>(WebhookWorkflowType.webhookKeepTrying, {
      workflowId: webhookKeepTryingWorkflowId(deliveryId),
      parentClosePolicy: ParentClosePolicy.ABANDON,
      args: [{ deliveryId, deadLetterId }],
      ...(orderId ? { typedSearchAttributes: [{ key: OrderIdKey, value: orderId }] } : {}),
    });
  } catch (e) {
    if ((e as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw e;
  }
}

async function attemptOnce(input: {
  deliveryId: string;
  deadLetterId: string;
  nextDelayMs: number | null;
}): Promise<KeepTryingAttempt & { threw?: boolean }> {
  try {
    return await keepTryingWebhook(input);
  } catch (e) {
    return { ok: false, threw: true, error: `attempt did not complete: ${(e as Error).message}` };
  }
}

export async function webhookKeepTryingWorkflow(input: WebhookKeepTryingInput): Promise<KeepTryingOutcome> {
  const { deliveryId, deadLetterId } = input;
  const delays = input.delaysMs ?? (await beginWebhookRetries({ deliveryId, deadLetterId }));
  const from = input.step ?? 0;
  let attempts = input.attempt ?? 0;
  for (let step = from; step < delays.length; step++) {
    if (step - from >= STEPS_PER_RUN)
      return continueAsNew<WebhookKeepTryingWorkflow>({
        deliveryId,
        deadLetterId,
        delaysMs: delays,
        step,
        attempt: attempts,
      });
    await sleep(delays[step]);
    const next = step + 1 < delays.length ? delays[step + 1] : null;
    const r = await attemptOnce({ deliveryId, deadLetterId, nextDelayMs: next });
    attempts++;
    if (r.ok || r.done) return { deliveryId, state: 'delivered', attempts };
    if (r.cancelled) return { deliveryId, state: 'cancelled', attempts };
    // the last attempt did not report back: the dead letter gives up here
    if (next === null && r.threw) await endWebhookRetries({ deadLetterId, error: r.error ?? 'no response' });
  }
  return { deliveryId, state: 'gave_up', attempts };
}
