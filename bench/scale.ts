/**
 * `npm run bench:scale [-- --seconds S --connections C]`
 *
 * Scale-out on this machine: one embedded Temporal dev server (SQLite file in WAL mode, as
 * `npm start` runs it) and one Postgres cluster, then 1, 2 and 4 gateway processes (the load
 * generator spreads requests round-robin over them) with 1, 2 and 4 worker processes
 * (src/roles, separate Node processes). For each size it prints QR creations/s (POST
 * /qrpayment) and callbacks/s (signed first QR callbacks of those payments, POST /qrcallback)
 * with p50/p99 latency and the speed-up over one process each, and where the CPU went during
 * each phase: the Temporal server, Postgres (postmaster and backends), the gateways, the workers
 * and the load generator, from /proc/<pid>/stat before and after (cores = CPU seconds / wall),
 * next to the whole machine's busy cores (/proc/stat), which shows how much other users took.
 *
 * Loopback only; its own data under .data/bench-scale-<pid> (removed afterwards). Bounded: S
 * seconds per phase (default 8, at most 30) and a 6-minute guard that stops everything.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { signPayload } from '../src/callbacks/verify';
import { generatedKeysOf } from '../src/stack/keys';
import { createDb, migrateLatest } from '../src/db/knex';
import { isCatalogEmpty, seedCatalog } from '../src/db/seed';
import { createApiKey } from '../src/http/middleware/api-key';
import { startEmbeddedPostgres } from '../src/stack/postgres';
import { freePort, startEmbeddedTemporal, stopChild } from '../src/stack/temporal';
import { bundleWorkflows } from '../src/app/worker';
import { benchData, headerLine, intArg, loadAverage, runBounded, say } from './support';

const ROOT = path.resolve(__dirname, '..');
const SIZES = [1, 2, 4];
const TICK = 100; // USER_HZ: clock ticks per second of /proc/<pid>/stat

const opts = { seconds: intArg('--seconds', 8, 30), connections: intArg('--connections', 32, 256) };
const { dataDir, stops, stopAll } = benchData(`bench-scale-${process.pid}`);

/** CPU seconds (user + system) of a process, with its waited-for children's when `children`. */
function cpuOf(pid: number, children = false): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
    const [utime, stime, cutime, cstime] = [f[11], f[12], f[13], f[14]].map(Number);
    return (utime + stime + (children ? cutime + cstime : 0)) / TICK;
  } catch {
    return 0; // exited
  }
}

/** CPU seconds the whole machine spent busy (every process, ours and the other users'), from /proc/stat. */
function machineCpu(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = f;
  return (user + nice + system + irq + softirq + steal) / TICK;
}

/** Postgres: the postmaster with its exited backends, plus every live backend. */
function postgresCpu(postmaster: number): number {
  let total = cpuOf(postmaster, true);
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuOf(Number(d));
    } catch {
      // gone
    }
  }
  return total;
}

interface Role {
  child: ChildProcess;
  base: string;
}

