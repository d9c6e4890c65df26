/**
 * Emitting payment.status.updated from a payment workflow: starts the webhook delivery workflow
 * as an abandoned child (it outlives the payment workflow), one per payment and status.
 */
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { PaymentStatusEvent } from '../src/domain/events';
import { webhookDeliveryWorkflowId, WorkflowType, type WebhookDeliveryWorkflow } from '../src/domain/workflow-contract';

export async function emitPaymentStatusUpdated(event: PaymentStatusEvent): Promise<void> {
  await startChild<WebhookDeliveryWorkflow>(WorkflowType.webhookDelivery, {
    workflowId: webhookDeliveryWorkflowId(event.paymentId, event.status, event.refundId),
    args: [event],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
  });
}
