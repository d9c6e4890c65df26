/** `npm run migrate`: apply every pending migration. */
import { withDb } from './context';
import { migrateLatest } from '../db/knex';

void withDb(async (db) => {
  const applied = await migrateLatest(db);
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
});
