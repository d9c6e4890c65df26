/** Migration tests' helpers: a fresh database of their own, and undoing migrations down to one. */
import { Client } from 'pg';
import { createDb, migrationSource, type Db } from '../../src/db/knex';
import { createDatabaseIfMissing } from '../../src/stack/postgres';
import { testDatabaseUrl } from './stack';

/** An empty database `<prefix>_w<jest worker>` (dropped first when there) and a Db of 2 connections on it. */
export async function freshDatabase(prefix: string): Promise<Db> {
  const name = `${prefix}_w${process.env.JEST_WORKER_ID ?? '1'}`;
  const admin = new Client({ connectionString: process.env.TALAT_TEST_PG_ADMIN_URL! });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.end();
  await createDatabaseIfMissing(process.env.TALAT_TEST_PG_ADMIN_URL!, name);
  return createDb(testDatabaseUrl(name), { poolMax: 2 });
}

/** Undo the newest migrations until `name` (a file's name without its extension) is undone too. */
export async function migrateDownThrough(db: Db, name: string): Promise<void> {
  const applied = async () => {
    const [completed] = (await db.migrate.list({ migrationSource })) as [unknown[], unknown[]];
    return completed.some((m) => String((m as { name?: string }).name ?? m).startsWith(name));
  };
  while (await applied()) await db.migrate.down({ migrationSource });
}
