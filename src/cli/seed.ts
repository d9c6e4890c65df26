/** `npm run seed`: (re)load the shop's catalog from data/catalog in one transaction. */
import { withDb } from './context';
import { seedCatalog } from '../db/seed';

void withDb(async (db) => {
  const counts = await seedCatalog(db);
  process.stdout.write(
    `catalog loaded: ${Object.entries(counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ')}\n`,
  );
});
