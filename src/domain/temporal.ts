/**
 * The Temporal vocabulary every feature shares: patch ids (one registry, so none is reused),
 * the task queues (bulkheads) and the failure types activities throw. Each feature's own
 * workflow types, ids, signals, updates and inputs live in its face (src/<feature>/index.ts).
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */

/**
 * Patch ids (workflow versioning with `patched()`): histories recorded before a change replay
 * the old commands, new executions take the new ones. Never rename or reuse one.
 *  - lean-payment-v1: the gateway writes the payments row before it starts the workflow (no
 *    recordPayment activity); projection writes and the first webhook attempt are local
 *    activities; the expiry timer is left to lapse instead of being cancelled; webhook retries
 *    (only when the first attempt failed) run in a child webhookRetryWorkflow.
 */
export const Patch = {
  leanPayment: 'lean-payment-v1',
  /**
   * result-proof-v1: a signalled result is settled only when its proof verifies (checked inside
   * the settle local activity: no extra event); a rejected one changes nothing and the payment
   * keeps waiting. Its marker is recorded only when a result is rejected.
   */
  resultProof: 'result-proof-v1',
  /**
   * late-result-v1: a result that arrives after the payment was decided and contradicts it is
   * handed to resolveLateResult (workflows/payments/late-result.ts) instead of being dropped. Its marker
   * is recorded only when such a result arrives.
   */
  lateResult: 'late-result-v1',
  /**
   * bulkhead-v1: webhook children (webhookRetryWorkflow, and the refunds' webhookDeliveryWorkflow)
   * run on the webhooks task queue, not on their parent's (marker only where a child starts).
   */
  bulkhead: 'bulkhead-v1',
  /**
   * refund-record-v1: a `refund` update names a refund that POST /refund recorded, with the
   * gateway's proof of it (talat-refund-v1, src/result-proof.ts); the worker refunds
   * what the refunds row says, never what the update says. Asked in the refund's handler.
   */
  refundRecord: 'refund-record-v1',
  /**
   * webhook-keep-trying-v1: a delivery dead-lettered after the 1, 2 and 4 s retries is handed to
   * its own webhookKeepTryingWorkflow (a longer schedule on durable timers); marker only where
   * a delivery is dead-lettered.
   */
  webhookKeepTrying: 'webhook-keep-trying-v1',
} as const;

// ---- task queues (bulkheads) ----

/**
 * The task queues, each polled by its own worker with its own slots, so that work which waits
 * on others (integrators' endpoints, the bank, e-mail) never holds what the payments need:
 *  - payments: the payment workflows (and the refunds workflow), their local activities;
 *  - webhooks: webhook retries, replays, resends and recoveries, and their POSTs;
 *  - background: bank calls and paid-order processing (with its administrator e-mail).
 */
export const QUEUE_KINDS = ['payments', 'webhooks', 'background'] as const;
export type QueueKind = (typeof QUEUE_KINDS)[number];

/**
 * The queue of `kind`, named after the payments queue (TEMPORAL_TASK_QUEUE) so that the gateway,
 * the workers and the workflows (which know only their own queue) agree without more settings:
 * a name ending in `-payments` has that suffix replaced (talat-payments -> talat-webhooks,
 * talat-background); any other name q gets one added (q-webhooks, q-background).
 */
export function taskQueueOf(kind: QueueKind, paymentsQueue: string): string {
  if (kind === 'payments') return paymentsQueue;
  const base = paymentsQueue.endsWith('-payments') ? paymentsQueue.slice(0, -'-payments'.length) : paymentsQueue;
  return `${base}-${kind}`;
}

/** ApplicationFailure types that activities throw and workflows match. */
export const ActivityFailureType = {
  /** the card provider refused the charge (4xx): non-retryable */
  CardRejected: 'CardRejected',
  /** the partner bank refused the call (4xx): non-retryable, details {status, body} */
  BankRejected: 'BankRejected',
  /** neither the sandbox simulator nor a live URL is available */
  ProviderNotConfigured: 'ProviderNotConfigured',
  /** the card provider or the bank refused a refund (4xx): non-retryable */
  RefundRejected: 'RefundRejected',
} as const;
export type ActivityFailureType = (typeof ActivityFailureType)[keyof typeof ActivityFailureType];
