import type { Knex } from 'knex';

/**
 * Payment links (src/links/): a short unguessable code a shop pastes into a chat, owned by one
 * API key and mode. Each visit that starts a payment is a payment_link_visits row (the order id
 * of its QR payment: `<link id>-<seq>`), written before the payment is created.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payment_links', (t) => {
    t.string('id', 40).primary();
    t.string('code', 40).notNullable().unique();
    t.string('api_key_id', 40).notNullable();
    t.string('mode', 10).notNullable();
    t.bigInteger('amount_satang').notNullable();
    t.string('description', 200).notNullable();
    t.boolean('reusable').notNullable().defaultTo(false);
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('deactivated_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['api_key_id', 'created_at', 'id'], 'payment_links_owner');
  });
  await knex.schema.createTable('payment_link_visits', (t) => {
    t.string('link_id', 40).notNullable().references('id').inTable('payment_links');
    t.integer('seq').notNullable();
    t.string('order_id', 64).notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['link_id', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('payment_link_visits');
  await knex.schema.dropTable('payment_links');
}
