/** Entry point of the workflow bundle: every workflow type the worker registers. */
export { cardPaymentWorkflow } from './payment';
export { paidOrderProcessingWorkflow } from './paid-order';
export { webhookDeliveryWorkflow, webhookReplayWorkflow } from './webhook';
export { qrPaymentWorkflow } from './payment-qr';
export { bankRequestWorkflow } from './payment-bank';
