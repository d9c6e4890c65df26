/**
 * `npm run chaos [-- --duration S --rate R --kill-every K --seed N --gateways G]`
 *
 * A chaos run on this machine, loopback only, bounded in time and count. It starts a stack of its
 * own (data under .data/chaos-<pid>, removed afterwards; free ports), every part a process of its
 * own so that each can be killed: Postgres and the Temporal dev server (SQLite file, so its state
 * survives its restarts), both under the supervisor of `npm start` (src/stack/supervisor.ts,
 * which starts them again), one worker and G gateways (src/roles, started again by this script).
 *
 * Load: R QR payments a second for S seconds with a sandbox key, round-robin over the gateways,
 * each retried (same order, same amount: the same payment) until a 2xx. The sandbox QR provider
 * (src/simulators/callbacks.ts: its outcomes by amount and its signed callbacks) pays them: 80 %
 * end in .00 (paid), 10 % in .01 (failed), 10 % in .03 (no callback: they expire after
 * QR_EXPIRY_S); each callback is retried on a 5xx or no answer, like a provider. A webhook
 * receiver (registered endpoint, Standard Webhooks signatures checked) records every delivery.
 *
 * Faults: every K seconds (seeded jitter, 0.5 K to 1.5 K) a kill -9 of the worker, a gateway, the
 * Temporal server or Postgres, in a seeded order that takes each kind in turn.
 *
 * At the end it waits for every payment to settle and its webhook to arrive (bounded), then prints
 * created / paid / failed / expired / lost / applied twice / webhooks per payment / 5xx seen, and a
 * last line `CHAOS_RESULT {json}`; it exits 1 on any loss or double (or when it could not run).
 *
 * lost: a created payment that is not settled at the end, or has no webhook for its status, or
 * whose provider result was accepted before its expiry and is not the payment's status.
 * applied twice: a payment with more than one terminal transition, or more than one webhook
 * message (distinct webhook-id) for one status, or a webhook whose status is not the payment's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../src/config';
import { paymentWorkflowIdOf } from '../src/payments';
import { createDb, migrateLatest } from '../src/db/knex';
import { createApiKey } from '../src/http/middleware/api-key';
import { buildCallbacks, sandboxOutcome, type SandboxOutcome } from '../src/simulators/callbacks';
import { startCluster, type Cluster, type ClusterProcess } from '../src/app/cluster';
import { superviseEmbeddedPostgres } from '../src/stack/postgres';
import type { Supervised } from '../src/stack/supervisor';
import { freePort, stopChild, superviseEmbeddedTemporal } from '../src/stack/temporal';
import { connectClient } from '../src/temporal/client';
import { bundleWorkflows } from '../src/app/worker';
import { bundleRollBuild, clusterPorts, historiesWithPatchMarker, replayWithBuild } from './cluster-support';
import { benchData, flagArg, intArg, loadAverage } from './support';

const ROOT = path.resolve(__dirname, '..');
const say = (m: string) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

const opts = {
  duration: intArg('--duration', 60, 1800),
  rate: intArg('--rate', 4, 50),
  killEvery: intArg('--kill-every', 15, 600),
  seed: intArg('--seed', 1, 2 ** 31 - 1),
  gateways: intArg('--gateways', 2, 4),
  expiry: intArg('--qr-expiry', 30, 900),
  /** how long after the load every payment must have settled (default: QR expiry + 120 s) */
  settleWithin: process.argv.includes('--settle-within') ? intArg('--settle-within', 1, 1800) : undefined,
  /** the cluster of `npm run cluster` instead of the dev server: history, worker, gateway and a roll */
  cluster: flagArg('--cluster'),
};
const DEV_KINDS = ['worker', 'gateway', 'temporal', 'postgres'] as const;
const CLUSTER_KINDS = ['history', 'roll', 'worker', 'gateway'] as const;
type Kind = (typeof DEV_KINDS)[number] | (typeof CLUSTER_KINDS)[number];
const KINDS: readonly Kind[] = opts.cluster ? CLUSTER_KINDS : DEV_KINDS;

