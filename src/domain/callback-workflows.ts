/** Names and ids of the callback API's workflows, shared by the gateway and the workflow code. */
export const PAID_ORDER_WORKFLOW = 'paidOrderProcessingWorkflow';
export const WEBHOOK_REPLAY_WORKFLOW = 'webhookReplayWorkflow';

/** One paid-order processing per order. */
export const paidOrderWorkflowId = (orderId: string): string => `paid-order-${orderId}`;
/** One replay of a dead letter at a time (a second request joins the running one). */
export const webhookReplayWorkflowId = (deadLetterId: string): string => `webhook-replay-${deadLetterId}`;

/** Retries of a webhook delivery after the first attempt (SPEC.md "Limits"). */
export const WEBHOOK_RETRY_DELAYS_MS = [1000, 2000, 4000] as const;

export interface PaidOrderInput {
  /** the full request body of the wallet handler, as received (JSON text) */
  body: string;
  source: 'wallet';
  /** how long to wait for the payment to be confirmed paid by a verified callback */
  confirmWindowSeconds: number;
}

export interface PaidOrderOutcome {
  orderId: string;
  paymentId: string;
  status: 'confirmed' | 'rejected';
  reason: string;
}
