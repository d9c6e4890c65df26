/** Activities of paid-order processing: reading the order's payment and recording the outcome. */
import type { Db } from '../src/db/knex';
import { paymentByOrderId } from '../src/payments/repository';
import type { PaymentStatus } from '../src/domain/payment-state';

export interface OrderPayment {
  id: string;
  providerRef: string | null;
  status: PaymentStatus;
  amountSatang: number;
}

export interface PaidOrderRecord {
  orderId: string;
  paymentId: string;
  userId: string;
  amountSatang: number;
  status: 'confirmed' | 'rejected';
  reason: string;
  source: string;
  workflowId: string;
  /** the full request body as received (JSON text) */
  body: string;
}

export function createCallbackActivities({ db }: { db: Db }) {
  return {
    async loadOrderPayment(orderId: string): Promise<OrderPayment | null> {
      const p = await paymentByOrderId(db, orderId);
      return p ? { id: p.id, providerRef: p.providerRef, status: p.status, amountSatang: p.amountSatang } : null;
    },

    /** One row per order; a retry (or a second run) keeps the first outcome. */
    async recordPaidOrder(rec: PaidOrderRecord): Promise<void> {
      let body: unknown;
      try {
        body = JSON.parse(rec.body);
      } catch {
        body = rec.body;
      }
      await db('paid_orders')
        .insert({
          order_id: rec.orderId,
          payment_id: rec.paymentId,
          user_id: rec.userId,
          amount_satang: rec.amountSatang,
          status: rec.status,
          reason: rec.reason,
          source: rec.source,
          workflow_id: rec.workflowId,
          body: JSON.stringify(body),
        })
        .onConflict('order_id')
        .ignore();
    },
  };
}
