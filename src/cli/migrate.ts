/**
 * `npm run migrate`: apply every pending migration (the compose `migrate` service runs it once
 * before the roles start). Several at once are safe: migrateLatest holds an advisory lock.
 * `--seed-if-empty`: then load the catalog (data/catalog) when the database has none.
 */
import { withDb } from './context';
import { migrateLatest } from '../db/knex';
import { isCatalogEmpty, seedCatalog } from '../db/seed';

withDb(
  async (db) => {
    const applied = await migrateLatest(db);
    process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
    if (process.argv.includes('--seed-if-empty') && (await isCatalogEmpty(db)))
      process.stdout.write(`seeded the catalog: ${JSON.stringify(await seedCatalog(db))}\n`);
  },
  { migrate: false },
).catch((e) => {
  process.stderr.write(`talat migrate: failed: ${(e as Error).message}\n`);
  process.exit(1);
});
