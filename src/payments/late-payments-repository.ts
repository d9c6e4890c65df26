/** The late payments of GET /late-payments (./late-payments.ts): payment_conflicts rows with a success result. */
import type { Db } from '../db/knex';

/** The query of a key's late payments (its mode; its own payments or keyless ones), `c.*` and the amount; to be paged. */
export function latePaymentsQuery(db: Db, key: { mode: string; id: string }, resolution?: string) {
  const query = db('payment_conflicts as c')
    .join('payments as p', 'p.id', 'c.payment_id')
    .where('c.result_status', 'success')
    .where('p.mode', key.mode)
    .where((w) => w.whereNull('p.api_key_id').orWhere('p.api_key_id', key.id))
    .select('c.*', 'p.amount_satang');
  if (resolution) query.where('c.resolution', resolution);
  return query;
}

/** How many of a key's late payments have `resolution` (the console's open items: review). */
export async function countLatePayments(db: Db, key: { mode: string; id: string }, resolution: string) {
  const [{ n }] = await latePaymentsQuery(db, key, resolution).clearSelect().count<{ n: string }[]>({ n: '*' });
  return Number(n);
}
