/**
 * Payment API state: rate-limit counters and idempotency records shared by every gateway
 * process, and the records of the built-in sandbox simulators (card provider, partner bank).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  // One row per bucket (an API key, or a client address for unauthenticated calls): the current
  // one-second and one-minute windows and their counts, updated by one atomic upsert.
  await knex.schema.createTable('rate_limits', (t) => {
    t.text('bucket').primary();
    t.bigInteger('sec_window').notNullable();
    t.integer('sec_count').notNullable();
    t.bigInteger('min_window').notNullable();
    t.integer('min_count').notNullable();
    t.boolean('allowed').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('scope').notNullable(); // api key id, or 'public'
    t.text('key').notNullable();
    t.text('method').notNullable();
    t.text('path').notNullable();
    t.text('fingerprint').notNullable(); // sha256 of method, path and the canonical body
    t.text('state').notNullable(); // in_flight | done
    t.integer('response_status');
    t.jsonb('response_body');
    t.timestamp('locked_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['scope', 'key']);
    t.check("state IN ('in_flight','done')");
    t.index(['expires_at']);
  });

  await knex.schema.createTable('sim_card_charges', (t) => {
    t.text('id').primary(); // chrg_test_...
    t.text('idempotency_key').unique();
    t.bigInteger('amount_satang').notNullable();
    t.text('currency').notNullable();
    t.text('token').notNullable();
    t.text('status').notNullable();
    t.text('return_uri');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('sim_bank_users', (t) => {
    t.text('user_id').primary();
    t.text('bank_user_id').notNullable().unique();
    t.text('name').notNullable();
    t.text('email');
    t.text('phone');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('sim_bank_orders', (t) => {
    t.text('order_id').primary();
    t.text('bank_order_id').notNullable().unique();
    t.text('user_id').notNullable().references('sim_bank_users.user_id');
    t.bigInteger('amount_satang').notNullable();
    t.text('currency').notNullable();
    t.text('description');
    t.text('status').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['user_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const t of ['sim_bank_orders', 'sim_bank_users', 'sim_card_charges', 'idempotency_keys', 'rate_limits']) {
    await knex.schema.dropTableIfExists(t);
  }
}
