/**
 * An embedded Postgres cluster the project owns (data under DATA_DIR/pg), on Debian's binaries
 * (scripts/provision.sh installs them); as root it runs as the `postgres` user. A cluster left
 * running by an earlier start is reused; `stop()` shuts it down. TCP asks for the password
 * (scram-sha-256) of `postgres`, generated at the first start into `<dataDir>.password` (0600);
 * the Unix socket, inside the 0700 data directory, trusts its owner. pg_hba.conf is written at
 * every start, so an older cluster is closed the same way.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { assertPortFree, supervise, whenGone, type Supervised } from './supervisor';

export interface EmbeddedPostgres {
  /** URL of the database `database`, e.g. postgres://postgres:<password>@127.0.0.1:5433/talat */
  url: string;
  adminUrl: string;
  dataDir: string;
  port: number;
  /** the postmaster's pid */
  pid: number;
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

/** Where the password of the cluster in `dataDir` is kept: beside it, `<dataDir>.password`. */
export const passwordFileOf = (dataDir: string): string => `${path.resolve(dataDir)}.password`;

/** The cluster's password (generated and written 0600 when there is none yet). */
export function embeddedPassword(dataDir: string, create = true): string | undefined {
  const file = passwordFileOf(dataDir);
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  if (!create) return undefined;
  const password = randomBytes(24).toString('base64url');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    // another start wrote it first: use that one
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw e;
  }
  return password;
}

const HBA = `# Written by Talat (src/stack/postgres.ts) at every start; edits are overwritten.
# The socket is inside the 0700 data directory: its owner and root only.
local all all trust
# TCP: the password of DATA_DIR/pg.password (scram-sha-256)
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
`;

/** Sets the role's password through the socket (trusted), so TCP logins need it. */
async function setPassword(pgdata: string, port: number, password: string): Promise<void> {
  const client = new Client({ host: pgdata, port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    await client.query("SET password_encryption = 'scram-sha-256'");
    await client.query(`ALTER ROLE postgres PASSWORD ${client.escapeLiteral(password)}`);
  } finally {
    await client.end();
  }
}

const postmasterPid = (pgdata: string): number =>
  Number(fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[0]);

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  database: string;
  log?: (msg: string) => void;
  /** preload pg_stat_statements when this Postgres ships it (calls and time per statement); a server already running keeps its settings */
  statStatements?: boolean;
}): Promise<EmbeddedPostgres> {
  const bin = findPostgresBin();
  ensureOsUser();
  const password = embeddedPassword(opts.dataDir)!;
  const pgdata = prepareDataDir(path.resolve(opts.dataDir));
  const log = opts.log ?? (() => undefined);

  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    log(`initialising a Postgres cluster in ${pgdata}`);
    runPg(path.join(bin, 'initdb'), ['-D', pgdata, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']);
  }

  let startedByUs = false;
  let port = opts.port;
  fs.writeFileSync(path.join(pgdata, 'pg_hba.conf'), HBA);
  const status = runPg(path.join(bin, 'pg_ctl'), ['-D', pgdata, 'status'], { allowFail: true });
  if (status.status !== 0) {
    await assertPortFree(
      port,
      'the embedded Postgres cannot start',
      `Stop that process, choose another port with PG_PORT, or set DATABASE_URL to use that server on purpose.`,
    );
    const logFile = path.join(pgdata, 'server.log');
    const preload =
      opts.statStatements && fs.existsSync(path.join(bin, '..', 'lib', 'pg_stat_statements.so'))
        ? ' -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=top -c pg_stat_statements.track_planning=on'
        : '';
    const serverOpts = `-p ${port} -c listen_addresses=127.0.0.1 -k ${pgdata} -c max_connections=200 -c fsync=on${preload}`;
    runPg(path.join(bin, 'pg_ctl'), ['-D', pgdata, '-l', logFile, '-w', '-t', '60', '-o', serverOpts, 'start']);
    startedByUs = true;
  } else {
    // postmaster.pid line 4 is the port the running server listens on
    port = Number(fs.readFileSync(path.join(pgdata, 'postmaster.pid'), 'utf8').split('\n')[3]) || port;
    log(`reusing the Postgres cluster already running in ${pgdata} on port ${port}`);
    runPg(path.join(bin, 'pg_ctl'), ['-D', pgdata, 'reload'], { allowFail: true }); // our pg_hba.conf
  }
  await setPassword(pgdata, port, password);

  const auth = `postgres:${encodeURIComponent(password)}`;
  const adminUrl = `postgres://${auth}@127.0.0.1:${port}/postgres`;
  await createDatabaseIfMissing(adminUrl, opts.database);
  return {
    url: `postgres://${auth}@127.0.0.1:${port}/${opts.database}`,
    adminUrl,
    dataDir: pgdata,
    port,
    pid: postmasterPid(pgdata),
    startedByUs,
    async stop() {
      runPg(path.join(bin, 'pg_ctl'), ['-D', pgdata, '-m', 'fast', '-w', 'stop'], { allowFail: true });
    },
  };
}

/**
 * The cluster under supervision: started (or reused) now, and started again on the same port when
 * its postmaster goes away without stop() (watched by pid, as pg_ctl runs it detached).
 */
export async function superviseEmbeddedPostgres(
  opts: Parameters<typeof startEmbeddedPostgres>[0],
  log: Parameters<typeof supervise>[2],
): Promise<{ pg: EmbeddedPostgres; supervisor: Supervised }> {
  let first: EmbeddedPostgres | undefined;
  const supervisor = await supervise(
    'Postgres',
    async () => {
      const pg = await startEmbeddedPostgres(first ? { ...opts, port: first.port } : opts);
      first ??= pg;
      const gone = whenGone(pg.pid);
      return {
        pid: pg.pid,
        exited: gone.promise,
        stop: async () => {
          gone.cancel();
          await pg.stop();
        },
      };
    },
    log,
  );
  return { pg: first!, supervisor };
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
