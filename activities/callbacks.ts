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

export function createCallbackActivities({
  db,
  payments,
}: {
  db: Db;
  payments: Pick<PaymentRecords, 'byOrderNamed' | 'ofOrderNamed'>;
}) {
  return {
    /**
     * The payment the post names, or why there is none: `missing` says it (no payment of that order
     * id, or several and the post names none of them). A run recorded before got null for both.
     */
    async loadOrderPayment(orderId: string, paymentId?: string): Promise<OrderPayment | { missing: string }> {
      const { payment: p, candidates } = await payments.ofOrderNamed(orderId, paymentId ?? '');
      if (p) return { id: p.id, providerRef: p.providerRef, status: p.status, amountSatang: p.amountSatang };
      if (candidates < 2) return { missing: 'no payment exists for this order' };
      return {
        missing: `several payments use order id ${orderId} and none is ${paymentId ? `payment ${paymentId}` : 'named by the post'}`,
      };
    },

    /**
     * One row per payment of an order id (order ids are unique per account and mode only). A decision
     * about a post that names a payment of its order (Talat's record: paymentMismatch) replaces that
     * payment's rejection and records the payment's own user; any other decision is written only
     * when its (order, payment) has no row yet. A confirmed row is final; a retry changes nothing.
     */
    async recordPaidOrder(rec: PaidOrderRecord): Promise<void> {
      let body: unknown;
      try {
        body = JSON.parse(rec.body);
      } catch {
        body = rec.body;
      }
      const unwrapped = unwrapHandlerBody(body);
      const event = unwrapped.ok ? validateHandlerBody(unwrapped.body) : undefined;
      const payment = await payments.byOrderNamed(rec.orderId, event?.ok ? event.value.paymentId : '');
      const verified =
        payment !== undefined && event?.ok === true && paymentMismatch(event.value, payment) === undefined;
      const row = {
        order_id: rec.orderId,
        payment_id: rec.paymentId,
        user_id: verified ? payment.userId : rec.userId,
        amount_satang: rec.amountSatang,
        status: rec.status,
        reason: rec.reason,
        source: rec.source,
        workflow_id: rec.workflowId,
        body: JSON.stringify(body),
      };
      if (verified)
        await db('paid_orders')
          .insert(row)
          .onConflict(['order_id', 'payment_id'])
          .merge(['user_id', 'amount_satang', 'status', 'reason', 'workflow_id', 'body', 'created_at'])
          .where('paid_orders.status', 'rejected');
      else {
        // any other decision: only while the order id has no row at all (a forged post adds none after)
        const cols = Object.keys(row);
        await db.raw(
          `INSERT INTO paid_orders (${cols.join(', ')}) SELECT ${cols.map((c) => (c === 'amount_satang' ? '?::bigint' : c === 'body' ? '?::jsonb' : '?::text')).join(', ')}
            WHERE NOT EXISTS (SELECT 1 FROM paid_orders WHERE order_id = ?) ON CONFLICT DO NOTHING`,
          [...Object.values(row), rec.orderId],
        );
      }
    },
  };
}
