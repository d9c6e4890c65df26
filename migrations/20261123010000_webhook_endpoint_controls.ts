import type { Knex } from 'knex';

/**
 * Webhook endpoints like Svix's:
 *  - webhook_endpoints.event_types: the event types the endpoint receives (NULL: every type);
 *  - webhook_endpoints.disabled: a disabled endpoint gets no new messages;
 *  - webhook_endpoints.previous_secret_ciphertext / previous_secret_expires_at: after a rotation
 *    the old secret keeps signing (a second signature) until it expires, 24 h later;
 *  - indexes for the attempts list (per endpoint, newest first) and recovery (failed since).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.jsonb('event_types');
    t.boolean('disabled').notNullable().defaultTo(false);
    t.text('previous_secret_ciphertext');
    t.timestamp('previous_secret_expires_at', { useTz: true });
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.index(['endpoint_id', 'state', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_deliveries', (t) => {
    t.dropIndex(['endpoint_id', 'state', 'created_at']);
  });
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('updated_at');
    t.dropColumn('previous_secret_expires_at');
    t.dropColumn('previous_secret_ciphertext');
    t.dropColumn('disabled');
    t.dropColumn('event_types');
  });
}
