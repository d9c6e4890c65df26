/**
 * The GIN trigram index of search_documents.trgm_text goes: the search compares the query with
 * every document's text (a few hundred rows; the planner scans them either way), so the index
 * only slowed the rebuilds of the search index.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS search_documents_trgm');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX IF NOT EXISTS search_documents_trgm ON search_documents USING gin (trgm_text gin_trgm_ops)',
  );
}
