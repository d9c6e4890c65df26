/**
 * What the two production roles (src/roles/gateway.ts, src/roles/worker.ts) share: loading the
 * configuration, finding Postgres and Temporal, migrations, ordered shutdown on SIGTERM/SIGINT,
 * and exit codes: 0 after a clean drain, 78 for a bad configuration, 1 for any other start-up
 * failure (with one line on stderr that says what failed) or a start-up longer than
 * STARTUP_TIMEOUT_S, 1 when the drain outlives SHUTDOWN_GRACE_S.
 */
import net from 'node:net';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { ConfigError, loadConfig, type Config } from '../config';
import { createDb, migrateLatest, migrationSource, type Db } from '../db/knex';
import { createLogger, createLogOutput, logCrashes, type Logger } from '../logger';
import type { KeyRing } from '../key-ring';
import { connectClient, temporalReachable, type TemporalTlsFiles } from '../temporal/client';
import { embeddedPassword } from '../stack/postgres';

export type Role = 'gateway' | 'worker';

/** A start-up failure with a message meant for the operator (printed as is). */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

export interface Stopper {
  name: string;
  stop: () => Promise<void>;
}

export interface RoleContext {
  config: Config;
  logger: Logger;
  /** stopped in reverse order of registration on SIGTERM/SIGINT or after a failure */
  onStop(s: Stopper): void;
  /** the process is draining (SIGTERM received): /readyz answers 503 */
  draining(): boolean;
  /** stop everything and exit with `code` (e.g. when the worker fails while running) */
  fail(err: unknown): Promise<never>;
  /** names the start-up step now under way (said when the start-up outlives STARTUP_TIMEOUT_S) */
  step(name: string): void;
}

/** Postgres URL without its password, for messages. */
export const redactUrl = (url: string) => url.replace(/\/\/([^:@/]+)(:[^@]*)?@/, '//$1@');

const portOpen = (host: string, port: number, timeoutMs = 1000) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });

/**
 * DATABASE_URL and TEMPORAL_ADDRESS, or (outside production, when unset) the embedded ones a
 * running `npm start` exposes on PG_PORT and TEMPORAL_PORT.
 */
export async function resolveServices(
  config: Config,
  role: Role,
): Promise<{ databaseUrl: string; temporalAddress: string; embedded: string[] }> {
  const embedded: string[] = [];
  const missing: string[] = [];
  let databaseUrl = config.database.url;
  if (!databaseUrl) {
    if (!config.production && (await portOpen('127.0.0.1', config.database.embeddedPort))) {
      // its password is in DATA_DIR/pg.password (without one, PGPASSWORD applies)
      const password = embeddedPassword(path.join(config.dataDir, 'pg'), false);
      const auth = password ? `postgres:${encodeURIComponent(password)}` : 'postgres';
      databaseUrl = `postgres://${auth}@127.0.0.1:${config.database.embeddedPort}/talat`;
      embedded.push('postgres');
    } else
      // production never gets here: the configuration requires DATABASE_URL there (exit 78)
      missing.push(
        `DATABASE_URL is not set and no embedded Postgres answers on 127.0.0.1:${config.database.embeddedPort} (PG_PORT)`,
      );
  }
  let temporalAddress = config.temporal.address;
  if (!temporalAddress) {
    if (!config.production && (await portOpen('127.0.0.1', config.temporal.embeddedPort))) {
      temporalAddress = `127.0.0.1:${config.temporal.embeddedPort}`;
      embedded.push('temporal');
    } else
      missing.push(
        `TEMPORAL_ADDRESS is not set and no embedded Temporal dev server answers on 127.0.0.1:${config.temporal.embeddedPort} (TEMPORAL_PORT)`,
      );
  }
  if (missing.length || !databaseUrl || !temporalAddress) {
    throw new StartupError(
      `the ${role} needs Postgres and Temporal: ${missing.join('; ')}. Set DATABASE_URL and TEMPORAL_ADDRESS, or run \`npm start\` (the embedded stack) on this machine first.`,
    );
  }
  return { databaseUrl, temporalAddress, embedded };
}

/** TEMPORAL_TLS_* for a Temporal of TEMPORAL_ADDRESS; none for the embedded dev server of `npm start` (plain TCP on loopback). */
export const temporalTlsOf = (config: Config, embedded: string[]): TemporalTlsFiles | undefined =>
  embedded.includes('temporal') ? undefined : config.temporal.tls;

/** A knex pool on `url` that has answered `select 1` (else a StartupError naming the URL). */
export async function connectDb(url: string, poolMax: number): Promise<Db> {
  const db = createDb(url, { poolMax });
  try {
    await withTimeout(db.raw('select 1'), 10_000, 'no answer within 10 s');
    return db;
  } catch (e) {
    await db.destroy().catch(() => undefined);
    throw new StartupError(`Postgres at ${redactUrl(url)} is unreachable: ${(e as Error).message}`);
  }
}

