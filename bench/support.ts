/**
 * What the API benchmarks (bench/payments.ts, bench/callbacks.ts) share: their command-line
 * options, the stack each one starts for itself and stops afterwards, and the lines they print.
 *
 * The stack is self-contained and loopback only: its own Postgres cluster (under
 * .data/<name>, removed afterwards) and an in-memory Temporal dev server on free ports, a worker
 * and the gateway on 127.0.0.1, and a sandbox API key. A run is bounded: a 5-minute guard stops
 * everything, as do SIGINT and SIGTERM.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type autocannon from 'autocannon';
import pino from 'pino';
import { createActivities } from '../activities';
import { sandboxProviders } from '../src/simulators/providers';
import { loadConfig, type Config } from '../src/config';
import { createDb, migrateLatest, type Db } from '../src/db/knex';
import { createApp } from '../src/app/app';
import { createApiKey } from '../src/http/middleware/api-key';
import { startEmbeddedPostgres } from '../src/stack/postgres';
import { freePort, startEmbeddedTemporal } from '../src/stack/temporal';
import { connectClient, type TemporalDeps } from '../src/temporal/client';
import { installTemporalRuntime } from '../src/temporal/runtime';
import { scopedPaymentId } from '../src/ids';
import { paymentWorkflowIdOf } from '../src/payments';
import { QUEUE_KINDS, type QueueKind } from '../src/domain/temporal';
import { createQueueWorkers } from '../src/app/worker';

/** A sandbox QR payment's id and workflow id, as the gateway derives them for an account's order. */
export function benchPaymentIds(identitySecret: string, accountId: string, orderId: string) {
  const paymentId = scopedPaymentId(identitySecret, accountId, 'sandbox', orderId);
  return { paymentId, workflowId: paymentWorkflowIdOf(paymentId) };
}

export const say = (m: string) => process.stderr.write(`[bench] ${m}\n`);
export const ms = (n: number) => `${n.toFixed(1)} ms`;

/** The whole-number option `flag N` of the command line, from 1 to `max`; `dflt` when absent. */
export function intArg(flag: string, dflt: number, max: number): number {
  const a = process.argv.slice(2);
  const i = a.indexOf(flag);
  const v = i >= 0 ? Number(a[i + 1]) : dflt;
  if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`${flag} must be an integer from 1 to ${max}`);
  return v;
}

/** The option `flag VALUE` of the command line, one of `choices`; the first of them when absent. */
export function choiceArg<C extends string>(flag: string, choices: readonly [C, ...C[]]): C {
  const a = process.argv.slice(2);
  const i = a.indexOf(flag);
  const v = i >= 0 ? a[i + 1] : choices[0];
  if (!choices.includes(v as C)) throw new Error(`${flag} must be one of ${choices.join(', ')}`);
  return v as C;
}

/** Whether the command line has the switch `flag`. */
export const flagArg = (flag: string) => process.argv.slice(2).includes(flag);

export { mainThreadCpuMs } from './proc-cpu';

/** The 1-minute load average, as printed in the header line. */
export const loadAverage = () => os.loadavg()[0].toFixed(1);

/** The header line of a benchmark's figures: the machine, Node, the connections and the load before the run. */
export function headerLine(title: string, connections: number, load: string): string {
  const cpus = os.cpus();
  return `Talat ${title} benchmark — ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}, ${connections} connections, loopback, load average before ${load}`;
}

/** One line of figures: `rate` `unit`, p50 and p99 latency and the counts of an autocannon run. */
export function resultLine(name: string, width: number, r: autocannon.Result, rate: number, unit: string): string {
  return (
    `${name.padEnd(width)} ${rate.toFixed(1).padStart(8)} ${unit.padEnd(12)} p50 ${ms(r.latency.p50).padStart(9)}  p99 ${ms(r.latency.p99).padStart(9)}  ` +
    `(${r['2xx']} ok, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${r.duration.toFixed(1)} s)`
  );
}

