import type { Knex } from 'knex';

/**
 * The staff console (src/console/): its sessions (the sha256 of the cookie's token, the API key
 * id it signed in with, never the key) and its audit log (who, what, when; the order it touched).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('console_sessions', (t) => {
    t.string('id', 64).primary();
    t.string('api_key_id', 40).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('last_seen_at', { useTz: true }).notNullable();
    t.timestamp('ended_at', { useTz: true });
  });
  await knex.schema.createTable('console_audit', (t) => {
    t.bigIncrements('id').primary();
    t.string('api_key_id', 40).notNullable();
    t.string('session_id', 64).notNullable();
    t.string('action', 60).notNullable();
    t.string('order_id', 64);
    t.jsonb('detail').notNullable().defaultTo('{}');
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['order_id', 'at'], 'console_audit_order');
    t.index(['api_key_id', 'at'], 'console_audit_key');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('console_audit');
  await knex.schema.dropTable('console_sessions');
}