/** mulberry32: a small seeded generator, so a run can be repeated. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(opts.seed);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { dataDir, stops, stopAll } = benchData(`chaos-${process.pid}`);
const roleLog = `${dataDir}.log`;

interface RoleProc {
  kind: 'worker' | 'gateway';
  child: ChildProcess;
  port: number;
  base: string;
  up: boolean;
}

/** A role from the sources; resolves once it prints its banner (or rejects when it exits first). */
async function spawnRole(kind: 'worker' | 'gateway', env: Record<string, string>, port: number): Promise<RoleProc> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'roles', `${kind}.ts`)], {
    cwd: ROOT,
    env: { ...process.env, ...env, [kind === 'gateway' ? 'PORT' : 'WORKER_HTTP_PORT']: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // every role's output, kept after the run (its data directory is removed): .data/chaos-<pid>.log
  child.stdout!.on('data', (d: Buffer) => fs.appendFileSync(roleLog, `[${kind} ${child.pid}] ${d.toString()}`));
  child.stderr!.on('data', (d: Buffer) => fs.appendFileSync(roleLog, `[${kind} ${child.pid}] ${d.toString()}`));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${kind} did not start within 120 s:\n${out}`));
    }, 120_000);
    // the banner is looked for before the output is cut to its tail: a burst of log lines in
    // the same read (a restart while Temporal or Postgres is down) must not hide it
    let tail = '';
    child.stdout!.on('data', (d: Buffer) => {
      const seen = tail + d.toString();
      tail = seen.slice(-100);
      out = (out + d.toString()).slice(-4000);
      if (seen.includes(`Talat ${kind} is running`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-4000)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited (${code ?? signal}) before it was running:\n${out}`));
    });
  });
  return { kind, child, port, base: `http://127.0.0.1:${port}`, up: true };
}

