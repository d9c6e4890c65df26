/**
 * The webhooks slice's face and contract: what other slices, the workflows and the toolkit may
 * use of it. Pure (no I/O): its Temporal names, ids, signals, updates, inputs and outputs, and
 * the types and pure helpers others share. Names in recorded histories (test/replay) never change.
 */
import type { Mode } from '../domain/mode';
import type { PaymentStatus } from '../payments';

// ---- events ----

/** The outgoing webhook event of the contract "Events": payment.status.updated. */
/** A payment's status, or `partially_refunded` for a refund that leaves the payment paid. */
export type PaymentEventStatus = PaymentStatus | 'partially_refunded';

export interface PaymentStatusEvent {
  paymentId: string;
  orderId: string;
  status: PaymentEventStatus;
  /** the payment's amount; for a refund event, the refund's amount */
  amountSatang: number;
  /** set for refund events (status refunded or partially_refunded): each refund is its own message */
  refundId?: string;
  /** ISO 8601 UTC time of the transition */
  timestamp: string;
  mode: Mode;
  apiKeyId?: string;
}

/**
 * The body sent to integrators: the contract's fields (event, data.orderId, data.status,
 * data.amount in THB, data.timestamp) and beside them `type` (the specific event, payment.<status>),
 * data.paymentId and data.mode (live or sandbox). Fields are only ever added.
 */
export function webhookBody(e: PaymentStatusEvent) {
  return {
    event: 'payment.status.updated' as const,
    data: {
      orderId: e.orderId,
      status: e.status,
      amount: e.amountSatang / 100,
      timestamp: e.timestamp,
      ...(e.refundId ? { refundId: e.refundId } : {}),
      paymentId: e.paymentId,
      mode: e.mode,
    },
    // after data: the JSON text of the contract's fields begins as it always did
    type: eventTypeOf(e.status),
  };
}

/**
 * Event types an endpoint may subscribe to (its `eventTypes` filter; none: every type): the
 * event itself, or one status of it (`payment.paid`, `payment.refunded`, ...).
 */
