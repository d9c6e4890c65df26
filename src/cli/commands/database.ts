/**
 * `talat migrate [--seed-if-empty]`: apply every pending migration (the compose `migrate`
 * service runs it once before the roles start; several at once are safe: migrateLatest holds an
 * advisory lock), then optionally load the catalog into an empty database.
 * `talat seed`: (re)load the shop's catalog from data/catalog in one transaction.
 */
import type { Command } from 'commander';
import { migrateLatest } from '../../db/knex';
import { isCatalogEmpty, seedCatalog } from '../../db/seed';
import { output, withDb } from '../context';

const counted = (counts: Record<string, number>) =>
  Object.entries(counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');

export function databaseCommands(program: Command): void {
  program
    .command('migrate')
    .description('apply the pending migrations (DATABASE_URL, or the embedded Postgres)')
    .option('--seed-if-empty', 'then load the catalog (data/catalog) when the database has none')
    .option('--json', 'print what was applied and seeded as JSON')
    .action(async (o: { seedIfEmpty?: boolean; json?: boolean }) => {
      await withDb(
        async (db) => {
          const applied = await migrateLatest(db);
          const seeded = o.seedIfEmpty && (await isCatalogEmpty(db)) ? await seedCatalog(db) : null;
          output(o.json, { applied, seeded }, () =>
            [
              applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date',
              ...(seeded ? [`seeded the catalog: ${JSON.stringify(seeded)}`] : []),
            ].join('\n'),
          );
        },
        { migrate: false },
      );
    });

  program
    .command('seed')
    .description('(re)load the catalog from data/catalog in one transaction')
    .option('--json', 'print the counts loaded as JSON')
    .action(async (o: { json?: boolean }) => {
      await withDb(async (db) => {
        const counts = await seedCatalog(db);
        output(o.json, counts, () => `catalog loaded: ${counted(counts)}`);
      });
    });
}
