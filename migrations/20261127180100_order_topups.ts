import type { Knex } from 'knex';

/**
 * Top-ups of orders (docs/orders.md): a PromptPay order finalised above what was paid gets a QR
 * payment of the difference (its own payments row and order id, order_topups linking it); the
 * order waits for it in the status awaiting_topup.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('order_topups', (t) => {
    t.text('payment_id').primary();
    t.text('order_id').notNullable().references('orders.order_id');
    t.text('topup_order_id').notNullable().unique();
    t.text('finalize_id').notNullable().unique();
    t.bigInteger('amount_satang').notNullable();
    t.text('status').notNullable().defaultTo('pending');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("status IN ('pending','paid','expired')");
  });
  const { rows } = await knex.raw(
    `SELECT conname FROM pg_constraint WHERE conrelid = 'orders'::regclass AND contype = 'c'
       AND pg_get_constraintdef(oid) LIKE '%status%'`,
  );
  for (const r of rows) await knex.raw(`ALTER TABLE orders DROP CONSTRAINT "${r.conname}"`);
  await knex.raw(
    `ALTER TABLE orders ADD CONSTRAINT orders_status_check
       CHECK (status IN ('authorizing','open','finalizing','awaiting_topup','settled','failed','attention'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('order_topups');
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_status_check');
  await knex.raw(
    `ALTER TABLE orders ADD CONSTRAINT orders_status_check
       CHECK (status IN ('authorizing','open','finalizing','settled','failed','attention'))`,
  );
}
