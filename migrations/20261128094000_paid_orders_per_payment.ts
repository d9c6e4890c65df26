/**
 * paid_orders: one row per payment of an order id, keyed (order_id, payment_id) instead of
 * order_id alone, since order ids are unique per account and mode only (docs/concepts.md): two
 * merchants' wallet orders of one order id are two rows. Down refuses while an order id has two.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE paid_orders DROP CONSTRAINT paid_orders_pkey;
    ALTER TABLE paid_orders ADD CONSTRAINT paid_orders_pkey PRIMARY KEY (order_id, payment_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  const { rows } = await knex.raw<{ rows: { order_id: string }[] }>(
    'SELECT order_id FROM paid_orders GROUP BY order_id HAVING count(*) > 1 LIMIT 1',
  );
  if (rows.length > 0)
    throw new Error(`paid_orders: order id ${rows[0].order_id} has rows of two payments; cannot key by order id alone`);
  await knex.raw(`
    ALTER TABLE paid_orders DROP CONSTRAINT paid_orders_pkey;
    ALTER TABLE paid_orders ADD CONSTRAINT paid_orders_pkey PRIMARY KEY (order_id);
  `);
}