export interface Stack {
  /** .data/<name>: the benchmark's own directory, removed afterwards */
  dataDir: string;
  config: Config;
  db: Db;
  /** the gateway, http://127.0.0.1:<port> */
  base: string;
  /** the sandbox API key */
  key: string;
  /** its id, its account's id too (a new key is an account of its own) */
  keyId: string;
  /** stops the workers started with the stack (a second call waits for the first) */
  stopWorker: () => Promise<void>;
  /** starts more workers on the queues (default all three); stopped with the stack */
  startWorker: (queues?: readonly QueueKind[]) => Promise<() => Promise<void>>;
  /** the Temporal server the stack runs on, and a client of it */
  temporal: {
    address: string;
    client: Awaited<ReturnType<typeof connectClient>>;
    /** the dev server's Prometheus metrics port (bench/engine.ts counts its visibility writes there) */
    metricsPort: number;
    /** the worker's (Core's) Prometheus metrics port: its slots, pollers and sticky cache; undefined without a worker */
    workerMetricsPort?: number;
  };
  /** starts another dev server (stopped with the stack), e.g. with default SQLite settings for comparison */
  startTemporal: (opts: { dbFile?: string; sqlitePragmas?: boolean }) => Promise<string>;
}

export interface StackOptions {
  /** the payments task queue of the workers and the gateway (the others are named after it) */
  taskQueue: string;
  /** the API key's scopes */
  scopes: string[];
  /** settings added to the benchmark's configuration */
  env?: Record<string, string>;
  /** run Temporal as `npm start` does (SQLite file in WAL mode) rather than in memory */
  temporalFile?: boolean;
  /** preload pg_stat_statements in the benchmark's Postgres (when it ships it): per-statement calls and time */
  statStatements?: boolean;
  /** false: no worker in this process, as the gateway role (`npm run gateway`) runs (default true: the workers run here, as in `npm start`) */
  worker?: boolean;
}

/**
 * A benchmark's own directory .data/<name> and its list of stops: stopAll (once, however often
 * called) runs them last first, then removes the directory.
 */
export function benchData(name: string): {
  dataDir: string;
  stops: (() => Promise<unknown>)[];
  stopAll: () => Promise<void>;
} {
  const dataDir = path.join(path.resolve(__dirname, '..'), '.data', name);
  const stops: (() => Promise<unknown>)[] = [];
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const s of stops.reverse()) await s().catch((e) => say(`stop failed: ${(e as Error).message}`));
      fs.rmSync(dataDir, { recursive: true, force: true });
    })());
  return { dataDir, stops, stopAll };
}

/**
 * Runs a benchmark: parses its options (`args`), starts the stack, runs `measure`, then stops
 * everything, exiting 0 (1 when it failed or the 5-minute guard fired, 130 on SIGINT/SIGTERM).
 */
