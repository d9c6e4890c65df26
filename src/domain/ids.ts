/** Id helpers that are safe inside workflows (pure, deterministic). */

/** Workflow id of the payment of an order: one workflow per order (natural idempotency). */
export const paymentWorkflowId = (orderId: string): string => `payment-${orderId}`;
