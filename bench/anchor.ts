/**
 * `npm run bench:anchor [-- --payments N --connections C --rounds K] [--cluster]`
 *
 * Talat against the minimal anchor (bench/minimal/app.ts) in one run on one stack: N QR payments
 * per side (default 200) at C concurrent (default 16), in K alternating rounds per side (default
 * 2), each created, paid by a signed callback and its webhook received (bench/anchor-rounds.ts).
 * Without --cluster: the dev-server topology of `npm start` (embedded Postgres, the Temporal dev
 * server on a SQLite file, both apps and their workers in this process).
 * With --cluster: the cluster of `npm run cluster` (four Temporal services on Postgres, one Talat
 * gateway and one worker process, the minimal app in a process of its own, 16 history shards).
 * On the dev server, pg_stat_statements (preloaded) adds each statement's calls and execution ms
 * per paid payment, reset before each round; on both, Temporal's persistence requests per paid
 * payment by operation (its services' metrics); `--cpu-profile DIR` writes the main thread's CPU
 * profile of each round there (summarised by `npx tsx bench/cpuprofile-summary.ts FILE`).
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startCluster, TEMPORAL_SERVICES, temporalPorts } from '../src/app/cluster';
import { bundleWorkflows } from '../src/app/worker';
import { loadConfig } from '../src/config';
import { createDb } from '../src/db/knex';
import { createApiKey } from '../src/http/middleware/api-key';
import { generatedKeysOf } from '../src/stack/keys';
import { connectClient } from '../src/temporal/client';
import {
  CALLBACK_SECRET,
  MINIMAL_HOOK_SECRET,
  perStatementOf,
  persistenceRequestsOf,
  runRounds,
  tableRowsOf,
  startDriver,
  type AnchorTarget,
  type PgCounters,
} from './anchor-rounds';
import { clusterPorts } from './cluster-support';
import { startMinimal } from './minimal/app';
import { cpuSnapshot, mainThreadProfiler, threadsCpuMs, treesMs } from './proc-cpu';
import { benchData, flagArg, headerLine, intArg, loadAverage, runBench, runBounded, say, type Stack } from './support';

const args = () => ({
  payments: intArg('--payments', 200, 5000),
  connections: intArg('--connections', 16, 256),
  rounds: intArg('--rounds', 2, 10),
});
/** `--cpu-profile DIR` (dev server): both apps share the main thread, each round is profiled alone */
const profileDir = () => {
  const i = process.argv.indexOf('--cpu-profile');
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SCOPES = ['payments:write', 'payments:read', 'webhooks:manage'];

/** pg_stat_database over `databases` and the server's WAL position */
async function pgCounters(stats: PgClient, databases: string[]): Promise<PgCounters> {
  const r = await stats.query(
    `SELECT sum(xact_commit + xact_rollback)::bigint AS xacts, sum(tup_inserted + tup_updated + tup_deleted)::bigint AS rows,
            pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal
       FROM pg_stat_database WHERE datname = ANY($1)`,
    [databases],
  );
  const row = r.rows[0] as { xacts: string; rows: string; wal: string };
  return { xacts: Number(row.xacts), rows: Number(row.rows), walBytes: Number(row.wal) };
}

async function registerHook(base: string, key: string, url: string): Promise<void> {
  const reg = await fetch(`${base}/webhooks/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ url, publicPayments: true }),
  });
  if (reg.status !== 201) throw new Error(`webhook endpoint: ${reg.status} ${await reg.text()}`);
}

type Client = Awaited<ReturnType<typeof connectClient>>;
const historyOf = (client: Client) => async (_side: unknown, workflowId: string) => {
  const { events: e } = await client.workflow.getHandle(workflowId).fetchHistory();
  return `${e?.length ?? 0} events, ${(e ?? []).filter((x) => x.workflowTaskCompletedEventAttributes).length} workflow tasks`;
};

/** The dev-server topology of `npm start`, both apps in this process. */
function devServer(): void {
  runBench(
    `bench-anchor-${process.pid}`,
    {
      taskQueue: 'bench-anchor',
      scopes: SCOPES,
      temporalFile: true,
      statStatements: true,
      env: { CALLBACK_MAX_AGE_S: '3600', QR_EXPIRY_S: '600', WEBHOOK_ALLOW_LOOPBACK: 'on' },
    },
    args,
    async (opts, stack: Stack) => {
      const { base, key, config, db } = stack;
      const load = loadAverage();
      const driver = await startDriver();
      await registerHook(base, key, driver.hookUrl);
      say('starting the minimal app (bundling its workflow) on the same Postgres and Temporal');
      const minimal = await startMinimal({
        databaseUrl: config.database.url!,
        temporalAddress: stack.temporal.address,
        taskQueue: 'bench-anchor-minimal',
        callbackSecret: CALLBACK_SECRET,
        webhook: { url: driver.hookUrl, secret: MINIMAL_HOOK_SECRET },
      });
      let talatStatements = 0;
      db.on('query', () => talatStatements++);
      const stats = new PgClient({ connectionString: config.database.url! });
      await stats.connect();
      const target: AnchorTarget = {
        talat: {
          base,
          key,
          accountId: stack.keyId,
          callbackSecret: config.callbacks.providers.QR.secret,
          identitySecret: config.identity.secret,
        },
        minimal: { base: minimal.base, callbackSecret: CALLBACK_SECRET },
        statements: async (side) => (side === 'talat' ? talatStatements : minimal.statements()),
        cpu: () => {
          const s = cpuSnapshot(path.join(stack.dataDir, 'pg'));
          const u = process.cpuUsage();
          return { app: (u.user + u.system) / 1000, postgres: s.postgres, temporal: s.temporal };
        },
        threads: threadsCpuMs,
        pg: () => pgCounters(stats, ['talat', stats.database ?? 'talat']),
        perStatement: await perStatementOf(stats),
        tables: tableRowsOf(stats),
        history: historyOf(stack.temporal.client),
        temporalOps: persistenceRequestsOf([stack.temporal.metricsPort]),
        profile: profileDir() ? mainThreadProfiler(profileDir()!) : undefined,
      };
      const lines = await runRounds(target, driver, opts, [
        headerLine('anchor (Talat against the minimal app)', opts.connections, load),
        "dev-server topology (npm start: SQLite-file Temporal dev server, embedded Postgres, workers in the app's process)",
      ]);
      process.stdout.write(`${lines.join('\n')}\n`);
      driver.stop();
      await stats.end();
      await minimal.stop();
    },
    20, // as the cluster's: a run of ten rounds of 100 per side can take longer than 5 min
  );
}

/** The cluster of `npm run cluster`: Talat's gateway and worker, the minimal app, each a process. */
function cluster(): void {
  const opts = args();
  const { dataDir, stops, stopAll } = benchData(`bench-anchor-cluster-${process.pid}`);
  runBounded(20, stopAll, async () => {
    const load = loadAverage();
    // one set of generated keys for the roles and for this process's signed callbacks
    const keys = generatedKeysOf(dataDir);
    const env: Record<string, string> = {
      ...keys,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      TEMPORAL_TASK_QUEUE: 'bench-anchor',
      SIMULATORS: 'off',
      SMTP_URL: 'smtp://127.0.0.1:9',
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_PER_SECOND: '10000000',
      CALLBACK_MAX_AGE_S: '3600',
      QR_EXPIRY_S: '600',
      WEBHOOK_ALLOW_LOOPBACK: 'on',
    };
    const config = loadConfig({ ...env, DATA_DIR: dataDir });
    say('bundling the workflows once');
    const bundle = path.join(dataDir, 'workflow-bundle.js');
    (await import('node:fs')).writeFileSync(bundle, await bundleWorkflows());
    say('starting the cluster: Postgres, frontend, history, matching, worker services, a gateway and a worker');
    const ports = await clusterPorts(1, 1);
    const c = await startCluster({
      dataDir: path.join(dataDir, 'cluster'),
      ports,
      namespace: 'default',
      retentionDays: 1,
      historyShards: 16,
      roleEnv: env,
      workflowBundle: bundle,
      log: say,
    });
    stops.push(() => c.stop());
    const db = createDb(c.databaseUrl, { poolMax: 1 });
    const { key, id: keyId } = await createApiKey(db, { name: 'bench', scopes: SCOPES, mode: 'sandbox' });
    await db.destroy();
    const driver = await startDriver();
    stops.push(async () => driver.stop());
    await registerHook(c.gatewayUrls[0], key, driver.hookUrl);

    say('starting the minimal app in a process of its own');
    const child = fork(
      path.join(__dirname, 'minimal', 'main.ts'),
      [
        JSON.stringify({
          databaseUrl: c.databaseUrl,
          temporalAddress: c.temporalAddress,
          taskQueue: 'bench-anchor-minimal',
          callbackSecret: CALLBACK_SECRET,
          webhook: { url: driver.hookUrl, secret: MINIMAL_HOOK_SECRET },
        }),
      ],
      { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    stops.push(async () => child.kill('SIGTERM'));
    const ask = <T>(msg: object | undefined, type: string) =>
      new Promise<T>((resolve, reject) => {
        const on = (m: { type: string } & T) => {
          if (m.type !== type) return;
          child.off('message', on);
          resolve(m);
        };
        child.on('message', on);
        child.once('exit', (code) => reject(new Error(`the minimal app exited (${code})`)));
        if (msg) child.send(msg);
      });
    const { base: minimalBase } = await ask<{ base: string }>(undefined, 'ready');

    const stats = new PgClient({ connectionString: c.pg.adminUrl });
    await stats.connect();
    stops.push(() => stats.end());
    const client = await connectClient(c.temporalAddress, 'default', { codecKeys: config.temporal.codecKeys });
    stops.push(() => client.connection.close());
    const pids = () => ({
      gateway: c.gateways[0].supervisor.pid(),
      worker: c.workers[0].supervisor.pid(),
      minimal: child.pid,
      frontend: c.temporal.frontend.supervisor.pid(),
      history: c.temporal.history.supervisor.pid(),
      matching: c.temporal.matching.supervisor.pid(),
      'temporal worker': c.temporal.worker.supervisor.pid(),
      postgres: c.pg.pid,
    });
    const target: AnchorTarget = {
      talat: {
        base: c.gatewayUrls[0],
        key,
        accountId: keyId,
        callbackSecret: config.callbacks.providers.QR.secret,
        identitySecret: config.identity.secret,
      },
      minimal: { base: minimalBase, callbackSecret: CALLBACK_SECRET },
      cpu: () => {
        const t = treesMs(pids());
        return {
          app: t.gateway + t.worker + t.minimal,
          postgres: t.postgres,
          temporal: t.frontend + t.history + t.matching + t['temporal worker'],
        };
      },
      pg: () => pgCounters(stats, ['talat', 'temporal', 'temporal_visibility']),
      history: historyOf(client),
      temporalOps: persistenceRequestsOf(TEMPORAL_SERVICES.map((s) => temporalPorts(ports.temporalBase, s).metrics)),
    };
    const lines = await runRounds(target, driver, opts, [
      headerLine('anchor (Talat against the minimal app)', opts.connections, load),
      'cluster topology (npm run cluster: frontend, history, matching and worker services on Postgres, 16 history shards; one Talat gateway and one worker process; the minimal app in one process)',
    ]);
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

if (flagArg('--cluster')) cluster();
else devServer();
