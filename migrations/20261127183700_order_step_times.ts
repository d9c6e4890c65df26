import type { Knex } from 'knex';

/**
 * When each settlement step of an order happened (docs/orders.md, the order's timeline): the
 * authorisation, the finalisation's end (capture, release, refund) and a top-up's end. Each is set
 * by the UPDATE that already records the step, so an order takes no more writes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('orders', (t) => t.timestamp('authorized_at', { useTz: true }));
  await knex.schema.alterTable('order_finalizations', (t) => t.timestamp('settled_at', { useTz: true }));
  await knex.schema.alterTable('order_topups', (t) => t.timestamp('settled_at', { useTz: true }));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('order_topups', (t) => t.dropColumn('settled_at'));
  await knex.schema.alterTable('order_finalizations', (t) => t.dropColumn('settled_at'));
  await knex.schema.alterTable('orders', (t) => t.dropColumn('authorized_at'));
}
