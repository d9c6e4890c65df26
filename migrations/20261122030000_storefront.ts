/**
 * Storefront: change versions of the catalog, price and inventory data (bumped by triggers,
 * so every writer, including `npm run seed` and hand-written SQL, invalidates the caches), the
 * search index derived from the catalog, the identity service's temporary credentials and the
 * storefront API keys (hashes only), and the shared store of the auth rate limits.
 */
import type { Knex } from 'knex';

const VERSIONED: Record<string, string[]> = {
  catalog: ['categories', 'product_groups', 'products', 'branches', 'promotions', 'banners'],
  prices: ['prices'],
  inventory: ['inventory'],
};

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('storefront_versions', (t) => {
    t.text('name').primary();
    t.bigInteger('version').notNullable().defaultTo(1);
    t.timestamp('changed_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex('storefront_versions').insert(Object.keys(VERSIONED).map((name) => ({ name })));
  await knex.raw(`
    CREATE FUNCTION storefront_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE storefront_versions SET version = version + 1, changed_at = clock_timestamp() WHERE name = TG_ARGV[0];
      RETURN NULL;
    END $$`);
  for (const [name, tables] of Object.entries(VERSIONED)) {
    for (const table of tables) {
      await knex.raw(
        `CREATE TRIGGER ${table}_storefront_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
         FOR EACH STATEMENT EXECUTE FUNCTION storefront_bump_version('${name}')`,
      );
    }
  }

  // One row per product group; rebuilt from the catalog when the catalog version moves on.
  await knex.schema.createTable('search_documents', (t) => {
    t.text('group_id').primary().references('product_groups.group_id').onDelete('CASCADE');
    t.specificType('lex', 'tsvector').notNullable();
    t.text('trgm_text').notNullable(); // names, brand and keywords, Thai segmented, lower case
    t.specificType('embedding', 'real[]').notNullable();
  });
  await knex.raw('CREATE INDEX search_documents_lex ON search_documents USING gin (lex)');
  await knex.raw('CREATE INDEX search_documents_trgm ON search_documents USING gin (trgm_text gin_trgm_ops)');
  await knex.schema.createTable('search_index_state', (t) => {
    t.boolean('id').primary().defaultTo(true);
    t.bigInteger('catalog_version').notNullable();
    t.text('embedder').notNullable();
    t.timestamp('built_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.check('id');
  });

  // Identity service: identities and their temporary credentials. The secret access key is
  // derived from the service's secret and never stored; the session token is stored hashed.
  await knex.schema.createTable('identity_identities', (t) => {
    t.text('identity_id').primary(); // <region>:<uuid>
    t.text('login_provider');
    t.text('login_subject');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['login_provider', 'login_subject']);
  });
  await knex.schema.createTable('identity_credentials', (t) => {
    t.text('access_key_id').primary();
    t.text('identity_id').notNullable().references('identity_identities.identity_id');
    t.specificType('session_token_hash', 'bytea').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['identity_id']);
  });

  // Storefront API keys: the key is derived from the row id and the server's key secret, so the
  // same key can be handed out again without storing it; only its hash is kept for look-ups.
  await knex.schema.createTable('storefront_api_keys', (t) => {
    t.text('id').primary();
    t.text('identity_id').notNullable().references('identity_identities.identity_id');
    t.specificType('key_hash', 'bytea').notNullable().unique();
    t.text('issued_to_access_key_id').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('revoked_at', { useTz: true });
  });
  await knex.raw(
    'CREATE UNIQUE INDEX storefront_api_keys_one_active ON storefront_api_keys (identity_id) WHERE revoked_at IS NULL',
  );

  // rate-limiter-flexible's Postgres store (its own table layout), shared by gateway instances.
  await knex.schema.createTable('storefront_rate_limits', (t) => {
    t.string('key', 255).primary();
    t.integer('points').notNullable().defaultTo(0);
    t.bigInteger('expire');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const t of [
    'storefront_rate_limits',
    'storefront_api_keys',
    'identity_credentials',
    'identity_identities',
    'search_index_state',
    'search_documents',
  ]) {
    await knex.schema.dropTableIfExists(t);
  }
  for (const tables of Object.values(VERSIONED)) {
    for (const table of tables) await knex.raw(`DROP TRIGGER IF EXISTS ${table}_storefront_version ON ${table}`);
  }
  await knex.raw('DROP FUNCTION IF EXISTS storefront_bump_version()');
  await knex.schema.dropTableIfExists('storefront_versions');
}
