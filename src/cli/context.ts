/** Shared start-up for the CLI commands: config, and a database (the embedded one when DATABASE_URL is unset). */
import path from 'node:path';
import { ConfigError, loadConfig, type Config } from '../config';
import { createDb, migrateLatest, type Db } from '../db/knex';
import { startEmbeddedPostgres } from '../stack/postgres';

export async function withDb<T>(
  fn: (db: Db, config: Config) => Promise<T>,
  opts: { migrate?: boolean } = {},
): Promise<T> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  let url = config.database.url;
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    const pg = await startEmbeddedPostgres({
      dataDir: path.join(config.dataDir, 'pg'),
      port: config.database.embeddedPort,
      database: 'talat',
    });
    url = pg.url;
    if (pg.startedByUs) stop = () => pg.stop();
  }
  const db = createDb(url, { poolMax: 2 });
  try {
    if (opts.migrate !== false) await migrateLatest(db);
    return await fn(db, config);
  } finally {
    await db.destroy();
    await stop?.();
  }
}

export function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}
