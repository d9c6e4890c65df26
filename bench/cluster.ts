/**
 * `npm run bench:cluster [-- --levels 4,8,16 --seconds S --cluster-only --wal]`
 *
 * The cost of a payment on the two engines, in one run on this machine (docs/cluster.md): the
 * Temporal dev server of `npm start` (one process, SQLite in WAL mode) and the cluster of `npm run
 * cluster` (src/app/cluster.ts: frontend, history, matching and worker services on Postgres),
 * each with one gateway and one worker process, one after the other. For each engine and each
 * concurrency level, S seconds (default 20) of closed-loop QR payments (create, then the provider's
 * signed success callback) straight to the gateway, then the wait until every one is paid:
 *  - paid payments/s and the p50/p99 of create + callback (the answer the shop and provider see);
 *  - CPU ms per paid payment of each process (/proc): gateway, worker, each Temporal service (or
 *    the dev server), Postgres (postmaster and backends);
 *  - Postgres transactions, rows written (inserted + updated + deleted) and WAL bytes per paid
 *    payment, from pg_stat_database and pg_current_wal_lsn(), and the tables written most.
 * Loopback only, bounded (a 15-minute guard), data under .data/bench-cluster-<pid>, removed after.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { loadConfig } from '../src/config';
import { createDb, migrateLatest } from '../src/db/knex';
import { createApiKey } from '../src/http/middleware/api-key';
import { buildCallbacks } from '../src/simulators/callbacks';
import { startCluster } from '../src/app/cluster';
import { generatedKeysOf } from '../src/stack/keys';
import { startEmbeddedPostgres } from '../src/stack/postgres';
import { freePort, startEmbeddedTemporal, stopChild } from '../src/stack/temporal';
import { bundleWorkflows } from '../src/app/worker';
import { clusterPorts } from './cluster-support';
import { treesMs } from './proc-cpu';
import { percentile } from './steady';
import { benchData, intArg, loadAverage, runBounded, say } from './support';
import { lsnBytes, walByRelation } from './wal-by-relation';

const argv = process.argv.slice(2);
const levelsArg = argv.includes('--levels') ? argv[argv.indexOf('--levels') + 1] : '4,8,16';
const levels = levelsArg.split(',').map(Number);
if (!levels.every((n) => Number.isInteger(n) && n >= 1 && n <= 64)) throw new Error('--levels: whole numbers 1-64');
const seconds = intArg('--seconds', 20, 120);
/** `--cluster-only`: skip the dev server's phase (Temporal's WAL per payment is the cluster's figure) */
const clusterOnly = argv.includes('--cluster-only');
/** `--wal`: each level's WAL by relation, from pg_waldump (bench/wal-by-relation.ts) */
const walDetail = argv.includes('--wal');
const QUEUE = 'bench-cluster';
const ROOT = path.resolve(__dirname, '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { dataDir, stops, stopAll } = benchData(`bench-cluster-${process.pid}`);
const env: Record<string, string> = {
  // one set of generated keys for the roles and for this process's signed callbacks
  ...generatedKeysOf(dataDir),
  NODE_ENV: 'test',
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  TEMPORAL_TASK_QUEUE: QUEUE,
  SIMULATORS: 'off',
  SMTP_URL: 'smtp://127.0.0.1:9',
  RATE_LIMIT_PER_MINUTE: '100000000',
  RATE_LIMIT_PER_SECOND: '10000000',
  CALLBACK_MAX_AGE_S: '3600',
  QR_EXPIRY_S: '600',
};
const config = loadConfig(env);

interface Engine {
  name: string;
  gateway: string;
  databaseUrl: string;
  pgAdminUrl: string;
  /** the processes whose CPU is counted */
  pids: () => Record<string, number | undefined>;
}

interface Level {
  concurrency: number;
  paid: number;
  offered: number;
  paidPerS: number;
  p50: number;
  p99: number;
  cpu: Record<string, number>;
  xacts: number;
  rows: number;
  walBytes: number;
  walLines: string[];
  topTables: string;
}

/** One gateway or worker from the sources (scripts/run.cjs), its banner awaited. */
async function spawnRole(kind: 'gateway' | 'worker', roleEnv: Record<string, string>, log: string) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts', 'run.cjs'), `roles/${kind}`], {
    cwd: ROOT,
    env: { ...process.env, ...roleEnv, [kind === 'gateway' ? 'PORT' : 'WORKER_HTTP_PORT']: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    fs.appendFileSync(log, d);
    out += d.toString();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  for (let i = 0; !out.includes(`Talat ${kind} is running`); i++) {
    if (child.exitCode !== null || i > 720) {
      child.kill('SIGKILL');
      throw new Error(`${kind} did not start:\n${out.slice(-3000)}`);
    }
    await sleep(250);
  }
  return { child, url: `http://127.0.0.1:${port}` };
}

async function pgStats(
  adminUrl: string,
): Promise<{ xacts: number; rows: number; lsn: string; tables: Map<string, number> }> {
  const c = new PgClient({ connectionString: adminUrl });
  await c.connect();
  try {
    const db = await c.query(
      "SELECT sum(xact_commit + xact_rollback)::bigint AS x, sum(tup_inserted + tup_updated + tup_deleted)::bigint AS r FROM pg_stat_database WHERE datname IN ('talat', 'temporal', 'temporal_visibility')",
    );
    const lsn = await c.query('SELECT pg_current_wal_lsn()::text AS l');
    const tables = new Map<string, number>();
    for (const name of ['talat', 'temporal', 'temporal_visibility']) {
      const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!exists.rowCount) continue;
      const t = new PgClient({ connectionString: adminUrl.replace(/\/postgres$/, `/${name}`) });
      await t.connect();
      const r = await t.query(
        'SELECT relname, (n_tup_ins + n_tup_upd + n_tup_del)::bigint AS w FROM pg_stat_user_tables',
      );
      await t.end();
      for (const row of r.rows as { relname: string; w: string }[]) tables.set(`${name}.${row.relname}`, Number(row.w));
    }
    return { xacts: Number(db.rows[0].x), rows: Number(db.rows[0].r), lsn: lsn.rows[0].l as string, tables };
  } finally {
    await c.end();
  }
}