export function runBench<O>(
  name: string,
  stackOptions: StackOptions,
  args: () => O,
  measure: (opts: O, stack: Stack) => Promise<void>,
  /** the run's time bound (runBounded) */
  minutes = 5,
): void {
  const { dataDir, stops, stopAll } = benchData(name);

  async function startStack({
    taskQueue,
    scopes,
    env,
    temporalFile,
    statStatements,
    worker = true,
  }: StackOptions): Promise<Stack> {
    say('starting Postgres and the Temporal dev server (own, on free ports)');
    fs.mkdirSync(dataDir, { recursive: true });
    const pg = await startEmbeddedPostgres({
      dataDir: path.join(dataDir, 'pg'),
      port: await freePort(),
      database: 'talat_bench',
      statStatements,
    });
    stops.push(() => pg.stop());
    const startServer = async (o: { dbFile?: string; sqlitePragmas?: boolean }) => {
      const t = await startEmbeddedTemporal({ port: await freePort(), namespace: 'default', ...o });
      stops.push(() => t.stop());
      return t;
    };
    const startTemporal = async (o: { dbFile?: string; sqlitePragmas?: boolean }) => (await startServer(o)).address;
    const devServer = await startServer(temporalFile ? { dbFile: path.join(dataDir, 'temporal.db') } : {});
    const temporal = { address: devServer.address, metricsPort: devServer.metricsPort };

    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: temporal.address,
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_PER_SECOND: '10000000',
      ...env,
    });
    // errors only, on stderr: a 500 or a failed activity under load shows its cause beside the figures
    const logger = pino({ level: process.env.BENCH_LOG_LEVEL ?? 'error' }, pino.destination({ dest: 2, sync: true }));
    const db = createDb(pg.url, { poolMax: 20 });
    stops.push(() => db.destroy());
    await migrateLatest(db);
    const client = await connectClient(temporal.address, 'default', { codecKeys: config.temporal.codecKeys });
    stops.push(() => client.connection.close());

    const workerMetricsPort = worker ? await freePort() : undefined;
    if (worker) {
      say('bundling the workflows and starting the workers (payments, webhooks and background queues)');
      installTemporalRuntime(logger, (process.env.BENCH_TEMPORAL_LOG as 'WARN') ?? 'ERROR', {
        metricsPort: workerMetricsPort,
      });
    } else say('no worker in this process (as the gateway role runs)');
    const temporalDeps: TemporalDeps = { client, taskQueue };
    const startWorker = async (queues: readonly QueueKind[] = QUEUE_KINDS) => {
      const workers = await createQueueWorkers({
        address: temporal.address,
        namespace: 'default',
        paymentsQueue: taskQueue,
        queues,
        codecKeys: config.temporal.codecKeys,
        activities: createActivities({ db, config, logger, sandbox: sandboxProviders({ db }) }),
      });
      const run = workers.run();
      run.catch(() => undefined);
      const stop = () => workers.stop();
      stops.push(stop);
      return stop;
    };
    const stopWorker = worker ? await startWorker() : async () => undefined;

    const app = createApp({ config, db, temporal: temporalDeps, logger });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(() => new Promise((resolve) => server.close(resolve)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { key, id: keyId } = await createApiKey(db, { name: 'bench', scopes, mode: 'sandbox' });
    return {
      dataDir,
      config,
      db,
      base,
      key,
      keyId,
      stopWorker,
      startWorker,
      temporal: { address: temporal.address, client, metricsPort: temporal.metricsPort, workerMetricsPort },
      startTemporal,
    };
  }

  async function main() {
    const opts = args();
    try {
      await measure(opts, await startStack(stackOptions));
    } finally {
      say('stopping');
      await stopAll();
    }
  }

  runBounded(minutes, stopAll, main);
}

/**
 * Runs a benchmark's `main` with a guard of `minutes`: SIGINT/SIGTERM stop everything and exit
 * 130, the guard exits 1, a failure is printed and exits 1, success exits 0 (`stopAll` first).
 */
export function runBounded(minutes: number, stopAll: () => Promise<void>, main: () => Promise<void>): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.on(sig, () => void stopAll().finally(() => process.exit(130)));
  const guard = setTimeout(() => {
    say(`time limit (${minutes} min) reached: stopping`);
    void stopAll().finally(() => process.exit(1));
  }, minutes * 60_000);
  guard.unref();
  main().then(
    () => stopAll().then(() => process.exit(0)),
    (e) => {
      say(`failed: ${(e as Error).stack ?? e}`);
      void stopAll().finally(() => process.exit(1));
    },
  );
}

/**
 * `--profile DIR` on a benchmark's command line: profiles the main thread (V8's sampling CPU
 * profiler, through node:inspector) while `fn` runs and writes DIR/<label>.cpuprofile, to be read
 * with `npx tsx bench/cpuprofile-summary.ts`. Without the option, just runs `fn`.
 */
export async function profiled<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const a = process.argv.slice(2);
  const dir = a.includes('--profile') ? a[a.indexOf('--profile') + 1] : undefined;
  if (!dir) return fn();
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${label.replace(/[^A-Za-z0-9._-]+/g, '_')}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    say(`profile of ${label}: ${file}`);
    session.disconnect();
  }
}
