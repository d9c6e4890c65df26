/**
 * `npm run bench:bulkhead [-- --storm N --rate R --seconds S --expiry E --dead hang|closed
 *   --inline-per-endpoint K]`
 *
 * The bulkheads (README "Roles") under a retry storm, in one run on this machine: N QR payments
 * (default 300) of one merchant expire together while that merchant's webhook endpoint is dead
 * (`hang`: a server that accepts and never answers, so every attempt waits WEBHOOK_TIMEOUT_MS;
 * `closed`: a port nobody listens on), so each expiry's webhook runs its four attempts and is
 * dead-lettered; meanwhile another merchant (no webhook endpoint) creates QR payments at R/s
 * (default 20) for S seconds (default 40), starting when the storm's payments are created, so
 * the storm (their expiry E s later, default 10, and the retries 1 s, 2 s, 4 s after) falls
 * inside the window.
 *
 * Prints the payment workflows' workflow-task schedule-to-start (bench/steady.ts: per task,
 * WorkflowTaskScheduled -> WorkflowTaskStarted, p50/p99/max) of the steady merchant's payments
 * and of the storm's own payments (their expiry task), the load average before and after, and
 * the storm's progress (attempts made, dead letters) at the end of the window.
 * `--inline-per-endpoint K` sets WEBHOOK_INLINE_PER_ENDPOINT (default: Talat's own): a large K lets every
 * expiry make its first attempt inside its settle step, as before the bulkhead.
 *
 * Self-contained and loopback only (bench/support.ts): its own Postgres and Temporal dev server
 * (SQLite file, WAL, as `npm start`), the three queue workers and the gateway in this process.
 * `--cluster`: on the cluster of `npm run cluster` instead (src/app/cluster.ts), where the
 * bulkheads are meant to work: one worker process polls payments and background, another the
 * webhooks queue alone, a gateway behind the balancer. The last line is `BULKHEAD_RESULT {json}`.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { loadConfig, type Config } from '../src/config';
import { createDb, type Db } from '../src/db/knex';
import { createApiKey } from '../src/http/middleware/api-key';
import { paymentWorkflowIdOf } from '../src/payments';
import { startCluster } from '../src/app/cluster';
import { freePort } from '../src/stack/temporal';
import { connectClient } from '../src/temporal/client';
import { clusterPorts } from './cluster-support';
import { offerSteadily, percentile, s2sSummary, scheduleToStart } from './steady';
import { benchData, flagArg, headerLine, intArg, loadAverage, runBench, runBounded, say } from './support';

const argValue = (flag: string, dflt: string) => {
  const a = process.argv.slice(2);
  const i = a.indexOf(flag);
  return i >= 0 ? (a[i + 1] ?? '') : dflt;
};
const opts = {
  storm: intArg('--storm', 300, 2000),
  rate: intArg('--rate', 20, 200),
  seconds: intArg('--seconds', 40, 120),
  expiry: intArg('--expiry', 10, 120),
  dead: argValue('--dead', 'hang'),
  inline: argValue('--inline-per-endpoint', String(loadConfig({}).webhooks.inlinePerEndpoint)),
};
if (opts.dead !== 'hang' && opts.dead !== 'closed') throw new Error('--dead must be hang or closed');
if (!/^\d{1,4}$/.test(opts.inline)) throw new Error('--inline-per-endpoint must be a whole number from 0 to 1000');
const QUEUE = 'bench-bulkhead-payments';
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

const env = {
  QR_EXPIRY_S: String(opts.expiry),
  WEBHOOK_INLINE_PER_ENDPOINT: opts.inline,
  WEBHOOK_ALLOW_LOOPBACK: 'on',
};

/** What the storm runs on: a gateway (or the balancer), the storm merchant's key, the database and Temporal. */
interface Target {
  base: string;
  key: string;
  db: Db;
  config: Config;
  client: Client;
  /** where the queues' workers run, for the figures */
  queues: string;
}

