/**
 * Storefront assets in the object store: what the publisher has put there (bucket, key, the hash
 * of the data it was made from and the ETag the store gave it), so that a run uploads only what
 * changed, and a log of the publication runs (versions published, objects uploaded, errors).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('storefront_assets', (t) => {
    t.text('bucket').notNullable();
    t.text('key').notNullable();
    t.text('source_hash').notNullable();
    t.text('etag').notNullable();
    t.integer('bytes').notNullable();
    t.text('content_type').notNullable();
    t.timestamp('published_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['bucket', 'key']);
  });
  await knex.schema.createTable('storefront_asset_runs', (t) => {
    t.bigIncrements('id');
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.timestamp('finished_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.jsonb('versions').notNullable();
    t.boolean('ok').notNullable();
    t.integer('uploaded').notNullable().defaultTo(0);
    t.integer('unchanged').notNullable().defaultTo(0);
    t.integer('deleted').notNullable().defaultTo(0);
    /** the first 100 keys uploaded, as <bucket>/<key> */
    t.specificType('uploaded_keys', 'text[]').notNullable().defaultTo('{}');
    t.text('error');
    t.integer('duration_ms').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('storefront_asset_runs');
  await knex.schema.dropTableIfExists('storefront_assets');
}
