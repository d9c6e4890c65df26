import type { Knex } from 'knex';

/**
 * An idempotent replay sends the first response byte for byte: keep its body as the text that
 * was sent (response_text) rather than jsonb (which reorders keys). Rows written before this
 * keep their jsonb response_body, which is still read when response_text is null.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.text('response_text');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropColumn('response_text');
  });
}
