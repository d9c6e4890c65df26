/**
 * Issue 41: a callback is answered once its receipt is committed, and the signal follows the
 * answer. The receipt now keeps what the signal carries besides its key (the provider's reference
 * and message), so a receipt left unfinished (its gateway died, or Temporal refused the signal)
 * is delivered again from the table alone by the gateways' redelivery
 * (src/callbacks/redelivery.ts), which finds them by the partial index.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE callback_receipts ADD COLUMN reference text, ADD COLUMN message text;
    CREATE INDEX callback_receipts_unfinished ON callback_receipts (created_at) WHERE outcome IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX callback_receipts_unfinished;
    ALTER TABLE callback_receipts DROP COLUMN reference, DROP COLUMN message;
  `);
}
