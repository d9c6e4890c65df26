import type { Knex } from 'knex';

/**
 * Outgoing webhooks:
 *  - webhook_endpoints: an integrator's endpoint (owned by the API key that registered it), its
 *    signing secret encrypted at rest (AES-256-GCM, key WEBHOOK_SECRET_KEY);
 *  - webhook_deliveries: one message per (endpoint, payment, status); its id is the
 *    webhook-id header, the same on every attempt;
 *  - webhook_attempts: every HTTP attempt, automatic or replayed;
 *  - webhook_dead_letters: a delivery whose four attempts all failed, until a replay delivers it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.text('id').primary(); // ep_...
    t.text('api_key_id').notNullable().references('api_keys.id');
    t.text('mode').notNullable();
    t.text('url').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.boolean('public_payments').notNullable().defaultTo(false);
    t.text('secret_ciphertext').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
    t.index(['api_key_id']);
    t.check("mode IN ('live','sandbox')");
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary(); // msg_... = webhook-id
    t.text('endpoint_id').notNullable().references('webhook_endpoints.id');
    t.text('payment_id').notNullable();
    t.text('order_id').notNullable();
    t.text('event_status').notNullable();
    t.text('payload').notNullable(); // the exact JSON text that is signed and sent
    t.text('state').notNullable().defaultTo('pending'); // pending | delivered | dead | cancelled
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.text('last_error');
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['endpoint_id', 'payment_id', 'event_status']);
    t.check("state IN ('pending','delivered','dead','cancelled')");
  });

  await knex.schema.createTable('webhook_attempts', (t) => {
    t.bigIncrements('id').primary();
    t.text('delivery_id').notNullable().references('webhook_deliveries.id');
    t.integer('attempt').notNullable();
    t.text('kind').notNullable(); // automatic | replay
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('status_code');
    t.text('error');
    t.index(['delivery_id']);
  });

  await knex.schema.createTable('webhook_dead_letters', (t) => {
    t.text('id').primary(); // dlq_...
    t.text('delivery_id').notNullable().unique().references('webhook_deliveries.id');
    t.text('endpoint_id').notNullable().references('webhook_endpoints.id');
    t.text('status').notNullable().defaultTo('dead'); // dead | delivered
    t.text('reason').notNullable();
    t.integer('replays').notNullable().defaultTo(0);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('replayed_at', { useTz: true });
    t.timestamp('delivered_at', { useTz: true });
    t.index(['endpoint_id', 'status']);
    t.check("status IN ('dead','delivered')");
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_dead_letters');
  await knex.schema.dropTableIfExists('webhook_attempts');
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhook_endpoints');
}
