/**
 * The callbacks' Temporal contract: paid-order processing of a wallet handler post
 * (paidOrderProcessingWorkflow, workflows/callbacks.ts), its id, input and outcome.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */

export const CallbackWorkflowType = { paidOrder: 'paidOrderProcessingWorkflow' } as const;

/** one paid-order processing per order */
export const paidOrderWorkflowId = (orderId: string): string => `paid-order-${orderId}`;

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

export type PaidOrderProcessingWorkflow = (input: PaidOrderInput) => Promise<PaidOrderOutcome>;
