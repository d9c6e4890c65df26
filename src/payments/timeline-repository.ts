/** The rows of an order's timeline (GET /payments/{orderId}/timeline, ./timeline.ts), read from the tables. */
import type { Db } from '../db/knex';

/** The order's payments row as stored, or undefined. */
export const paymentRowByOrder = (db: Db, orderId: string) => db('payments').where({ order_id: orderId }).first();

/** Every row of a payment's story: events, receipts, webhook deliveries and attempts, dead letters, refunds, conflicts. */
export async function timelineRows(db: Db, paymentId: string) {
  const [events, receipts, deliveries, attempts, deadLetters, refunds, conflicts] = await Promise.all([
    db('payment_events').where({ payment_id: paymentId }).orderBy('id'),
    db('callback_receipts')
      .where({ payment_id: paymentId })
      .select('id', 'provider', 'status', 'outcome', 'source_ip', 'response_status', 'created_at'),
    db('webhook_deliveries')
      .where({ payment_id: paymentId })
      .select('id', 'endpoint_id', 'event_status', 'state', 'attempts', 'created_at'),
    db('webhook_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('d.payment_id', paymentId)
      .select(
        'a.delivery_id',
        'd.endpoint_id',
        'a.attempt',
        'a.kind',
        'a.started_at',
        'a.duration_ms',
        'a.status_code',
        'a.error',
      ),
    db('webhook_dead_letters as l')
      .join('webhook_deliveries as d', 'd.id', 'l.delivery_id')
      .where('d.payment_id', paymentId)
      .select('l.*', 'd.endpoint_id'),
    db.schema.hasTable('refunds').then((has) => (has ? db('refunds').where({ payment_id: paymentId }) : [])),
    db('payment_conflicts').where({ payment_id: paymentId }),
  ]);
  return { events, receipts, deliveries, attempts, deadLetters, refunds, conflicts };
}
