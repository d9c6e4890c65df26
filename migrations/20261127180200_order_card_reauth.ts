import type { Knex } from 'knex';

/**
 * A card order finalised above its authorisation (docs/orders.md): the new authorisation of the
 * difference on the card on file, one per finalisation (order_card_holds), written before the
 * provider is asked; and the order status `short` (the difference declined: only the first
 * authorisation captured). The status is added to whatever the check lists, so another
 * migration's statuses stay.
 */
async function statusCheck(knex: Knex, edit: (values: string[]) => string[]): Promise<void> {
  const { rows } = await knex.raw(
    `SELECT conname, pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE conrelid = 'orders'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%status%'`,
  );
  const values = new Set<string>();
  for (const r of rows as { conname: string; def: string }[]) {
    for (const m of r.def.matchAll(/'([a-z_]+)'/g)) values.add(m[1]);
    await knex.raw(`ALTER TABLE orders DROP CONSTRAINT "${r.conname}"`);
  }
  const list = edit([...values])
    .map((v) => `'${v}'`)
    .join(',');
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_status_check CHECK (status IN (${list}))`);
}

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('order_card_holds', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.order_id');
    t.text('finalize_id').notNullable().unique();
    t.bigInteger('amount_satang').notNullable();
    t.text('charge_id');
    t.text('status').notNullable().defaultTo('pending');
    t.bigInteger('captured_satang').notNullable().defaultTo(0);
    t.text('failure_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check("status IN ('pending','authorized','declined','captured','voided')");
  });
  await statusCheck(knex, (v) => [...v.filter((s) => s !== 'short'), 'short']);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('order_card_holds');
  await knex('orders').where({ status: 'short' }).update({ status: 'attention' });
  await statusCheck(knex, (v) => v.filter((s) => s !== 'short'));
}
