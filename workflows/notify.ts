/**
 * Emitting payment.status.updated from a workflow.
 *  - before lean-payment-v1: starts the webhook delivery workflow as an abandoned child (it
 *    outlives the payment workflow), one per payment and status;
 *  - since: the settle step made the first attempts; only deliveries to retry get an abandoned
 *    child webhookRetryWorkflow (same id), on the same terms.
 * The refunds workflow emits each refund's event through emitPaymentStatusUpdated (one delivery
 * workflow per refund).
 * Both children carry the order's OrderId search attribute.
 *
 * bulkhead-v1: both children run on the webhooks task queue (taskQueueOf), polled by a worker of
 * its own, so a retry storm to a dead endpoint never takes the payments queue's slots. patched()
 * is asked only where a child starts: a payment whose first attempts all succeeded records no
 * marker. Histories recorded before replay their child on the parent's queue. The v2 payment
 * types take it without asking (`has`, workflows/patches.ts); the refunds workflow asks.
 */
import { ParentClosePolicy, startChild, workflowInfo } from '@temporalio/workflow';
import type { PaymentStatusEvent } from '../src/domain/events';
import { OrderIdKey } from '../src/domain/search-attributes';
import {
  Patch,
  taskQueueOf,
  webhookDeliveryWorkflowId,
  WorkflowType,
  type WebhookDeliveryWorkflow,
  type WebhookRetryWorkflow,
} from '../src/domain/workflow-contract';
import { askPatched, type HasPatch } from './patches';

const childOptions = (event: PaymentStatusEvent, has: HasPatch) => ({
  workflowId: webhookDeliveryWorkflowId(event.paymentId, event.status, event.refundId),
  parentClosePolicy: ParentClosePolicy.ABANDON,
  workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
  ...(has(Patch.bulkhead) ? { taskQueue: taskQueueOf('webhooks', workflowInfo().taskQueue) } : {}),
});

/** `has`: how the calling workflow asks for bulkhead-v1 (workflows/patches.ts). */
export async function emitPaymentStatusUpdated(event: PaymentStatusEvent, has: HasPatch = askPatched): Promise<void> {
  await startChild<WebhookDeliveryWorkflow>(WorkflowType.webhookDelivery, {
    ...childOptions(event, has),
    args: [event],
  });
}

/**
 * lean-payment-v1: the retries of the deliveries whose first attempt failed; bulkhead-v1: and
 * the first attempts the settle step left to the webhooks queue (`deferred`).
 */
export async function retryWebhookDeliveries(
  event: PaymentStatusEvent,
  failed: string[],
  firstAttemptAt?: number,
  deferred: string[] = [],
  has: HasPatch = askPatched,
): Promise<void> {
  if (failed.length === 0 && deferred.length === 0) return;
  await startChild<WebhookRetryWorkflow>(WorkflowType.webhookRetry, {
    ...childOptions(event, has),
    args: [
      deferred.length
        ? { event, deliveryIds: [...failed, ...deferred], firstAttemptAt, deferred }
        : { event, deliveryIds: failed, firstAttemptAt },
    ],
    typedSearchAttributes: [{ key: OrderIdKey, value: event.orderId }],
  });
}
