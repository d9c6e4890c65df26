import type { Knex } from 'knex';

/**
 * Refunds (POST /refund; the refund workflow refunds-<orderId> writes these rows through activities):
 *  - refunds: one row per refund request (re_...), pending until the provider or bank answered,
 *    then succeeded or failed (a failed refund counts no money);
 *  - payments.refunded_satang: the sum of the succeeded refunds, never above amount_satang.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('payments', (t) => {
    t.bigInteger('refunded_satang').notNullable().defaultTo(0);
    t.check('refunded_satang >= 0 AND refunded_satang <= amount_satang', [], 'payments_refunded_within_amount');
  });
  await knex.schema.createTable('refunds', (t) => {
    t.text('id').primary(); // re_...
    t.text('payment_id').notNullable().references('payments.id');
    t.text('order_id').notNullable();
    t.bigInteger('amount_satang').notNullable();
    t.text('reason');
    t.text('status').notNullable().defaultTo('pending');
    t.text('provider_ref');
    t.text('failure_reason');
    t.text('api_key_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['payment_id', 'created_at']);
    t.check('amount_satang > 0');
    t.check("status IN ('pending','succeeded','failed')");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('refunds');
  await knex.schema.alterTable('payments', (t) => {
    t.dropChecks(['payments_refunded_within_amount']);
    t.dropColumn('refunded_satang');
  });
}