export const EVENT_TYPES = [
  'payment.status.updated',
  'payment.paid',
  'payment.failed',
  'payment.expired',
  'payment.refunded',
  'payment.partially_refunded',
  'payment.authorized',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The specific event type of a status: payment.paid, payment.refunded, ... */
export const eventTypeOf = (status: PaymentEventStatus) =>
  `payment.${status}` as Exclude<EventType, 'payment.status.updated'>;

/** The event types a payment.status.updated event of `status` matches. */
export const eventTypesOf = (status: string): string[] => ['payment.status.updated', `payment.${status}`];

/**
 * An order's steps (issue 37, order-webhooks-v1): a sibling of payment.status.updated, the same
 * signing, deliveries, retries and dead letters. `event` is `order.updated`, `type` the step;
 * `data` is read from the orders slice's rows when the deliveries are planned, never taken from
 * the workflow's input, so a forged start signs nothing the records do not hold.
 */
export const ORDER_EVENT = 'order.updated' as const;
export const ORDER_EVENT_TYPES = [
  'order.adjusted',
  'order.released',
  'order.topup_pending',
  'order.topup_paid',
  'order.topup_expired',
  'order.settled',
  'order.short',
  'order.failed',
  'order.attention',
  /** a costlier substitution waits for the customer: ref is the adjustment, data its approvals and links */
  'order.approval_requested',
] as const;
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

export interface OrderEvent {
  kind: 'order';
  type: OrderEventType;
  orderId: string;
  /** the order's payment (its deliveries are keyed on it) */
  paymentId: string;
  /** the step's own row: the adjustment's id, the top-up's payment id; none for the order's end */
  ref?: string;
  /** ISO 8601 UTC time of the step */
  timestamp: string;
  mode: Mode;
  apiKeyId?: string;
}
export type WebhookEvent = PaymentStatusEvent | OrderEvent;
export const isOrderEvent = (e: WebhookEvent): e is OrderEvent => (e as OrderEvent).kind === 'order';

/** The deliveries' key of an order event (webhook_deliveries.event_status): one message per step. */
export const orderEventKey = (e: Pick<OrderEvent, 'type' | 'ref'>): string => (e.ref ? `${e.type}:${e.ref}` : e.type);

/** The body of an order event: the envelope's fields first, then the step's own. */
export function orderWebhookBody(e: OrderEvent, data: Record<string, unknown>) {
  return {
    event: ORDER_EVENT,
    type: e.type,
    data: { orderId: e.orderId, paymentId: e.paymentId, timestamp: e.timestamp, mode: e.mode, ...data },
  };
}

/** What an endpoint's `eventTypes` may hold: the payment events and the order events. */
export const SUBSCRIBABLE_EVENT_TYPES = [...EVENT_TYPES, ORDER_EVENT, ...ORDER_EVENT_TYPES] as const;

// ---- contract ----

/**
 * The webhooks' Temporal contract: delivery, retry, replay, resend and recovery workflows
 * (workflows/webhooks/), their ids, inputs and outcomes, and the retry delays.
 *
 * Names are part of the recorded histories (test/replay): never rename a value here.
 */
export const WebhookWorkflowType = {
  webhookDelivery: 'webhookDeliveryWorkflow',
  /** the retries of a webhook whose first attempt (made by the payment workflow) failed */
  webhookRetry: 'webhookRetryWorkflow',
  webhookReplay: 'webhookReplayWorkflow',
  webhookResend: 'webhookResendWorkflow',
  webhookRecover: 'webhookRecoverWorkflow',
  /** webhook-keep-trying-v1: one dead letter's longer schedule, after the 1, 2 and 4 s retries */
  webhookKeepTrying: 'webhookKeepTryingWorkflow',
} as const;

/**
 * one webhook delivery per payment and status (and per refund: each refund is its own event);
 * webhookDeliveryWorkflow before lean-payment-v1, webhookRetryWorkflow since
 */
export const webhookDeliveryWorkflowId = (paymentId: string, status: PaymentEventStatus, refundId?: string): string =>
  refundId ? `webhook-${paymentId}-${status}-${refundId}` : `webhook-${paymentId}-${status}`;
/** one replay of a dead letter at a time (a second request joins the running one) */
/** the delivery workflow of any event: a payment's status (as above), or an order's step */
export const webhookEventWorkflowId = (e: WebhookEvent): string =>
  isOrderEvent(e)
    ? `webhook-${e.paymentId}-${orderEventKey(e)}`
    : webhookDeliveryWorkflowId(e.paymentId, e.status, e.refundId);
export const webhookReplayWorkflowId = (deadLetterId: string): string => `webhook-replay-${deadLetterId}`;
/** one resend of a message at a time (a second request joins the running one) */
export const webhookResendWorkflowId = (messageId: string): string => `webhook-resend-${messageId}`;
/** one recovery per endpoint at a time (a second request joins the running one) */
export const webhookRecoverWorkflowId = (endpointId: string): string => `webhook-recover-${endpointId}`;

/** one longer schedule per dead letter (its delivery's id) */
export const webhookKeepTryingWorkflowId = (deliveryId: string): string => `webhook-keep-trying-${deliveryId}`;

/** Retries of a webhook delivery after the first attempt (the contract "Limits"). */
export const WEBHOOK_RETRY_DELAYS_MS = [1000, 2000, 4000] as const;

/**
 * After those, a dead letter keeps being retried on a longer schedule (webhook-keep-trying-v1):
 * the waits in seconds before attempts 5, 6, ... An endpoint may set its own (`retrySchedule`);
 * this default spans 1 min to 24 h, 3 days 3 h 46 min in all, then the dead letter gives up.
 */
export const DEFAULT_RETRY_SCHEDULE_S: readonly number[] = [
  60, 300, 600, 1800, 3600, 7200, 14_400, 28_800, 43_200, 86_400, 86_400,
];
/** What an endpoint's `retrySchedule` may hold: at most 30 waits of 1 s to 1 day, 7 days in all. */
export const RETRY_SCHEDULE_LIMITS = { maxSteps: 30, minStepS: 1, maxStepS: 86_400, maxTotalS: 7 * 86_400 } as const;

/** One delivery attempt as the webhook activities report it. */
export interface AttemptResult {
  ok: boolean;
  /** the endpoint was removed: nothing more to do */
  cancelled?: boolean;
  statusCode?: number;
  error?: string;
}

export interface DeliveryOutcome {
  deliveryId: string;
  /** `retrying`: dead-lettered after the 1, 2 and 4 s retries, its longer schedule runs on */
  state: 'delivered' | 'dead' | 'cancelled' | 'retrying';
  attempts: number;
  deadLetterId?: string;
}

export interface WebhookReplayInput {
  deadLetterId: string;
}
export type ReplayOutcome = AttemptResult & { status: 'dead' | 'delivered' };

export type WebhookDeliveryWorkflow = (event: WebhookEvent) => Promise<DeliveryOutcome[]>;

/** The deliveries of one event whose first attempt failed: retried after 1 s, 2 s, 4 s, then dead-lettered. */
export interface WebhookRetryInput {
  event: WebhookEvent;
  deliveryIds: string[];
  /** ms since the epoch when the first attempts began: the 1 s before attempt 2 counts from it */
  firstAttemptAt?: number;
  /**
   * those of deliveryIds the payment workflow did not attempt (the settle step's bulkhead: their
   * endpoint was failing or had enough first attempts in flight): this workflow makes attempt 1 too
   */
  deferred?: string[];
}
export type WebhookRetryWorkflow = (input: WebhookRetryInput) => Promise<DeliveryOutcome[]>;
export type WebhookReplayWorkflow = (input: WebhookReplayInput) => Promise<ReplayOutcome>;

/** Resend one message (delivery) to its endpoint now: one attempt, signed anew. */
export interface WebhookResendInput {
  messageId: string;
  kind: 'resend' | 'recover';
}
export interface WebhookRecoverInput {
  endpointId: string;
  /** ISO 8601: messages created at or after this time that failed every attempt */
  since: string;
  /** continue-as-new state: where the previous run stopped, and its counts */
  cursor?: { createdAt: string; id: string };
  totals?: RecoverOutcome;
}
export interface RecoverOutcome {
  resent: number;
  delivered: number;
  failed: number;
}
export type WebhookResendWorkflow = (input: WebhookResendInput) => Promise<AttemptResult>;
export type WebhookRecoverWorkflow = (input: WebhookRecoverInput) => Promise<RecoverOutcome>;

/** A dead letter's longer schedule; `step`, `attempt` and `delaysMs` carry it across continue-as-new. */
export interface WebhookKeepTryingInput {
  deliveryId: string;
  deadLetterId: string;
  /** the waits still to come are delaysMs[step..] (read from the endpoint when absent) */
  delaysMs?: number[];
  step?: number;
  /** the attempts this schedule made in the runs before (continue-as-new) */
  attempt?: number;
}
export interface KeepTryingOutcome {
  deliveryId: string;
  state: 'delivered' | 'gave_up' | 'cancelled';
  attempts: number;
}
export type WebhookKeepTryingWorkflow = (input: WebhookKeepTryingInput) => Promise<KeepTryingOutcome>;
/** One attempt of the longer schedule: also `done` when a replay or resend delivered it meanwhile. */
export type KeepTryingAttempt = AttemptResult & { done?: boolean };
