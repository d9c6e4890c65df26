import type { Knex } from 'knex';

/**
 * Webhooks that keep trying (webhook-keep-trying-v1):
 *  - webhook_endpoints.retry_schedule: the endpoint's waits in seconds after the 1, 2 and 4 s
 *    retries (NULL: the default schedule, DEFAULT_RETRY_SCHEDULE_S);
 *  - webhook_dead_letters.retry_state: `retrying` while the longer schedule runs, `gave_up`
 *    after it (every dead letter before this change gave up at once); next_attempt_at: when.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.jsonb('retry_schedule');
  });
  await knex.schema.alterTable('webhook_dead_letters', (t) => {
    t.text('retry_state').notNullable().defaultTo('gave_up');
    t.timestamp('next_attempt_at', { useTz: true });
    t.check("retry_state IN ('retrying','gave_up')", [], 'webhook_dead_letters_retry_state');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_dead_letters', (t) => {
    t.dropChecks('webhook_dead_letters_retry_state');
    t.dropColumn('next_attempt_at');
    t.dropColumn('retry_state');
  });
  await knex.schema.alterTable('webhook_endpoints', (t) => {
    t.dropColumn('retry_schedule');
  });
}