/** `concurrency` loops of create + success callback for `seconds`, then the wait until all are paid. */
async function measureLevel(e: Engine, key: string, concurrency: number, tag: string): Promise<Level> {
  const db = createDb(e.databaseUrl, { poolMax: 2 });
  try {
    const before = { cpu: treesMs(e.pids()), pg: await pgStats(e.pgAdminUrl) };
    const latencies: number[] = [];
    const ids: string[] = [];
    let n = 0;
    const t0 = Date.now();
    const end = t0 + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < end) {
          const orderId = `${tag}-${n++}`;
          const start = performance.now();
          const res = await fetch(`${e.gateway}/qrpayment`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            body: JSON.stringify({ orderId, userId: 'u-bench', amount: 25, customerId: 'c-bench' }),
          });
          const body = (await res.json()) as { body: { paymentId: string } };
          if (res.status !== 200) throw new Error(`POST /qrpayment ${res.status}: ${JSON.stringify(body)}`);
          const row = {
            id: body.body.paymentId,
            order_id: orderId,
            user_id: 'u-bench',
            method: 'qr',
            amount_satang: '2500',
            provider_ref: null,
          };
          const post = buildCallbacks(config, row, 'success')[0];
          const cb = await fetch(`${e.gateway}${post.path}`, {
            method: 'POST',
            headers: { 'content-type': post.contentType, ...post.headers },
            body: post.body,
          });
          await cb.arrayBuffer();
          if (cb.status >= 300) throw new Error(`callback ${cb.status}`);
          latencies.push(performance.now() - start);
          ids.push(body.body.paymentId);
        }
      }),
    );
    // every payment paid (bounded): the window ends when the last one is
    let paid = 0;
    for (let i = 0; i < 120; i++) {
      const [{ count }] = await db('payments')
        .whereIn('id', ids)
        .where({ status: 'paid' })
        .count<{ count: string }[]>('id as count');
      paid = Number(count);
      if (paid === ids.length) break;
      await sleep(500);
    }
    const wall = (Date.now() - t0) / 1000;
    const cpuAfter = treesMs(e.pids());
    await sleep(1500); // Postgres publishes its statistics at most once a second
    const after = await pgStats(e.pgAdminUrl);
    const per = (x: number) => x / Math.max(1, paid);
    const tableDeltas = [...after.tables]
      .map(([t, w]) => [t, w - (before.pg.tables.get(t) ?? 0)] as const)
      .filter(([, d]) => d > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([t, d]) => `${t} ${per(d).toFixed(1)}`)
      .join(', ');
    return {
      concurrency,
      paid,
      offered: ids.length,
      paidPerS: paid / wall,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpu: Object.fromEntries(Object.keys(cpuAfter).map((k) => [k, per(cpuAfter[k] - before.cpu[k])])),
      xacts: per(after.xacts - before.pg.xacts),
      rows: per(after.rows - before.pg.rows),
      walBytes: per(lsnBytes(after.lsn) - lsnBytes(before.pg.lsn)),
      topTables: tableDeltas,
      walLines: walDetail ? await walByRelation(e.pgAdminUrl, before.pg.lsn, after.lsn, paid) : [],
    };
  } finally {
    await db.destroy();
  }
}

function report(name: string, levelsOut: Level[]): string[] {
  const lines = [`${name}`];
  for (const l of levelsOut) {
    const cpu = Object.entries(l.cpu)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join(', ');
    const total = Object.values(l.cpu).reduce((a, b) => a + b, 0);
    lines.push(
      `  ${String(l.concurrency).padStart(2)} concurrent: ${l.paidPerS.toFixed(1).padStart(5)} paid/s (${l.paid} of ${l.offered}), create+callback p50 ${l.p50.toFixed(0)} ms p99 ${l.p99.toFixed(0)} ms`,
      `      CPU ms per paid payment: ${cpu}; total ${total.toFixed(1)}`,
      `      Postgres per paid payment: ${l.xacts.toFixed(1)} transactions, ${l.rows.toFixed(1)} rows written, ${(l.walBytes / 1024).toFixed(1)} KiB WAL; most written: ${l.topTables}`,
      ...l.walLines,
    );
  }
  return lines;
}