/** A role process from the sources (node with the tsx loader); resolves once it is running. */
async function startRole(role: 'gateway' | 'worker', env: Record<string, string>): Promise<Role> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'roles', `${role}.ts`)], {
    cwd: ROOT,
    env: { ...process.env, ...env, [role === 'gateway' ? 'PORT' : 'WORKER_HTTP_PORT']: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = () => stopChild(child, 30_000);
  stops.push(stop);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(`Talat ${role} is running`)) resolve();
    });
    child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.once('exit', (code) => reject(new Error(`${role} exited (${code}):\n${out}`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

interface PhaseResult {
  ok: number;
  failed: number;
  seconds: number;
  p50: number;
  p99: number;
  cpu: Record<string, number>;
}

const pct = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;

/**
 * `connections` loops for `seconds` (or until `next` returns undefined), each request to the
 * next gateway round-robin over keep-alive connections; latency of the 2xx ones.
 */
async function drive(
  gateways: Role[],
  agent: http.Agent,
  next: () => { path: string; headers: Record<string, string>; body: string } | undefined,
  cpu: () => Record<string, number>,
): Promise<PhaseResult> {
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let rr = 0;
  let firstError = '';
  const before = cpu();
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const post = (base: string, req: { path: string; headers: Record<string, string>; body: string }) =>
    new Promise<number>((resolve) => {
      const r = http.request(
        `${base}${req.path}`,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', ...req.headers } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 300 && !firstError) firstError = `${res.statusCode} ${text.slice(0, 200)}`;
            resolve(res.statusCode ?? 0);
          });
        },
      );
      r.on('error', (e) => {
        firstError ||= e.message;
        resolve(0);
      });
      r.end(req.body);
    });
  await Promise.all(
    Array.from({ length: opts.connections }, async () => {
      while (performance.now() < deadline) {
        const req = next();
        if (!req) return;
        const t0 = performance.now();
        const status = await post(gateways[rr++ % gateways.length].base, req);
        if (status >= 200 && status < 300) {
          ok++;
          latencies.push(performance.now() - t0);
        } else failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = cpu();
  if (firstError) say(`first failure: ${firstError}`);
  latencies.sort((a, b) => a - b);
  return {
    ok,
    failed,
    seconds,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    cpu: Object.fromEntries(Object.entries(after).map(([k, v]) => [k, (v - (before[k] ?? 0)) / seconds])),
  };
}

async function main() {
  fs.mkdirSync(dataDir, { recursive: true });
  const load = loadAverage();
  say('starting Postgres and the Temporal dev server (SQLite file, WAL) on free ports');
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(dataDir, 'pg'),
    port: await freePort(),
    database: 'talat_bench',
  });
  stops.push(() => pg.stop());
  const postmaster = Number(fs.readFileSync(path.join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const temporal = await startEmbeddedTemporal({
    port: await freePort(),
    namespace: 'default',
    dbFile: path.join(dataDir, 'temporal.db'),
  });
  stops.push(() => temporal.stop());

  const db = createDb(pg.url, { poolMax: 4 });
  stops.push(() => db.destroy());
  await migrateLatest(db);
  if (await isCatalogEmpty(db)) await seedCatalog(db);
  const { key } = await createApiKey(db, {
    name: 'bench-scale',
    scopes: ['payments:write', 'payments:read'],
    mode: 'sandbox',
  });

  say('bundling the workflows once for every worker');
  const bundlePath = path.join(dataDir, 'workflow-bundle.js');
  fs.writeFileSync(bundlePath, await bundleWorkflows());

  const env = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    DATA_DIR: dataDir,
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'bench-scale',
    WORKFLOW_BUNDLE_PATH: bundlePath,
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_PER_SECOND: '10000000',
    CALLBACK_MAX_AGE_S: '3600',
    SIMULATORS: 'off',
    SMTP_URL: 'smtp://127.0.0.1:9',
    HOST: '127.0.0.1',
  };
  const qrSecret = generatedKeysOf(dataDir).PROVIDER_SECRET_QR;
  const lines: string[] = [];
  const base: { qr?: number; cb?: number } = {};
  const cores = (c: Record<string, number>) =>
    Object.entries(c)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(', ');

  for (const n of SIZES) {
    say(`${n} gateway(s) and ${n} worker(s): starting`);
    const workers: Role[] = [];
    const gateways: Role[] = [];
    for (let i = 0; i < n; i++) workers.push(await startRole('worker', env));
    for (let i = 0; i < n; i++) gateways.push(await startRole('gateway', env));
    const cpu = () => ({
      temporal: cpuOf(temporal.process.pid!),
      postgres: postgresCpu(postmaster),
      gateways: gateways.reduce((s, g) => s + cpuOf(g.child.pid!), 0),
      workers: workers.reduce((s, w) => s + cpuOf(w.child.pid!), 0),
      'load generator': process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
      'whole machine': machineCpu(),
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });

    const prefix = `scale-${process.pid}-${n}-`;
    const created: { paymentId: string; orderId: string }[] = [];
    let seq = 0;
    const qr = await drive(
      gateways,
      agent,
      () => ({
        path: '/qrpayment',
        headers: { 'x-api-key': key },
        body: JSON.stringify({
          orderId: `${prefix}${seq++}`,
          userId: 'u-bench',
          amount: 123.45,
          customerId: 'c-bench',
        }),
      }),
      cpu,
    );
    // the workers record the payments: wait (bounded) until every created one is there
    const recorded = () => db('payments').where('order_id', 'like', `${prefix}%`).count<{ n: string }[]>('* as n');
    for (const until = Date.now() + 60_000; Date.now() < until && Number((await recorded())[0].n) < qr.ok;)
      await new Promise((r) => setTimeout(r, 250));
    const rows: { id: string; order_id: string }[] = await db('payments')
      .where('order_id', 'like', `${prefix}%`)
      .select('id', 'order_id');
    for (const r of rows) created.push({ paymentId: r.id, orderId: r.order_id });
    say(`${n}: ${qr.ok} QR payments created (${created.length} recorded); sending their first callbacks`);
    const timestamp = new Date().toISOString();
    let i = 0;
    const cb = await drive(
      gateways,
      agent,
      () => {
        const p = created[i++];
        if (!p) return undefined;
        return {
          path: '/qrcallback',
          headers: {},
          body: JSON.stringify(
            signPayload(qrSecret, {
              paymentId: p.paymentId,
              status: 'success',
              amount: 123.45,
              orderId: p.orderId,
              timestamp,
            }),
          ),
        };
      },
      cpu,
    );
    agent.destroy();

    const qrRate = qr.ok / qr.seconds;
    const cbRate = cb.ok / cb.seconds;
    base.qr ??= qrRate;
    base.cb ??= cbRate;
    const row = (name: string, r: PhaseResult, rate: number, speedup: number) =>
      `${`${n} gw + ${n} wk`.padEnd(12)} ${name.padEnd(14)} ${rate.toFixed(1).padStart(7)}/s  p50 ${r.p50.toFixed(1).padStart(7)} ms  p99 ${r.p99.toFixed(1).padStart(7)} ms  x${speedup.toFixed(2)}  (${r.ok} ok, ${r.failed} failed, ${r.seconds.toFixed(1)} s)\n` +
      `${''.padEnd(12)}   cores busy: ${cores(r.cpu)}`;
    lines.push(row('QR creations', qr, qrRate, qrRate / base.qr), row('callbacks', cb, cbRate, cbRate / base.cb));
    process.stdout.write(`${lines.slice(-2).join('\n')}\n`);

    say(`${n}: stopping the roles`);
    await Promise.all([...gateways, ...workers].map((r) => stopChild(r.child, 30_000)));
  }

  const cpus = os.cpus();
  process.stdout.write(
    [
      '',
      headerLine('scale-out', opts.connections, load).replace(
        'benchmark',
        `benchmark (${opts.seconds} s per phase, one Temporal dev server on SQLite WAL, one Postgres)`,
      ),
      `load average after ${loadAverage()} on ${cpus.length} cores (other processes share them)`,
      ...lines,
      '',
    ].join('\n'),
  );
}

runBounded(6, stopAll, main);