/** A Temporal client whose frontend has answered (else a StartupError naming the address). */
export async function connectTemporal(
  address: string,
  namespace: string,
  codecKeys?: KeyRing,
  tls?: TemporalTlsFiles,
): Promise<Client> {
  let client: Client;
  try {
    client = await connectClient(address, namespace, { codecKeys, tls });
  } catch (e) {
    throw new StartupError(`Temporal at ${address} is unreachable: ${(e as Error).message}`);
  }
  if (!(await temporalReachable(client, 5000))) {
    await client.connection.close().catch(() => undefined);
    throw new StartupError(`Temporal at ${address} is unreachable: no answer to GetSystemInfo within 5 s`);
  }
  try {
    await client.connection.withDeadline(Date.now() + 10_000, () =>
      client.workflowService.describeNamespace({ namespace }),
    );
  } catch (e) {
    await client.connection.close().catch(() => undefined);
    throw new StartupError(
      `Temporal at ${address} has no namespace ${JSON.stringify(namespace)} (TEMPORAL_NAMESPACE): ${(e as Error).message}`,
    );
  }
  return client;
}

/**
 * Migrations: applied under the advisory lock when MIGRATE_ON_START is on (development), else
 * (production) the schema must already be current: `npm run migrate` (the compose `migrate`
 * service) runs first, once.
 */
export async function ensureMigrated(db: Db, config: Config, logger: Logger): Promise<void> {
  if (config.roles.migrateOnStart) {
    const applied = await migrateLatest(db);
    if (applied.length) logger.info({ applied }, 'applied migrations');
    return;
  }
  const [, pending] = (await db.migrate.list({ migrationSource })) as [unknown[], unknown[]];
  if (pending.length)
    throw new StartupError(
      `the database has ${pending.length} pending migration(s): run \`npm run migrate\` (or the compose \`migrate\` service) first, or set MIGRATE_ON_START=on`,
    );
}

/** Stops what was started, last first; a failure is logged and the rest still stop. */
export async function stopInReverse(stoppers: Stopper[], logger: Logger): Promise<void> {
  for (const s of [...stoppers].reverse()) {
    try {
      await s.stop();
      logger.info(`stopped ${s.name}`);
    } catch (e) {
      logger.error({ err: e }, `stopping ${s.name} failed`);
    }
  }
}

/**
 * What both roles start with: Postgres and Temporal found (resolveServices), reached, and the
 * schema current; the pool and the client are stopped with the role.
 */
export async function connectServices(
  ctx: RoleContext,
  role: Role,
  poolMax = 20,
): Promise<{ db: Db; client: Client; databaseUrl: string; temporalAddress: string; embedded: string[] }> {
  const { config, logger, onStop, step } = ctx;
  step('finding Postgres and Temporal');
  const services = await resolveServices(config, role);
  step('connecting to Postgres');
  const db = await connectDb(services.databaseUrl, poolMax);
  onStop({ name: 'database pool', stop: () => db.destroy() });
  step('connecting to Temporal');
  const client = await connectTemporal(
    services.temporalAddress,
    config.temporal.namespace,
    config.temporal.codecKeys,
    temporalTlsOf(config, services.embedded),
  );
  onStop({ name: 'temporal client', stop: () => client.connection.close() });
  step('checking the migrations');
  await ensureMigrated(db, config, logger);
  return { ...services, db, client };
}

export async function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a role: config (exit 78 when invalid), `start`, then waits for SIGTERM/SIGINT and stops
 * what `start` registered in reverse order. Any start-up failure exits 1 with its message.
 */
export function runRole(role: Role, start: (ctx: RoleContext) => Promise<string[]>): void {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`talat ${role}: ${e.message}\n`);
      process.exit(78);
    }
    throw e;
  }
  const logger = createLogger(config.logLevel, createLogOutput({ buffered: config.logBuffered })).child({ role });
  logCrashes(logger);
  const stoppers: Stopper[] = [];
  let draining = false;
  let started = false;
  let stopping: Promise<never> | undefined;

  const stopAll = (code: number, why: string): Promise<never> =>
    (stopping ??= (async () => {
      draining = true;
      logger.info({ why }, 'stopping');
      const force = setTimeout(() => {
        logger.error(`drain took longer than SHUTDOWN_GRACE_S (${config.roles.shutdownGraceMs / 1000} s): exiting`);
        process.exit(1);
      }, config.roles.shutdownGraceMs);
      force.unref();
      await stopInReverse(stoppers, logger);
      logger.flush?.();
      process.exit(code);
    })());

  const fail = (err: unknown): Promise<never> => {
    const message = err instanceof StartupError ? err.message : ((err as Error)?.stack ?? String(err));
    process.stderr.write(`talat ${role}: ${started ? 'failed' : 'start-up failed'}: ${message}\n`);
    logger.error({ err }, `${role} failed`);
    return stopAll(1, 'failure');
  };

  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => void stopAll(0, sig));

  let step = 'loading the configuration';
  const ctx: RoleContext = {
    config,
    logger,
    onStop: (s) => stoppers.push(s),
    draining: () => draining,
    fail,
    step: (name) => {
      step = name;
      logger.debug(`start-up: ${name}`);
    },
  };
  // a start that hangs (a dependency that accepts and never answers) is a failed start: its
  // supervisor sees the exit and starts it again
  const bound = setTimeout(
    () =>
      void fail(
        new StartupError(
          `the start-up did not finish within STARTUP_TIMEOUT_S (${config.roles.startupTimeoutMs / 1000} s): it was ${step}`,
        ),
      ),
    config.roles.startupTimeoutMs,
  );
  start(ctx).then(
    (lines) => {
      clearTimeout(bound);
      started = true;
      logger.flush(); // the start-up's buffered lines before the banner
      if (!stopping)
        process.stdout.write(['', `Talat ${role} is running:`, ...lines.map((l) => `  ${l}`), ''].join('\n') + '\n');
    },
    (e) => {
      clearTimeout(bound);
      void fail(e);
    },
  );
}
