import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';

export type Db = Knex;

/**
 * A pool of at most `poolMax` connections. A query that cannot get a connection within
 * `acquireTimeoutMs` (Postgres down or hung, or the pool full) fails with knex's
 * KnexTimeoutError, which the gateway answers 503 SERVICE_UNAVAILABLE.
 */
export function createDb(
  url: string,
  opts: { poolMax?: number; acquireTimeoutMs?: number; log?: Knex.Config['log'] } = {},
): Db {
  return knexFactory({
    client: 'pg',
    connection: url,
    pool: {
      min: 0,
      max: opts.poolMax ?? 10,
      // the hot statements are named prepared statements (src/db/prepared.ts): planned once per
      // connection, generically, instead of a custom plan at every call (plan_cache_mode auto)
      afterCreate: (
        conn: { query(sql: string, cb: (e?: Error) => void): void },
        done: (e: Error | undefined, c: unknown) => void,
      ) => conn.query('SET plan_cache_mode = force_generic_plan', (e) => done(e, conn)),
    },
    acquireConnectionTimeout: opts.acquireTimeoutMs ?? 10_000,
    ...(opts.log ? { log: opts.log } : {}),
  });
}

const MIGRATIONS_DIR = path.resolve(__dirname, '..', '..', 'migrations');

/**
 * Migrations are the files of migrations/ in name order (timestamped names), loaded with
 * require so they work under tsx, jest and compiled builds alike. Each is `{ file }`, the shape
 * of knex's own source, which `knex migrate:list` prints pending migrations by.
 */
export const migrationSource: Knex.MigrationSource<{ file: string }> = {
  async getMigrations() {
    return fs
      .readdirSync(MIGRATIONS_DIR)
      .filter((f) => /^\d{14}_[a-z0-9_]+\.(ts|js)$/.test(f))
      .sort()
      .map((file) => ({ file }));
  },
  getMigrationName: (m) => m.file.replace(/\.(ts|js)$/, ''),
  async getMigration(m) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path.join(MIGRATIONS_DIR, m.file)) as Knex.Migration;
  },
};

/** The Postgres advisory lock key that serialises migrations between processes ('tala'). */
export const MIGRATION_LOCK_KEY = 0x74616c61;

/**
 * Apply the pending migrations, once, however many processes start at the same moment.
 *
 * knex's own lock (table knex_migrations_lock) makes a second concurrent migrator fail with
 * "Migration table is already locked" rather than wait; a session advisory lock held on one
 * connection around the run makes it wait instead, then find nothing left to apply.
 */
export async function migrateLatest(db: Db): Promise<string[]> {
  const conn = await db.client.acquireConnection();
  try {
    await db.raw('select pg_advisory_lock(?)', [MIGRATION_LOCK_KEY]).connection(conn);
    try {
      const [, applied] = (await db.migrate.latest({ migrationSource })) as [number, string[]];
      return applied;
    } finally {
      await db.raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]).connection(conn);
    }
  } finally {
    await db.client.releaseConnection(conn);
  }
}

export async function migrateRollbackAll(db: Db): Promise<void> {
  await db.migrate.rollback({ migrationSource }, true);
}
