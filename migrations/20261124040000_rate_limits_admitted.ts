import type { Knex } from 'knex';

/**
 * A rate-limit upsert counts a batch of n requests at once (the requests of one key that queued
 * behind the upsert before it): `admitted` is how many of the row's last batch were admitted, so
 * the gateway can tell each request of the batch its own decision (RETURNING sees only the new row).
 * Rows written before this read 0, which no upsert returns: every upsert sets it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('rate_limits', (t) => {
    t.integer('admitted').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('rate_limits', (t) => {
    t.dropColumn('admitted');
  });
}
