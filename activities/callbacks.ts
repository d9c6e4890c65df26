/** Activities of paid-order processing: reading the order's payment and recording the outcome. */
import type { Db } from '../src/db/knex';
import type { PaymentRecords, PaymentStatus } from '../src/payments';
import { paymentMismatch, unwrapHandlerBody, validateHandlerBody } from '../src/domain/handler-form';

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

export function createCallbackActivities({ db, payments }: { db: Db; payments: Pick<PaymentRecords, 'byOrderId'> }) {
  return {
    async loadOrderPayment(orderId: string): Promise<OrderPayment | null> {
      const p = await payments.byOrderId(orderId);
      return p ? { id: p.id, providerRef: p.providerRef, status: p.status, amountSatang: p.amountSatang } : null;
    },

    /**
     * One row per order. A decision about a post that names the order's payment (Talat's record:
     * paymentMismatch) replaces a rejection and records the payment's own user; any other decision
     * is written only when the order has no row yet. A confirmed row is final; a retry changes nothing.
     */
    async recordPaidOrder(rec: PaidOrderRecord): Promise<void> {
      let body: unknown;
      try {
        body = JSON.parse(rec.body);
      } catch {
        body = rec.body;
      }
      const payment = await payments.byOrderId(rec.orderId);
      const unwrapped = unwrapHandlerBody(body);
      const event = unwrapped.ok ? validateHandlerBody(unwrapped.body) : undefined;
      const verified =
        payment !== undefined && event?.ok === true && paymentMismatch(event.value, payment) === undefined;
      const insert = db('paid_orders')
        .insert({
          order_id: rec.orderId,
          payment_id: rec.paymentId,
          user_id: verified ? payment.userId : rec.userId,
          amount_satang: rec.amountSatang,
          status: rec.status,
          reason: rec.reason,
          source: rec.source,
          workflow_id: rec.workflowId,
          body: JSON.stringify(body),
        })
        .onConflict('order_id');
      if (!verified) await insert.ignore();
      else
        await insert
          .merge(['payment_id', 'user_id', 'amount_satang', 'status', 'reason', 'workflow_id', 'body', 'created_at'])
          .where('paid_orders.status', 'rejected');
    },
  };
}
