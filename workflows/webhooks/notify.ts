/**
 * Emitting payment.status.updated from a workflow: before lean-payment-v1 a webhook delivery
 * workflow as an abandoned child, one per payment and status; since, the settle step makes the
 * first attempts and only deliveries to retry get a child webhookRetryWorkflow (same id). The
 * refunds workflow emits each refund's event through emitPaymentStatusUpdated. bulkhead-v1: the
 * children run on the webhooks task queue, so a retry storm never takes the payments queue's
 * slots; patched() is asked only where a child starts (the v2 payment types take it without
 * asking: `has`, workflows/patches.ts). Children carry the OrderId search attribute.
 */
import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import type { PaymentStatusEvent, WebhookEvent } from '../../src/webhooks';
import { OrderIdKey } from '../../src/domain/search-attributes';
import { Patch, taskQueueOf } from '../../src/domain/temporal';
import {
  webhookEventWorkflowId,
  WebhookWorkflowType,
  type WebhookDeliveryWorkflow,
  type WebhookRetryWorkflow,
} from '../../src/webhooks';
import { askPatched, type HasPatch } from '../patches';

const childOptions = (event: WebhookEvent, has: HasPatch) => ({
  workflowId: webhookEventWorkflowId(event),
  parentClosePolicy: ParentClosePolicy.ABANDON,
  workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
  ...(has(Patch.bulkhead) ? { taskQueue: taskQueueOf('webhooks', workflowInfo().taskQueue) } : {}),
});

/** `has`: how the calling workflow asks for bulkhead-v1 (workflows/patches.ts). */
export async function emitPaymentStatusUpdated(event: PaymentStatusEvent, has: HasPatch = askPatched): Promise<void> {
  await startChild<WebhookDeliveryWorkflow>(WebhookWorkflowType.webhookDelivery, {
    ...childOptions(event, has),
    args: [event],
  });
}

/**
 * lean-payment-v1: the retries of the deliveries whose first attempt failed; bulkhead-v1: and
 * the first attempts the settle step left to the webhooks queue (`deferred`).
 */
export async function retryWebhookDeliveries(
  event: WebhookEvent,
  failed: string[],
  firstAttemptAt?: number,
  deferred: string[] = [],
  has: HasPatch = askPatched,
): Promise<void> {
  if (failed.length === 0 && deferred.length === 0) return;
  await startChild<WebhookRetryWorkflow>(WebhookWorkflowType.webhookRetry, {
    ...childOptions(event, has),
    args: [
      deferred.length
        ? { event, deliveryIds: [...failed, ...deferred], firstAttemptAt, deferred }
        : { event, deliveryIds: failed, firstAttemptAt },
    ],
    typedSearchAttributes: [{ key: OrderIdKey, value: event.orderId }],
  });
}
