/** Migration tests' helper: undo the newest migrations until `name` (a file's name without its extension) is undone too. */
import { migrationSource, type Db } from '../../src/db/knex';

export async function migrateDownThrough(db: Db, name: string): Promise<void> {
  const applied = async () => {
    const [completed] = (await db.migrate.list({ migrationSource })) as [unknown[], unknown[]];
    return completed.some((m) => String((m as { name?: string }).name ?? m).startsWith(name));
  };
  while (await applied()) await db.migrate.down({ migrationSource });
}
