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

/** The body sent to integrators, exactly as the contract shows it (amount in THB). */
export function webhookBody(e: PaymentStatusEvent) {
  return {
    event: 'payment.status.updated' as const,
    data: {
      orderId: e.orderId,
      status: e.status,
      amount: e.amountSatang / 100,
      timestamp: e.timestamp,
      ...(e.refundId ? { refundId: e.refundId } : {}),
    },
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

/** The event types a payment.status.updated event of `status` matches. */
export const eventTypesOf = (status: string): string[] => ['payment.status.updated', `payment.${status}`];

/** Whether an endpoint with the filter `filter` (null: every type) receives an event of `status`. */
export const endpointWants = (filter: readonly string[] | null | undefined, status: string): boolean =>
  !filter || filter.length === 0 || eventTypesOf(status).some((t) => filter.includes(t));
