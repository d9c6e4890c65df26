/** The webhooks' workflow face: the delivery workflows, and how another workflow emits an event. */
export { webhookDeliveryWorkflow, webhookReplayWorkflow, webhookRetryWorkflow } from './delivery';
export { webhookRecoverWorkflow, webhookResendWorkflow } from './recovery';
export { webhookKeepTryingWorkflow } from './keep-trying';
export { emitPaymentStatusUpdated, retryWebhookDeliveries } from './notify';
