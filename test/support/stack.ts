/**
 * A Talat for one test file on the real services of global-setup: a database of this jest
 * worker's own (migrated and seeded once), a Temporal client, workers on task queues of this
 * file's own (its payments queue and the webhooks and background queues named after it; `queues`
 * chooses which are polled, default all), and the Koa app. close() drains the workers and closes
 * every connection.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { createActivities, type Activities } from '../../activities';
import { sandboxProviders } from '../../src/simulators/providers';
import { loadConfig, type Config } from '../../src/config';
import { generatedKeysOf } from '../../src/stack/keys';
import { createDb, migrateLatest, type Db } from '../../src/db/knex';
import { isCatalogEmpty, seedCatalog } from '../../src/db/seed';
import { createApp, type GatewayApp } from '../../src/app/app';
import { createDatabaseIfMissing } from '../../src/stack/postgres';
import { connectClient } from '../../src/temporal/client';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { clientInterceptors } from '../../src/temporal/closed-channel';
import { signResult } from '../../src/result-proof';
import type { PaymentResult } from '../../src/payments';
import type { QueueKind } from '../../src/domain/temporal';
import { newId } from '../../src/ids';
import { createLogger } from '../../src/logger';
import { createQueueWorkers, type QueueWorkers } from '../../src/app/worker';
import { revocationFeed } from '../../src/http/middleware/key-revocations';

export interface TestStack {
  /** idle(): the callbacks' receipts finished after their answers (read receipts after it) */
  app: GatewayApp;
  db: Db;
  client: Client;
  config: Config;
  /** the payments queue; taskQueueOf gives the others */
  taskQueue: string;
  workers?: QueueWorkers;
  activities: Activities;
  close(): Promise<void>;
}

export const testLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export function testDatabaseUrl(name: string): string {
  const admin = new URL(process.env.TALAT_TEST_PG_ADMIN_URL!);
  admin.pathname = `/${name}`;
  return admin.toString();
}

/** The database `name` of this jest worker, created when missing, migrated and seeded. */
async function migratedDb(name: string): Promise<Db> {
  const full = `${name}_w${process.env.JEST_WORKER_ID ?? '1'}`;
  await createDatabaseIfMissing(process.env.TALAT_TEST_PG_ADMIN_URL!, full);
  const db = createDb(testDatabaseUrl(full), { poolMax: 20 });
  await migrateLatest(db);
  if (await isCatalogEmpty(db)) await seedCatalog(db);
  return db;
}

let migrated: Promise<Db> | undefined;
/** This jest worker's database, shared by its test files one after another. */
export function workerDb(): Promise<Db> {
  migrated ??= migratedDb('talat_test');
  return migrated;
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  // the caches that trade freshness for speed are off: tests change keys and data and read at once
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: '.data',
    API_KEY_CACHE_MS: '0',
    STOREFRONT_VERSION_CACHE_MS: '0',
    // the tests' webhook receivers listen on 127.0.0.1: the explicit development allowance (refused in production)
    ...(overrides.NODE_ENV === 'production' ? {} : { WEBHOOK_ALLOW_LOOPBACK: 'on' }),
    // one set of keys for every stack of the run, whatever DATA_DIR a test gives (.data/keys.env)
    ...(overrides.NODE_ENV === 'production' ? {} : generatedKeysOf('.data')),
    ...overrides,
  });
}

export async function createTestStack(
  opts: {
    worker?: boolean;
    queues?: QueueKind[];
    env?: Record<string, string>;
    logger?: pino.Logger;
    /** Temporal's frontend for the client and the workers (default: the tests' dev server) */
    temporalAddress?: string;
    /** a database of the file's own (for a test that scans whole tables), not the worker's */
    database?: string;
  } = {},
): Promise<TestStack> {
  const logger = opts.logger ?? testLogger;
  const db = opts.database ? await migratedDb(opts.database) : await workerDb();
  const config = testConfig(opts.env);
  const address = opts.temporalAddress ?? process.env.TALAT_TEST_TEMPORAL_ADDRESS!;
  const client = await connectClient(address, 'default', { codecKeys: config.temporal.codecKeys });
  const taskQueue = `test-${randomUUID()}`;
  const activities = createActivities({ db, config, logger, sandbox: sandboxProviders({ db }) });
  let workers: QueueWorkers | undefined;
  let workerRun: Promise<void> | undefined;
  if (opts.worker !== false) {
    installTemporalRuntime(testLogger, 'WARN');
    workers = await createQueueWorkers({
      address,
      namespace: 'default',
      paymentsQueue: taskQueue,
      queues: opts.queues ?? ['payments', 'webhooks', 'background'],
      activities,
      workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
      shutdownGraceTime: '1 second',
      codecKeys: config.temporal.codecKeys,
    });
    workerRun = workers.run();
    workerRun.catch(() => undefined); // rethrown by close()
  }
  const app = createApp({ config, db, temporal: { client, taskQueue }, logger });
  return {
    app,
    db,
    client,
    config,
    taskQueue,
    workers,
    activities,
    async close() {
      await app.stop();
      await workers?.stop();
      await workerRun;
      await client.connection.close();
      if (!opts.database) migrated = undefined;
      await db.destroy();
    },
  };
}

/** Fresh ids per test so workflows never collide. */
/** The SQL statements `fn` sends to Postgres through `db` (knex's query events), and its result. */
export async function statementsOf<T>(db: Db, fn: () => Promise<T>): Promise<{ sql: string[]; result: T }> {
  const sql: string[] = [];
  const note = (q: { sql: string }) => sql.push(q.sql);
  db.on('query', note);
  try {
    return { sql, result: await fn() };
  } finally {
    db.off('query', note);
  }
}

export const uniq = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/**
 * Runs `change` (a revocation or a link: its notice tells every gateway's key cache to forget)
 * and waits for that notice to reach `db`'s revocation feed (its generation moves on), for at
 * most 2 s: its result and the ms the notice took after it, Infinity when none came.
 */
export async function afterRevocationNotice<T>(db: Db, change: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const feed = revocationFeed(db);
  const before = feed.generation();
  const result = await change();
  const started = Date.now();
  while (feed.generation() === before && Date.now() - started < 2000) await new Promise((r) => setTimeout(r, 5));
  return { result, ms: feed.generation() === before ? Infinity : Date.now() - started };
}

/** Poll `fn` until it returns a value (not undefined, null or false), or fail after `ms`. */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  ms = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== null && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A paymentResult as the callback processor signals it: with a receipt id and its proof
 * (RESULT_SIGNING_KEY of `config`). Without these the payment workflow settles nothing.
 */
export function provenResult(
  config: Config,
  paymentId: string,
  result: Omit<PaymentResult, 'receiptId' | 'proof'>,
  receiptId = newId('evt'),
): PaymentResult {
  return {
    ...result,
    receiptId,
    proof: signResult(config.results.signingKey, { receiptId, paymentId, status: result.status }),
  };
}

/** A pino logger whose lines (parsed) are kept in `lines`, for tests that check what was logged. */
export function capturingLogger(level = 'info'): {
  logger: pino.Logger;
  lines: Record<string, unknown>[];
  raw: string[];
} {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  // the production logger (its redaction included), writing here
  const logger = createLogger(level, {
    write(line: string) {
      raw.push(line);
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, lines, raw };
}

/** What anyone who reaches the Temporal frontend has: a plain client, no codec, no proofs. */
export async function outsiderTemporalClient(): Promise<Client> {
  const connection = await Connection.connect({
    address: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    interceptors: clientInterceptors(), // plain, but closed by the tests as Talat's are
  });
  return new Client({ connection, namespace: 'default' });
}
