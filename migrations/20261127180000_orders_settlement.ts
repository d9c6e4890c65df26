import type { Knex } from 'knex';

/**
 * Orders settled on what was picked (src/orders, docs/orders.md): the order, its adjustments and
 * its one finalisation, each written by the gateway before the order workflow moves money; the
 * payment state `authorized`; the sandbox card provider's authorisations, captures and voids.
 */
export async function up(knex: Knex): Promise<void> {
  const { rows } = await knex.raw(
    `SELECT conname FROM pg_constraint WHERE conrelid = 'payments'::regclass AND contype = 'c'
       AND pg_get_constraintdef(oid) LIKE '%status%'`,
  );
  for (const r of rows) await knex.raw(`ALTER TABLE payments DROP CONSTRAINT "${r.conname}"`);
  await knex.raw(
    `ALTER TABLE payments ADD CONSTRAINT payments_status_check
       CHECK (status IN ('pending','authorized','paid','failed','expired','refunded'))`,
  );

  await knex.schema.createTable('orders', (t) => {
    t.text('order_id').primary();
    t.text('payment_id').notNullable();
    t.text('method').notNullable();
    t.text('mode').notNullable();
    t.text('api_key_id').notNullable();
    t.text('status').notNullable().defaultTo('open');
    /** the basket's estimate as first paid or authorised (without the margin) */
    t.bigInteger('base_satang').notNullable();
    t.bigInteger('authorized_satang').notNullable().defaultTo(0);
    t.bigInteger('captured_satang').notNullable().defaultTo(0);
    t.bigInteger('paid_satang').notNullable().defaultTo(0);
    t.bigInteger('refunded_satang').notNullable().defaultTo(0);
    t.bigInteger('final_satang');
    t.text('status_reason');
    t.timestamp('lapses_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("status IN ('authorizing','open','finalizing','settled','failed','attention')");
  });

  await knex.schema.createTable('order_adjustments', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.order_id');
    t.jsonb('lines').notNullable();
    t.bigInteger('total_satang').notNullable();
    t.text('api_key_id').notNullable();
    t.text('idempotency_key');
    t.text('status').notNullable().defaultTo('pending');
    t.text('rejection');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['api_key_id', 'idempotency_key']);
    t.index(['order_id', 'created_at']);
    t.check("status IN ('pending','applied','rejected')");
  });

  await knex.schema.createTable('order_finalizations', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().unique().references('orders.order_id');
    t.bigInteger('final_satang');
    t.text('outcome');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.alterTable('sim_card_charges', (t) => {
    t.boolean('capture').notNullable().defaultTo(true);
    t.bigInteger('captured_satang').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('sim_card_captures', (t) => {
    t.text('id').primary();
    t.text('charge_id').notNullable();
    t.text('idempotency_key').notNullable().unique();
    t.text('kind').notNullable();
    t.bigInteger('amount_satang').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sim_card_captures');
  await knex.schema.alterTable('sim_card_charges', (t) => {
    t.dropColumn('capture');
    t.dropColumn('captured_satang');
  });
  await knex.schema.dropTable('order_finalizations');
  await knex.schema.dropTable('order_adjustments');
  await knex.schema.dropTable('orders');
  await knex.raw('ALTER TABLE payments DROP CONSTRAINT payments_status_check');
  await knex.raw(
    `ALTER TABLE payments ADD CONSTRAINT payments_status_check
       CHECK (status IN ('pending','paid','failed','expired','refunded'))`,
  );
}
