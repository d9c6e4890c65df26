import type { Knex } from 'knex';

/**
 * The re-drive of stuck refunds (src/payments/refund-redrive.ts): a `pending` refund whose
 * workflow update may never have been accepted (Temporal or the gateway down after the row was
 * written) is handed to its workflow again by the workers.
 *  - refunds.redrives / redriven_at: how often and when it was last re-sent (the claim, so two
 *    workers never re-send the same row in the same period);
 *  - refunds_pending: the index the workers' scan reads.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('refunds', (t) => {
    t.integer('redrives').notNullable().defaultTo(0);
    t.timestamp('redriven_at', { useTz: true });
  });
  await knex.raw(`CREATE INDEX refunds_pending ON refunds (created_at) WHERE status = 'pending'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS refunds_pending');
  await knex.schema.alterTable('refunds', (t) => {
    t.dropColumn('redrives');
    t.dropColumn('redriven_at');
  });
}
