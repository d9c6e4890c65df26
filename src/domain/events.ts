/** The outgoing webhook event of SPEC.md "Events": payment.status.updated. */
import type { Mode } from './mode';
import type { PaymentStatus } from './payment-state';

export interface PaymentStatusEvent {
  paymentId: string;
  orderId: string;
  status: PaymentStatus;
  amountSatang: number;
  /** ISO 8601 UTC time of the transition */
  timestamp: string;
  mode: Mode;
  apiKeyId?: string;
}

/** The body sent to integrators, exactly as SPEC.md shows it (amount in THB). */
export function webhookBody(e: PaymentStatusEvent) {
  return {
    event: 'payment.status.updated' as const,
    data: { orderId: e.orderId, status: e.status, amount: e.amountSatang / 100, timestamp: e.timestamp },
  };
}