runBounded(15, stopAll, async () => {
  const loadBefore = loadAverage();
  fs.mkdirSync(dataDir, { recursive: true });
  const logFile = path.join(dataDir, 'roles.log');
  say('bundling the workflows once');
  const bundlePath = path.join(dataDir, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, await bundleWorkflows());
  const results: string[] = [];

  const run = async (e: Engine) => {
    const db = createDb(e.databaseUrl, { poolMax: 1 });
    const { key } = await createApiKey(db, { name: 'bench', scopes: ['payments:write'], mode: 'sandbox' });
    await db.destroy();
    say(`${e.name}: warm-up`);
    await measureLevel({ ...e }, key, 4, `warm-${e.name.split(' ')[0]}-${process.pid}`).catch((err) => {
      throw new Error(`${e.name}: the warm-up failed: ${(err as Error).message}`);
    });
    const out: Level[] = [];
    for (const c of levels) {
      say(`${e.name}: ${c} concurrent for ${seconds} s`);
      out.push(await measureLevel(e, key, c, `${e.name.split(' ')[0]}-${c}-${process.pid}`));
    }
    results.push(...report(e.name, out));
  };

  // 1. the dev server of `npm start`: each part stopped after its phase, or by stopAll on a failure
  if (!clusterOnly) {
    say('starting the dev server stack: Postgres, the Temporal dev server (SQLite, WAL), a gateway and a worker');
    const phase: (() => Promise<unknown>)[] = [];
    const started = <T>(stop: () => Promise<unknown>, value: T): T => {
      phase.push(stop);
      stops.push(stop);
      return value;
    };
    try {
      const pg = await startEmbeddedPostgres({
        dataDir: path.join(dataDir, 'pg-dev'),
        port: await freePort(),
        database: 'talat',
      });
      started(() => pg.stop(), pg);
      const t = await startEmbeddedTemporal({
        port: await freePort(),
        namespace: 'default',
        dbFile: path.join(dataDir, 'temporal.db'),
      });
      started(() => t.stop(), t);
      const db = createDb(pg.url, { poolMax: 2 });
      await migrateLatest(db);
      await db.destroy();
      const roleEnv = {
        ...env,
        DATA_DIR: dataDir,
        DATABASE_URL: pg.url,
        TEMPORAL_ADDRESS: t.address,
        WORKFLOW_BUNDLE_PATH: bundlePath,
      };
      const worker = await spawnRole('worker', roleEnv, logFile);
      started(() => stopChild(worker.child, 5000), worker);
      const gateway = await spawnRole('gateway', roleEnv, logFile);
      started(() => stopChild(gateway.child, 5000), gateway);
      await run({
        name: 'dev server (temporal server start-dev, SQLite WAL)',
        gateway: gateway.url,
        databaseUrl: pg.url,
        pgAdminUrl: pg.adminUrl,
        pids: () => ({
          gateway: gateway.child.pid,
          worker: worker.child.pid,
          'dev server': t.process.pid,
          postgres: pg.pid,
        }),
      });
    } finally {
      for (const stop of phase.reverse()) await stop();
    }
  }

  // 2. the cluster of `npm run cluster`
  {
    say('starting the cluster: Postgres, frontend, history, matching, worker services, a gateway and a worker');
    const cluster = await startCluster({
      dataDir: path.join(dataDir, 'cluster'),
      ports: await clusterPorts(1, 1),
      namespace: 'default',
      retentionDays: 1,
      historyShards: 16,
      roleEnv: env,
      workflowBundle: bundlePath,
      log: say,
    });
    stops.push(() => cluster.stop());
    await run({
      name: 'cluster (4 Temporal services on Postgres, 16 history shards)',
      gateway: cluster.gatewayUrls[0],
      databaseUrl: cluster.databaseUrl,
      pgAdminUrl: cluster.pg.adminUrl,
      pids: () => ({
        gateway: cluster.gateways[0].supervisor.pid(),
        worker: cluster.workers[0].supervisor.pid(),
        frontend: cluster.temporal.frontend.supervisor.pid(),
        history: cluster.temporal.history.supervisor.pid(),
        matching: cluster.temporal.matching.supervisor.pid(),
        'temporal worker': cluster.temporal.worker.supervisor.pid(),
        postgres: cluster.pg.pid,
      }),
    });
  }

  const cpus = os.cpus();
  process.stdout.write(
    [
      '',
      `Talat bench:cluster — ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}, ${seconds} s per level, closed loop, loopback; load average before ${loadBefore}, after ${loadAverage()}`,
      ...results,
      '',
    ].join('\n') + '\n',
  );
});
