/**
 * An embedded Postgres cluster that the project owns (data under DATA_DIR/pg).
 *
 * Uses Debian's postgresql binaries (scripts/provision.sh installs them when absent).
 * initdb and postgres refuse to run as root, so as root the cluster runs as the `postgres`
 * system user. A cluster left running by an earlier start is reused; `stop()` shuts it down.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPostgres {
  /** URL of the database `database`, e.g. postgres://postgres@127.0.0.1:5433/talat */
  url: string;
  adminUrl: string;
  dataDir: string;
  port: number;
  startedByUs: boolean;
  stop(): Promise<void>;
}

export function findPostgresBin(): string {
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root)) {
    const versions = fs
      .readdirSync(root)
      .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return path.dirname(which.stdout.trim());
  throw new Error(
    'PostgreSQL binaries (initdb, pg_ctl) not found: run `bash scripts/provision.sh` or set DATABASE_URL',
  );
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** System tools that live in sbin, which a minimal PATH may lack. */
function sbin(tool: string): string {
  for (const dir of ['/usr/sbin', '/sbin', '/usr/bin', '/bin'])
    if (fs.existsSync(path.join(dir, tool))) return path.join(dir, tool);
  return tool;
}

/** Run a postgres binary, as the `postgres` user when we are root. */
function runPg(bin: string, args: string[], opts: { allowFail?: boolean } = {}): { status: number; out: string } {
  const [cmd, argv] = isRoot() ? [sbin('runuser'), ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv as string[], { encoding: 'utf8', cwd: '/' });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`;
  if (r.status !== 0 && !opts.allowFail)
    throw new Error(`${path.basename(bin)} ${args.join(' ')} failed (${r.status}): ${out}`);
  return { status: r.status ?? 1, out };
}

function ensureOsUser(): void {
  if (!isRoot()) return;
  if (spawnSync('id', ['-u', 'postgres']).status === 0) return;
  execFileSync(sbin('useradd'), ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
}

/** Make `dir` usable by the postgres user; falls back to a directory under /var/tmp when a parent is not traversable. */
function prepareDataDir(wanted: string): string {
  fs.mkdirSync(wanted, { recursive: true, mode: 0o700 });
  if (!isRoot()) return wanted;
  execFileSync('chown', ['-R', 'postgres:postgres', wanted]);
  fs.chmodSync(wanted, 0o700);
  if (spawnSync(sbin('runuser'), ['-u', 'postgres', '--', 'test', '-w', wanted]).status === 0) return wanted;
  const fallback = path.join('/var/tmp', `talat-pg-${Buffer.from(wanted).toString('hex').slice(-24)}`);
  fs.mkdirSync(fallback, { recursive: true, mode: 0o700 });
  execFileSync('chown', ['-R', 'postgres:postgres', fallback]);
  return fallback;
}

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  log?: (msg: string) => void;
}): Promise<EmbeddedPostgres> {
  const bin = findPostgresBin();
  ensureOsUser();
  const pgdata = prepareDataDir(path.resolve(opts.dataDir));
  const log = opts.log ?? (() => undefined);

  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    log(`initialising a Postgres cluster in ${pgdata}`);
    runPg(path.join(bin, 'initdb'), ['-D', pgdata, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  }

  let startedByUs = false;
  let port = opts.port;
  const status = runPg(path.join(bin, 'pg_ctl'), ['-D', pgdata, 'status'], { allowFail: true });
  if (status.status !== 0) {
    const logFile = path.join(pgdata, 'server.log');
    const serverOpts = `-p ${port} -c listen_addresses=127.0.0.1 -k ${pgdata} -c max_connections=200 -c fsync=on`;
    runPg(path.join(bin, 'pg_ctl'), ['-D', pgdata, '-l', logFile, '-w', '-t', '60', '-o', serverOpts, 'start']);
    startedByUs = true;
  } else {
    // postmaster.pid line 4 is the port the running server listens on
    port = Number(fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[3]) || port;
    log(`reusing the Postgres cluster already running in ${pgdata} on port ${port}`);
  }

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await createDatabaseIfMissing(adminUrl, opts.database);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${opts.database}`,
    adminUrl,
    dataDir: pgdata,
    port,
    startedByUs,
    async stop() {
      runPg(path.join(bin, 'pg_ctl'), ['-D', pgdata, '-m', 'fast', '-w', 'stop'], { allowFail: true });
    },
  };
}

export async function createDatabaseIfMissing(adminUrl: string, database: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`bad database name ${database}`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (r.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE ${database}`);
      } catch (e) {
        // another process created it between our check and our CREATE
        if ((e as { code?: string }).code !== '42P04') throw e;
      }
    }
  } finally {
    await client.end();
  }
}
