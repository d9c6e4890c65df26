import type { Knex } from 'knex';

/**
 * Which API key (merchant) a partner-bank user and a bank order belong to, per mode (sandbox and
 * live are two banks). The bank's own ids are one namespace for every merchant; these rows scope
 * them: another key's user or order reads as one that does not exist (src/bank/owners.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('bank_user_owners', (t) => {
    t.text('mode').notNullable();
    t.text('user_id').notNullable();
    t.text('api_key_id').notNullable().references('api_keys.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['mode', 'user_id']);
    t.check("mode IN ('live','sandbox')");
  });
  await knex.schema.createTable('bank_order_owners', (t) => {
    t.text('mode').notNullable();
    t.text('order_id').notNullable();
    t.text('api_key_id').notNullable().references('api_keys.id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['mode', 'order_id']);
    t.check("mode IN ('live','sandbox')");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('bank_order_owners');
  await knex.schema.dropTableIfExists('bank_user_owners');
}