async function measure(o: typeof opts, { base, key, db, config, client, queues }: Target): Promise<void> {
  const loadBefore = loadAverage();
  const prefix = `blk-${process.pid}-`;

  // the storm merchant's dead endpoint
  const sockets = new Set<Socket>();
  let deadUrl: string;
  let hang: http.Server | undefined;
  if (o.dead === 'hang') {
    hang = http.createServer(() => undefined); // never answers
    hang.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
    await new Promise<void>((r) => hang!.listen(0, '127.0.0.1', r));
    deadUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/hooks`;
  } else deadUrl = `http://127.0.0.1:${await freePort()}/hooks`;
  const reg = await fetch(`${base}/webhooks/endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ url: deadUrl }),
  });
  if (reg.status !== 201) throw new Error(`webhook endpoint: ${reg.status} ${await reg.text()}`);
  // the steady merchant: another key, no webhook endpoint
  const steadyKey = (await createApiKey(db, { name: 'bench-steady', scopes: ['payments:write'], mode: 'sandbox' })).key;

  const createQr = async (apiKey: string, orderId: string) => {
    const res = await fetch(`${base}/qrpayment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ orderId, userId: 'u-bench', amount: 10, customerId: 'c-bench' }),
    });
    if (res.status !== 200) throw new Error(`POST /qrpayment: ${res.status} ${await res.text()}`);
    return paymentWorkflowIdOf(((await res.json()) as { body: { paymentId: string } }).body.paymentId);
  };

  say(`storm: ${o.storm} QR payments to expire in ${o.expiry} s, webhook endpoint ${o.dead} (${deadUrl})`);
  const stormIds: string[] = [];
  const stormStart = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < o.storm) {
        const orderId = `${prefix}storm-${next++}`;
        stormIds.push(await createQr(key, orderId));
      }
    }),
  );
  const stormCreatedS = (performance.now() - stormStart) / 1000;

  say(`steady: ${o.rate} payments/s for ${o.seconds} s from another merchant while the storm runs`);
  const steadyIds: string[] = [];
  const run = await offerSteadily(o.rate, o.seconds, (i) => {
    const orderId = `${prefix}steady-${i}`;
    return createQr(steadyKey, orderId).then((id) => void steadyIds.push(id));
  });
  const loadAfter = loadAverage();
  if (run.firstError) say(`steady: ${run.errors} failed, the first: ${run.firstError}`);
  const progress = async () => {
    const [attempts] = await db('webhook_attempts as a')
      .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .where('d.order_id', 'like', `${prefix}storm-%`)
      .count<{ count: string }[]>('a.id as count');
    const states = (await db('webhook_deliveries')
      .where('order_id', 'like', `${prefix}storm-%`)
      .groupBy('state')
      .select('state')
      .count('id as count')) as { state: string; count: string }[];
    return `${attempts.count} attempts, deliveries ${states.map((s) => `${s.state} ${s.count}`).join(', ') || 'none'}`;
  };
  const atWindowEnd = await progress();

  const steady = await scheduleToStart(client, steadyIds);
  const storm = await scheduleToStart(client, stormIds);
  // let the storm finish (bounded) so the figures below say how far it got
  for (let i = 0; i < 60; i++) {
    const [{ count }] = await db('webhook_deliveries')
      .where('order_id', 'like', `${prefix}storm-%`)
      .where({ state: 'pending' })
      .count<{ count: string }[]>('id as count');
    if (Number(count) === 0) break;
    await sleep(1000);
  }
  const atEnd = await progress();
  for (const s of sockets) s.destroy();
  hang?.close();

  process.stdout.write(
    [
      '',
      headerLine('bulkhead', 16, loadBefore),
      `queues: payments ${QUEUE}, webhooks and background named after it (${queues}); WEBHOOK_INLINE_PER_ENDPOINT ${o.inline}, WEBHOOK_TIMEOUT_MS ${config.webhooks.timeoutMs}`,
      `storm: ${o.storm} QR payments created in ${stormCreatedS.toFixed(1)} s, expiring ${o.expiry} s later, endpoint ${o.dead}`,
      `steady: ${run.offered} QR payments offered at ${o.rate}/s in ${run.seconds.toFixed(1)} s (${run.errors} errors), load average after ${loadAfter}`,
      `storm at the end of the window: ${atWindowEnd}`,
      `storm at the end:               ${atEnd}`,
      `payment workflow-task schedule-to-start, steady merchant during the storm: ${s2sSummary(steady.s2s, steady.histories, steady.unstarted)}`,
      `payment workflow-task schedule-to-start, the storm's own payments:         ${s2sSummary(storm.s2s, storm.histories, storm.unstarted)}`,
      `goal: p99 <= 1000 ms`,
      `BULKHEAD_RESULT ${JSON.stringify({
        steadyP50: percentile(steady.s2s, 50),
        steadyP99: percentile(steady.s2s, 99),
        steadyTasks: steady.s2s.length,
        steadyErrors: run.errors,
        stormP99: percentile(storm.s2s, 99),
        storm: atEnd,
      })}`,
      '',
    ].join('\n'),
  );
}

if (flagArg('--cluster')) {
  const { dataDir, stops, stopAll } = benchData(`bench-bulkhead-${process.pid}`);
  runBounded(10, stopAll, async () => {
    const roleEnv = {
      ...env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      TEMPORAL_TASK_QUEUE: QUEUE,
      SIMULATORS: 'off',
      SMTP_URL: 'smtp://127.0.0.1:9',
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_PER_SECOND: '10000000',
    };
    say('starting the cluster: a gateway behind the balancer, payments+background on one worker, webhooks on another');
    const cluster = await startCluster({
      dataDir: path.join(dataDir, 'cluster'),
      ports: await clusterPorts(1, 2),
      namespace: 'default',
      retentionDays: 1,
      historyShards: 4,
      roleEnv,
      workerQueues: ['payments,background', 'webhooks'],
      workflowBundle: process.env.BULKHEAD_WORKFLOW_BUNDLE || undefined,
      log: say,
    });
    stops.push(() => cluster.stop());
    const config = loadConfig(roleEnv);
    const db = createDb(cluster.databaseUrl, { poolMax: 4 });
    stops.push(() => db.destroy());
    const { key } = await createApiKey(db, {
      name: 'bench-storm',
      scopes: ['payments:write', 'payments:read', 'webhooks:manage'],
      mode: 'sandbox',
    });
    const client = await connectClient(cluster.temporalAddress, 'default', { codecKeys: config.temporal.codecKeys });
    stops.push(() => client.connection.close());
    await measure(opts, {
      base: cluster.balancerUrl,
      key,
      db,
      config,
      client,
      queues: 'the cluster: payments and background on worker 1, webhooks on worker 2, separate processes',
    });
  });
} else
  runBench(
    `bench-bulkhead-${process.pid}`,
    { taskQueue: QUEUE, scopes: ['payments:write', 'payments:read', 'webhooks:manage'], temporalFile: true, env },
    () => opts,
    (o, stack) =>
      measure(o, {
        base: stack.base,
        key: stack.key,
        db: stack.db,
        config: stack.config,
        client: stack.temporal.client,
        queues: 'one worker each, this process',
      }),
  );
