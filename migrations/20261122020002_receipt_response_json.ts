import type { Knex } from 'knex';

/**
 * The stored first response of a callback is sent again, byte for byte, to every duplicate:
 * keep it as json (the text as written) rather than jsonb (which reorders keys).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE callback_receipts ALTER COLUMN response_body TYPE json USING response_body::json');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE callback_receipts ALTER COLUMN response_body TYPE jsonb USING response_body::jsonb');
}
