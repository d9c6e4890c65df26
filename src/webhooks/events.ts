/** The outgoing webhook event of the contract "Events": payment.status.updated. */
import type { Mode } from '../domain/mode';
import type { PaymentStatus } from '../payments';

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
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The specific event type of a status: payment.paid, payment.refunded, ... */
export const eventTypeOf = (status: PaymentEventStatus) =>
  `payment.${status}` as Exclude<EventType, 'payment.status.updated'>;

/** The event types a payment.status.updated event of `status` matches. */
export const eventTypesOf = (status: string): string[] => ['payment.status.updated', `payment.${status}`];

/** Whether an endpoint with the filter `filter` (null: every type) receives an event of `status`. */
export const endpointWants = (filter: readonly string[] | null | undefined, status: string): boolean =>
  !filter || filter.length === 0 || eventTypesOf(status).some((t) => filter.includes(t));
