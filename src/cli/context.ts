/**
 * What the `talat` commands share: a database (the embedded one when DATABASE_URL is unset),
 * CliError (a failure with its exit code) and the output of --json or of a human.
 * Exit codes (src/cli/talat.ts): 0 success, 1 failure, 2 usage, 78 configuration (EX_CONFIG).
 */
import path from 'node:path';
import { loadConfig, type Config } from '../config';
import { createDb, migrateLatest, type Db } from '../db/knex';
import { startEmbeddedPostgres } from '../stack/postgres';

export const EXIT = { ok: 0, failure: 1, usage: 2, config: 78 } as const;

/** A failure the command reports as `talat <command>: <message>` on stderr, exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    public readonly exitCode: number = EXIT.failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A usage error (exit 2): a missing or contradictory argument commander cannot see. */
export const usage = (message: string): CliError => new CliError(message, EXIT.usage);

/** Prints `value` as JSON with --json, else the human lines. */
export function output(json: boolean | undefined, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/** Runs `fn` on the configured database (ConfigError propagates: exit 78). */
export async function withDb<T>(
  fn: (db: Db, config: Config) => Promise<T>,
  opts: { migrate?: boolean } = {},
): Promise<T> {
  const config = loadConfig();
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
  // knex's own warnings (printed on stdout) stay out: the failure is reported once, on stderr
  const quiet = () => undefined;
  const db = createDb(url, { poolMax: 2, log: { warn: quiet, error: quiet, deprecate: quiet, debug: quiet } });
  try {
    if (opts.migrate !== false) await migrateLatest(db);
    return await fn(db, config);
  } finally {
    await db.destroy();
    await stop?.();
  }
}
