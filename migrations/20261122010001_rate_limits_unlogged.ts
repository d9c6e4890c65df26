/**
 * Rate-limit counters need no crash safety: after a crash Postgres empties an unlogged table,
 * which only forgets the current second's and minute's counts. Unlogged, the one upsert per
 * request writes no WAL and waits for no flush.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE rate_limits SET UNLOGGED');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE rate_limits SET LOGGED');
}