/** One HTTP request with a deadline: the status (0 when no answer) and the body. */
async function request(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; text: string }> {
  try {
    const r = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    return { status: r.status, text: await r.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

interface Payment {
  orderId: string;
  amountSatang: number;
  paymentId?: string;
  expiresAt?: number;
  created: boolean;
  createdAt?: number;
  /** the provider's result, once a gateway accepted it (status < 500), and when */
  accepted?: { status: 'success' | 'failed'; at: number; code: number };
}

interface Delivery {
  id: string;
  orderId: string;
  status: string;
  valid: boolean;
  at: number;
}

async function main() {
  const started = Date.now();
  const load = loadAverage();
  fs.mkdirSync(dataDir, { recursive: true });
  const supervisorLog = { info: say, warn: say, error: say };

  say(
    `seed ${opts.seed}: ${opts.rate} payments/s for ${opts.duration} s, a kill every ~${opts.killEvery} s, ${opts.gateways} gateways, QR expiry ${opts.expiry} s; data in ${dataDir}`,
  );
  // the workflows bundled once for every worker start (CHAOS_WORKFLOW_BUNDLE: one built already, e.g. by the tests)
  let bundlePath = process.env.CHAOS_WORKFLOW_BUNDLE ?? '';
  if (!bundlePath) {
    say('bundling the workflows once');
    bundlePath = path.join(dataDir, 'workflow-bundle.js');
    fs.writeFileSync(bundlePath, await bundleWorkflows());
  }
  // the cluster's rolling upgrade goes to this build (bench/roll/workflows.ts), bundled while the cluster starts
  const rollBundle = opts.cluster ? bundleRollBuild(path.join(dataDir, 'roll-bundle.js')) : undefined;
  rollBundle?.catch(() => undefined);

  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn',
    DATA_DIR: dataDir,
    TEMPORAL_TASK_QUEUE: 'chaos',
    WORKFLOW_BUNDLE_PATH: bundlePath,
    QR_EXPIRY_S: String(opts.expiry),
    RATE_LIMIT_PER_MINUTE: '100000000',
    RATE_LIMIT_PER_SECOND: '10000000',
    CALLBACK_MAX_AGE_S: '3600',
    WEBHOOK_ALLOW_LOOPBACK: 'on',
    SIMULATORS: 'off',
    SMTP_URL: 'smtp://127.0.0.1:9',
    HOST: '127.0.0.1',
    SHUTDOWN_GRACE_S: '10',
    // a restart that hangs on a dependency coming back exits and is started again
    STARTUP_TIMEOUT_S: '30',
  };

  // the stack: the dev server and Postgres under `npm start`'s supervisor, or the cluster (which supervises its own)
  let cluster: Cluster | undefined;
  let pgSupervisor: Supervised;
  let temporalSupervisor: Supervised | undefined;
  let temporalAddress: string;
  let databaseUrl: string;
  if (opts.cluster) {
    say('starting the cluster (src/app/cluster.ts): 2 gateways behind HAProxy, 2 workers');
    cluster = await startCluster({
      dataDir: path.join(dataDir, 'cluster'),
      ports: await clusterPorts(2, 2),
      namespace: 'default',
      retentionDays: 1,
      historyShards: 4,
      roleEnv: env,
      workflowBundle: bundlePath,
      log: say,
    });
    stops.push(() => cluster!.stop());
    pgSupervisor = cluster.postgres;
    temporalAddress = cluster.temporalAddress;
    databaseUrl = cluster.databaseUrl;
  } else {
    const { pg, supervisor } = await superviseEmbeddedPostgres(
      { dataDir: path.join(dataDir, 'pg'), port: await freePort(), database: 'talat_chaos' },
      supervisorLog,
    );
    pgSupervisor = supervisor;
    stops.push(() => supervisor.stop());
    const temporal = await superviseEmbeddedTemporal(
      { port: await freePort(), namespace: 'default', dbFile: path.join(dataDir, 'temporal.db') },
      supervisorLog,
    );
    temporalSupervisor = temporal.supervisor;
    stops.push(() => temporal.supervisor.stop());
    temporalAddress = temporal.address;
    databaseUrl = pg.url;
  }
  env.DATABASE_URL = databaseUrl;
  env.TEMPORAL_ADDRESS = temporalAddress;

  const db = createDb(databaseUrl, { poolMax: 4 });
  stops.push(() => db.destroy());
  await migrateLatest(db);
  const { key } = await createApiKey(db, {
    name: 'chaos',
    scopes: ['payments:write', 'payments:read', 'webhooks:manage'],
    mode: 'sandbox',
  });

  const config = loadConfig(env);

  // the webhook receiver: every delivery, its id and whether its signature holds
  const deliveries: Delivery[] = [];
  let hookSecret = '';
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      let valid = false;
      try {
        new Webhook(hookSecret).verify(body, headers);
        valid = true;
      } catch {
        valid = false;
      }
      try {
        const data = (JSON.parse(body) as { data: { orderId: string; status: string } }).data;
        deliveries.push({
          id: headers['webhook-id'],
          orderId: data.orderId,
          status: data.status,
          valid,
          at: Date.now(),
        });
      } catch {
        deliveries.push({ id: headers['webhook-id'], orderId: '?', status: '?', valid: false, at: Date.now() });
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  stops.push(() => new Promise((r) => receiver.close(() => r(undefined))));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const roles: RoleProc[] = [];
  if (!cluster) {
    say(`starting 1 worker and ${opts.gateways} gateway(s)`);
    // at the end the roles get 2 s to drain (their work is over; the data is thrown away)
    stops.push(() => Promise.all(roles.map((r) => stopChild(r.child, 2000))));
    const roleKinds: ('worker' | 'gateway')[] = [
      'worker',
      ...Array.from({ length: opts.gateways }, () => 'gateway' as const),
    ];
    const ports = await Promise.all(roleKinds.map(() => freePort()));
    const startedRoles = await Promise.allSettled(roleKinds.map((k, i) => spawnRole(k, env, ports[i])));
    for (const r of startedRoles) if (r.status === 'fulfilled') roles.push(r.value);
    const failedRole = startedRoles.find((r) => r.status === 'rejected');
    if (failedRole) throw (failedRole as PromiseRejectedResult).reason;
  }
  const gateways = () => roles.filter((r) => r.kind === 'gateway');
  let rr = 0;
  // on the cluster every request goes through the balancer, which spreads them over both gateways
  const nextGateway = (): { base: string } => {
    if (cluster) return { base: cluster.balancerUrl };
    const g = gateways();
    const live = g.filter((r) => r.up);
    const pool = live.length ? live : g;
    return pool[rr++ % pool.length];
  };

  const fivexx: Record<string, number> = {};
  const noAnswer: Record<string, number> = {};
  const count = (what: string, status: number) => {
    if (status >= 500) fivexx[`${what} ${status}`] = (fivexx[`${what} ${status}`] ?? 0) + 1;
    if (status === 0) noAnswer[what] = (noAnswer[what] ?? 0) + 1;
  };

  const reg = await request(`${nextGateway().base}/webhooks/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ url: hookUrl, description: 'chaos receiver' }),
  });
  if (reg.status !== 201) throw new Error(`could not register the webhook endpoint: ${reg.status} ${reg.text}`);
  hookSecret = (JSON.parse(reg.text) as { body: { secret: string } }).body.secret;

  const payments: Payment[] = [];
  const creating: Promise<void>[] = [];
  let loadOver = false;
  const hardDeadline = Date.now() + (opts.duration + opts.expiry + 240) * 1000;

  /** The provider: posts the payment's signed callback(s) until a gateway answers below 500. */
  async function pay(p: Payment): Promise<void> {
    const outcome = sandboxOutcome(p.amountSatang);
    if (outcome === 'none') return;
    unfinished.add(`callback of ${p.orderId}`);
    try {
      await postCallback(p, outcome);
    } finally {
      unfinished.delete(`callback of ${p.orderId}`);
    }
  }
  async function postCallback(p: Payment, outcome: Exclude<SandboxOutcome, 'none'>): Promise<void> {
    await sleep(1000);
    const row = {
      id: p.paymentId!,
      order_id: p.orderId,
      user_id: 'u-chaos',
      method: 'qr',
      amount_satang: String(p.amountSatang),
      provider_ref: null,
    };
    for (let i = 0; ; i++) {
      // built for each attempt, so its timestamp is fresh
      const post = buildCallbacks(config, row, outcome)[0];
      const r = await request(`${nextGateway().base}${post.path}`, {
        method: 'POST',
        headers: { 'content-type': post.contentType, ...post.headers },
        body: post.body,
      });
      count('callback', r.status);
      if (r.status > 0 && r.status < 500) {
        p.accepted = { status: outcome === 'fail' ? 'failed' : 'success', at: Date.now(), code: r.status };
        return;
      }
      if (Date.now() > hardDeadline) return;
      await sleep(Math.min(1000 * 2 ** Math.min(i, 2), 4000));
    }
  }

  /** The merchant: creates the payment, retrying (same order and amount) until a 2xx. */
  async function create(p: Payment): Promise<void> {
    unfinished.add(`creation of ${p.orderId}`);
    try {
      await createOnce(p);
    } finally {
      unfinished.delete(`creation of ${p.orderId}`);
    }
  }
  async function createOnce(p: Payment): Promise<void> {
    for (let i = 0; ; i++) {
      const r = await request(`${nextGateway().base}/qrpayment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({
          orderId: p.orderId,
          userId: 'u-chaos',
          amount: p.amountSatang / 100,
          customerId: 'c-chaos',
        }),
      });
      count('qrpayment', r.status);
      if (r.status >= 200 && r.status < 300) {
        const body = (JSON.parse(r.text) as { body: { paymentId: string; expiresAt: string } }).body;
        p.paymentId = body.paymentId;
        p.expiresAt = Date.parse(body.expiresAt);
        p.created = true;
        p.createdAt = Date.now();
        return pay(p);
      }
      if (r.status >= 400 && r.status < 500) {
        say(`order ${p.orderId}: /qrpayment answered ${r.status} ${r.text.slice(0, 200)}`);
        return;
      }
      if (Date.now() > hardDeadline) return;
      await sleep(1000);
    }
  }

  // the faults: each kind in turn, in a seeded order per round
  const kills: { kind: Kind; at: number; pid?: number; back?: number }[] = [];
  let rollStartedAt = 0;
  let rollDoneAt = 0;
  const down = new Set<Kind>();
  const restartRole = async (r: RoleProc) => {
    r.up = false;
    await sleep(500);
    for (;;) {
      try {
        const fresh = await spawnRole(r.kind, env, r.port);
        r.child = fresh.child;
        r.up = true;
        return;
      } catch (e) {
        say(`restarting the ${r.kind} failed, again in 2 s: ${(e as Error).message.split('\n')[0]}`);
        if (Date.now() > hardDeadline) return;
        await sleep(2000);
      }
    }
  };
  /** kill -9 of a supervised process, then its restart by its supervisor (bounded) */
  async function killSupervised(kind: Kind, s: Supervised, record: (typeof kills)[number]): Promise<void> {
    const pid = s.pid();
    if (!pid) return;
    record.pid = pid;
    say(`kill -9 ${kind} (pid ${pid})`);
    const back = s.nextStart();
    process.kill(pid, 'SIGKILL');
    await Promise.race([back, sleep(120_000)]);
  }
  /** the workers, one by one, to the next build: SIGTERM (drained), started again on the roll bundle */
  async function roll(workers: ClusterProcess[]): Promise<void> {
    const next = await rollBundle!;
    rollStartedAt ||= Date.now();
    for (const w of workers) {
      w.env.WORKFLOW_BUNDLE_PATH = next;
      const pid = w.supervisor.pid();
      if (!pid) continue;
      say(`rolling ${w.name} (pid ${pid}) to the next build`);
      const back = w.supervisor.nextStart();
      process.kill(pid, 'SIGTERM');
      await Promise.race([back, sleep(120_000)]);
    }
    rollDoneAt ||= Date.now();
  }
  async function kill(kind: Kind): Promise<void> {
    const at = Date.now();
    const record: (typeof kills)[number] = { kind, at };
    kills.push(record);
    down.add(kind);
    if (cluster) {
      if (kind === 'roll') await roll(cluster.workers);
      else {
        const pool =
          kind === 'history' ? [cluster.temporal.history] : kind === 'worker' ? cluster.workers : cluster.gateways;
        await killSupervised(kind, pool[Math.floor(random() * pool.length)].supervisor, record);
      }
    } else if (kind === 'worker' || kind === 'gateway') {
      const candidates = roles.filter((r) => r.kind === kind && r.up);
      const r = candidates[Math.floor(random() * candidates.length)];
      if (!r) return;
      record.pid = r.child.pid;
      say(`kill -9 ${kind} (pid ${r.child.pid})`);
      r.child.kill('SIGKILL');
      await restartRole(r);
    } else {
      await killSupervised(kind, kind === 'temporal' ? temporalSupervisor! : pgSupervisor, record);
    }
    record.back = Date.now() - at;
    down.delete(kind);
    say(`${kind} is back after ${(record.back / 1000).toFixed(1)} s`);
  }
  // faults may overlap (Postgres down while the worker restarts), never two of one kind at once
  const faults: Promise<void>[] = [];
  const killer = (async () => {
    let round: Kind[] = [];
    for (;;) {
      await sleep(opts.killEvery * 1000 * (0.5 + random()));
      if (loadOver || aborting) return;
      // the cluster's first round in its order (the roll early, so payments start on the new build)
      if (!round.length) round = cluster && !kills.length ? [...KINDS] : [...KINDS].sort(() => random() - 0.5);
      const i = round.findIndex((k) => !down.has(k));
      if (i < 0) continue;
      faults.push(kill(round.splice(i, 1)[0]));
    }
  })();

  // the load: a steady rate for the duration
  say('load and faults start');
  phase = 'the load';
  const total = opts.rate * opts.duration;
  const t0 = Date.now();
  for (let i = 0; i < total && !aborting; i++) {
    const due = t0 + (i * 1000) / opts.rate;
    if (due > Date.now()) await sleep(due - Date.now());
    const r = random();
    const cents = r < 0.8 ? 0 : r < 0.9 ? 1 : 3;
    const p: Payment = {
      orderId: `CHAOS-${opts.seed}-${process.pid}-${i}`,
      amountSatang: (10 + Math.floor(random() * 490)) * 100 + cents,
      created: false,
    };
    payments.push(p);
    creating.push(create(p));
  }
  loadOver = true;
  say(`load over (${payments.length} orders); waiting for the last fault to heal and every payment to settle`);
  phase = 'the last kill';
  await killer;
  phase = 'the faults to heal';
  await Promise.all(faults);
  phase = 'the payments to be created and their callbacks accepted';
  await Promise.all(creating);
  phase = 'every payment to settle';

  // settle: every created payment terminal, with a webhook of its status (bounded)
  const terminal = new Set(['paid', 'failed', 'expired']);
  const created = payments.filter((p) => p.created);
  let rows: { order_id: string; status: string; id: string }[] = [];
  const settleBy = Math.min(hardDeadline, Date.now() + (opts.settleWithin ?? opts.expiry + 120) * 1000);
  for (;;) {
    try {
      rows = await db('payments')
        .whereIn(
          'order_id',
          created.map((p) => p.orderId),
        )
        .select('order_id', 'status', 'id');
    } catch (e) {
      say(`reading the payments failed: ${(e as Error).message}`);
    }
    const hooked = new Set(deliveries.map((d) => `${d.orderId} ${d.status}`));
    const open = rows.filter((r) => !terminal.has(r.status) || !hooked.has(`${r.order_id} ${r.status}`));
    if (rows.length === created.length && open.length === 0) break;
    if (Date.now() > settleBy) {
      say(`${open.length + created.length - rows.length} payment(s) still open at the deadline`);
      const seen = new Set(rows.map((r) => r.order_id));
      for (const r of open)
        say(
          `  open: ${r.order_id} (${r.id}) is ${r.status}, webhook of it ${hooked.has(`${r.order_id} ${r.status}`) ? 'received' : 'not received'}`,
        );
      for (const p of created.filter((c) => !seen.has(c.orderId))) say(`  open: ${p.orderId} has no payments row`);
      break;
    }
    await sleep(1000);
  }
  await sleep(3000); // late duplicates of webhooks, if any

  // figures
  const byOrder = new Map(rows.map((r) => [r.order_id, r]));
  const events: { payment_id: string; n: string }[] = await db('payment_events')
    .whereIn(
      'payment_id',
      rows.map((r) => r.id),
    )
    .whereIn('to_status', [...terminal])
    .groupBy('payment_id')
    .select('payment_id', db.raw('count(*) as n'));
  const terminalEvents = new Map(events.map((e) => [e.payment_id, Number(e.n)]));
  const hooksOf = new Map<string, Delivery[]>();
  for (const d of deliveries) hooksOf.set(d.orderId, [...(hooksOf.get(d.orderId) ?? []), d]);

  const lost: string[] = [];
  const twice: string[] = [];
  const status: Record<string, number> = { paid: 0, failed: 0, expired: 0, pending: 0 };
  let neverAccepted = 0;
  for (const p of created) {
    const row = byOrder.get(p.orderId);
    if (!row) {
      lost.push(`${p.orderId}: no payments row`);
      continue;
    }
    status[row.status] = (status[row.status] ?? 0) + 1;
    const hooks = hooksOf.get(p.orderId) ?? [];
    if (!terminal.has(row.status)) lost.push(`${p.orderId}: still ${row.status}`);
    else if (!hooks.some((h) => h.status === row.status)) lost.push(`${p.orderId}: ${row.status}, no webhook`);
    if (p.accepted && p.accepted.at < (p.expiresAt ?? 0) - 1000) {
      const want = p.accepted.status === 'success' ? 'paid' : 'failed';
      if (terminal.has(row.status) && row.status !== want)
        lost.push(
          `${p.orderId}: the provider's ${p.accepted.status} was answered ${p.accepted.code} before the expiry, the payment is ${row.status}`,
        );
    }
    if (!p.accepted && sandboxOutcome(p.amountSatang) !== 'none') neverAccepted++;
    if ((terminalEvents.get(row.id) ?? 0) > 1)
      twice.push(`${p.orderId}: ${terminalEvents.get(row.id)} terminal transitions`);
    const ids = new Set(hooks.map((h) => h.id));
    if (ids.size > new Set(hooks.map((h) => h.status)).size)
      twice.push(
        `${p.orderId}: ${ids.size} webhook messages for ${[...new Set(hooks.map((h) => h.status))].join(', ')}`,
      );
    if (hooks.some((h) => h.status !== row.status))
      twice.push(`${p.orderId}: a webhook says ${hooks.map((h) => h.status).join(', ')}, the payment ${row.status}`);
  }
  // what the workflows of the first lost payments say: their status and the task failures in their history
  const diagnosis: string[] = [];
  if (lost.length) {
    const client = await connectClient(temporalAddress, 'default', { codecKeys: config.temporal.codecKeys });
    try {
      for (const l of lost.slice(0, 5)) {
        const orderId = l.split(':')[0];
        try {
          const p = created.find((c) => c.orderId === orderId);
          const h = client.workflow.getHandle(paymentWorkflowIdOf(p?.paymentId ?? orderId));
          const d = await h.describe();
          const events = (await h.fetchHistory()).events ?? [];
          const kinds: Record<string, number> = {};
          for (const e of events)
            for (const k of Object.keys(e))
              if (k.endsWith('EventAttributes') && e[k as keyof typeof e])
                kinds[k.replace('EventAttributes', '')] = (kinds[k.replace('EventAttributes', '')] ?? 0) + 1;
          diagnosis.push(`${orderId}: workflow ${d.status.name}, ${events.length} events ${JSON.stringify(kinds)}`);
        } catch (e) {
          diagnosis.push(`${orderId}: ${(e as Error).message}`);
        }
      }
    } finally {
      await client.connection.close();
    }
  }
  // the histories of payments started on the old build replay on the new one (at most 20: bounded)
  const replay: { replayed: number; failures: string[]; onNextBuild: number } = {
    replayed: 0,
    failures: [],
    onNextBuild: 0,
  };
  if (cluster && rollStartedAt) {
    const old = created.filter((p) => (p.createdAt ?? Infinity) < rollStartedAt).slice(0, 20);
    Object.assign(
      replay,
      await replayWithBuild(
        temporalAddress,
        config.temporal.codecKeys,
        old.map((p) => paymentWorkflowIdOf(p.paymentId!)),
        await rollBundle!,
      ),
    );
    // payments started after the roll ran the next build: their histories have its patch marker
    // (the current build's v3 QR type records none)
    const after = created.filter((p) => rollDoneAt && (p.createdAt ?? 0) > rollDoneAt + 1000).slice(0, 5);
    replay.onNextBuild = (
      await historiesWithPatchMarker(
        temporalAddress,
        config.temporal.codecKeys,
        after.map((p) => paymentWorkflowIdOf(p.paymentId!)),
      )
    ).length;
  }
  const badSignatures = deliveries.filter((d) => !d.valid).length;
  const kinds = Object.fromEntries(KINDS.map((k) => [k, kills.filter((x) => x.kind === k).length]));
  const backs = (k: Kind) =>
    kills
      .filter((x) => x.kind === k && x.back !== undefined)
      .map((x) => (x.back! / 1000).toFixed(1))
      .join(', ');
  // from the provider's accepted result to the first webhook: what a fault costs a payment
  const latencies = created
    .map((p) => {
      const first = (hooksOf.get(p.orderId) ?? [])[0];
      return p.accepted && first ? (first.at - p.accepted.at) / 1000 : undefined;
    })
    .filter((x): x is number => x !== undefined)
    .sort((a, b) => a - b);
  const pct = (q: number) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : NaN;
  const perPayment = created.length ? deliveries.length / created.length : 0;
  const maxPerPayment = Math.max(0, ...[...hooksOf.values()].map((h) => h.length));

  const result = {
    seed: opts.seed,
    durationS: opts.duration,
    rate: opts.rate,
    killEveryS: opts.killEvery,
    orders: payments.length,
    created: created.length,
    paid: status.paid,
    failed: status.failed,
    expired: status.expired,
    lost: lost.length,
    appliedTwice: twice.length,
    webhooks: deliveries.length,
    webhooksPerPayment: Number(perPayment.toFixed(3)),
    maxWebhooksPerPayment: maxPerPayment,
    badSignatures,
    fivexx: Object.values(fivexx).reduce((a, b) => a + b, 0),
    fivexxBy: fivexx,
    noAnswer,
    resultNeverAccepted: neverAccepted,
    kills: kinds,
    replayed: replay.replayed,
    replayFailures: replay.failures.length,
    onNextBuild: replay.onNextBuild,
    settleS: { p50: pct(0.5), p99: pct(0.99), max: latencies[latencies.length - 1] ?? NaN },
    wallS: Math.round((Date.now() - started) / 1000),
    loadBefore: load,
    loadAfter: loadAverage(),
  };
  const lines = [
    '',
    `Talat chaos run — seed ${opts.seed}, ${opts.rate} payments/s for ${opts.duration} s, a kill every ~${opts.killEvery} s, load average ${load} before, ${result.loadAfter} after`,
    `  created          ${result.created} of ${result.orders} orders`,
    `  paid             ${result.paid}`,
    `  failed           ${result.failed}`,
    `  expired          ${result.expired}${neverAccepted ? ` (${neverAccepted} of them paid/failed by amount, but the provider's callback was never accepted)` : ''}`,
    `  lost             ${result.lost}`,
    `  applied twice    ${result.appliedTwice}`,
    `  webhooks         ${result.webhooks} deliveries, ${result.webhooksPerPayment} per payment (at most ${maxPerPayment} for one), ${badSignatures} bad signatures`,
    `  result->webhook  p50 ${pct(0.5).toFixed(1)} s, p99 ${pct(0.99).toFixed(1)} s, max ${(latencies[latencies.length - 1] ?? NaN).toFixed(1)} s (provider's result accepted -> webhook received)`,
    `  5xx seen         ${result.fivexx}${
      result.fivexx
        ? ` (${Object.entries(fivexx)
            .map(([k, v]) => `${k}: ${v}`)
            .join(', ')})`
        : ''
    }; no answer: ${
      Object.entries(noAnswer)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
    `  kills (kill -9)  ${KINDS.map((k) => `${k} ${kinds[k]}${backs(k) ? ` (back after ${backs(k)} s)` : ''}`).join(', ')}`,
    cluster
      ? `  restarts         ${[...Object.values(cluster.temporal), ...cluster.gateways, ...cluster.workers].map((p) => `${p.name} ${p.supervisor.restarts()}`).join(', ')} (by the supervisor)`
      : `  restarts         temporal ${temporalSupervisor!.restarts()}, postgres ${pgSupervisor.restarts()} (by the supervisor)`,
    ...(cluster
      ? [
          `  replay           ${replay.replayed} histories of the old build replayed on the new one, ${replay.failures.length} failed; ${replay.onNextBuild} payments started after the roll ran the new build`,
        ]
      : []),
    ...replay.failures.slice(0, 5).map((l) => `  REPLAY ${l}`),
    ...lost.slice(0, 20).map((l) => `  LOST   ${l}`),
    ...twice.slice(0, 20).map((l) => `  TWICE  ${l}`),
    ...diagnosis.map((l) => `  WHY    ${l}`),
    `  logs of the roles: ${roleLog}`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
  process.stdout.write(`CHAOS_RESULT ${JSON.stringify(result)}\n`);
  return lost.length === 0 && twice.length === 0 && created.length > 0 && replay.failures.length === 0;
}

/** SIGINT/SIGTERM or the guard: no more load and no more kills while everything stops */
let aborting = false;
/** what the run waits for, said when it is stopped: where a slow or stuck run stood */
let phase = 'starting';
const unfinished = new Set<string>();
const guardMs = (opts.duration + opts.expiry + 420) * 1000;
const guard = setTimeout(() => {
  aborting = true;
  say(`guard: still running after ${guardMs / 1000} s, stopping everything`);
  void stopAll().then(() => process.exit(1));
}, guardMs);
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    aborting = true;
    say(`${sig}: stopping everything; it was waiting for ${phase}`);
    if (unfinished.size) say(`  unfinished: ${[...unfinished].slice(0, 20).join(', ')} (${unfinished.size})`);
    void stopAll().then(() => process.exit(130));
  });
main().then(
  async (ok) => {
    clearTimeout(guard);
    await stopAll();
    process.exit(ok ? 0 : 1);
  },
  async (e) => {
    clearTimeout(guard);
    say(`failed: ${(e as Error).stack ?? String(e)}`);
    await stopAll();
    process.exit(1);
  },
);
