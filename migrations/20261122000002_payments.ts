import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary(); // key_...
    t.text('name').notNullable();
    t.text('prefix').notNullable(); // first characters of the key, for operators
    t.text('key_hash').notNullable().unique(); // sha256 hex of the whole key; the key itself is never stored
    t.specificType('scopes', 'text[]').notNullable().defaultTo('{}');
    t.text('mode').notNullable().defaultTo('live');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
    t.check("mode IN ('live','sandbox')");
  });

  await knex.schema.createTable('payments', (t) => {
    t.text('id').primary(); // pay_...
    t.text('order_id').notNullable().unique();
    t.text('user_id').notNullable();
    t.text('method').notNullable();
    t.bigInteger('amount_satang').notNullable();
    t.string('currency', 3).notNullable().defaultTo('THB');
    t.text('status').notNullable().defaultTo('pending');
    t.text('mode').notNullable().defaultTo('live');
    t.text('customer_id');
    t.text('callback_url'); // card: where the user is sent after the provider's callback
    t.text('provider_ref'); // card: charge id (objectId); QR: payload reference
    t.text('workflow_id').notNullable();
    t.text('api_key_id').references('api_keys.id');
    t.jsonb('details').notNullable().defaultTo('{}');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check('amount_satang > 0');
    t.check("status IN ('pending','paid','failed','expired','refunded')");
    t.index(['provider_ref']);
  });

  await knex.schema.createTable('payment_events', (t) => {
    t.bigIncrements('id').primary();
    t.text('payment_id').notNullable().references('payments.id');
    t.text('from_status');
    t.text('to_status').notNullable();
    t.text('reason').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['payment_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('payment_events');
  await knex.schema.dropTableIfExists('payments');
  await knex.schema.dropTableIfExists('api_keys');
}
