/**
 * `npm run bench:callbacks [-- --callbacks N --connections C --worker-stopped]`
 *
 * Measures, on this machine, accepted signed QR callbacks per second (POST /qrcallback: allow-list,
 * HMAC over the canonical JSON, timestamp, payment lookup, receipt committed with the signal
 * accepted by Temporal) and their p50/p99 latency; then the same callbacks again as duplicates
 * (the stored first response). Self-contained and loopback only: its own Postgres cluster
 * (under .data/bench-callbacks-<pid>, removed afterwards) and an in-memory Temporal dev server on
 * free ports, a worker and the gateway on 127.0.0.1. Bounded: N pending QR payments are created
 * first (default 1000, at most 10,000), then exactly N distinct callbacks are sent (autocannon in
 * a worker thread), then N duplicates; a 5-minute guard stops everything.
 *
 * Each accepted callback sets off work in the Temporal worker (the payment settles, the webhook
 * workflow runs) on the same cores; --worker-stopped stops the worker while the callbacks are
 * accepted and starts it again afterwards, to measure the gateway's part alone.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import { createActivities } from '../activities';
import { signPayload } from '../src/callbacks/signature';
import { loadConfig } from '../src/config';
import { createDb, migrateLatest } from '../src/db/knex';
import { createApp } from '../src/http/app';
import { createApiKey } from '../src/http/middleware/api-key';
import { startEmbeddedPostgres } from '../src/stack/postgres';
import { freePort, startEmbeddedTemporal } from '../src/stack/temporal';
import { connectClient } from '../src/temporal/client';
import { installTemporalRuntime } from '../src/temporal/runtime';
import { createWorker } from '../src/temporal/worker';

function args() {
  const a = process.argv.slice(2);
  const num = (flag: string, dflt: number, max: number) => {
    const i = a.indexOf(flag);
    const v = i >= 0 ? Number(a[i + 1]) : dflt;
    if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`${flag} must be an integer from 1 to ${max}`);
    return v;
  };
  return { callbacks: num('--callbacks', 1000, 10_000), connections: num('--connections', 16, 256), workerStopped: a.includes('--worker-stopped') };
}

const say = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const ms = (n: number) => `${n.toFixed(1)} ms`;

const dataDir = path.join(path.resolve(__dirname, '..'), '.data', `bench-callbacks-${process.pid}`);
const stops: (() => Promise<unknown>)[] = [];
let stopping: Promise<void> | undefined;
const stopAll = () =>
  (stopping ??= (async () => {
    for (const s of stops.reverse()) await s().catch((e) => say(`stop failed: ${(e as Error).message}`));
    fs.rmSync(dataDir, { recursive: true, force: true });
  })());

async function main() {
  const opts = args();
  try {
    say('starting Postgres and the Temporal dev server (own, on free ports)');
    fs.mkdirSync(dataDir, { recursive: true });
    const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg'), port: await freePort(), database: 'talat_bench' });
    stops.push(() => pg.stop());
    const temporal = await startEmbeddedTemporal({ port: await freePort(), namespace: 'default' });
    stops.push(() => temporal.stop());

    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATA_DIR: dataDir,
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: temporal.address,
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_PER_SECOND: '10000000',
      CALLBACK_MAX_AGE_S: '3600', // the callbacks are signed before the run starts
      SIMULATORS: 'off',
    });
    const logger = pino({ level: 'silent' });
    const db = createDb(pg.url, { poolMax: 20 });
    stops.push(() => db.destroy());
    await migrateLatest(db);
    const client = await connectClient(temporal.address, 'default');
    stops.push(() => client.connection.close());

    say('bundling the workflows and starting a worker');
    installTemporalRuntime('ERROR');
    const taskQueue = 'bench-callbacks';
    const startWorker = async () => {
      const { worker, connection } = await createWorker({ address: temporal.address, namespace: 'default', taskQueue, activities: createActivities({ db, config, logger }) });
      const run = worker.run();
      let stopped: Promise<void> | undefined;
      const stop = () =>
        (stopped ??= (async () => {
          worker.shutdown();
          await run;
          await connection.close();
        })());
      stops.push(stop);
      return stop;
    };
    const stopWorker = await startWorker();

    const app = createApp({ config, db, temporal: { client, taskQueue }, logger });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(() => new Promise((resolve) => server.close(resolve)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { key } = await createApiKey(db, { name: 'bench', scopes: ['payments:write'], mode: 'sandbox' });

    say(`creating ${opts.callbacks} pending QR payments`);
    const prefix = `bench-${process.pid}-`;
    let created = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (created < opts.callbacks) {
          const orderId = `${prefix}${created++}`;
          const res = await fetch(`${base}/qrpayment`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': key },
            body: JSON.stringify({ orderId, userId: 'u-bench', amount: 123.45, customerId: 'c-bench' }),
          });
          if (res.status !== 200) throw new Error(`POST /qrpayment: ${res.status} ${await res.text()}`);
        }
      }),
    );
    const waitUntil = async (what: string, done: () => Promise<boolean>) => {
      const start = Date.now();
      while (!(await done())) {
        if (Date.now() - start > 120_000) throw new Error(`${what}: not within 2 minutes`);
        await new Promise((r) => setTimeout(r, 250));
      }
      return (Date.now() - start) / 1000;
    };
    const count = async (status?: string) =>
      Number((await db('payments').where('order_id', 'like', `${prefix}%`).modify((q) => (status ? q.where({ status }) : q)).count<{ count: string }[]>('* as count'))[0].count);
    await waitUntil('payments recorded', async () => (await count()) >= opts.callbacks);

    const payments: { id: string; order_id: string }[] = await db('payments').where('order_id', 'like', `${prefix}%`).select('id', 'order_id');
    const secret = config.callbacks.providers.QR.secret;
    const timestamp = new Date().toISOString();
    const file = path.join(dataDir, 'callbacks.jsonl');
    fs.writeFileSync(
      file,
      payments.map((p) => JSON.stringify(signPayload(secret, { paymentId: p.id, status: 'success', amount: 123.45, orderId: p.order_id, timestamp }))).join('\n') + '\n',
    );
    process.env.TALAT_BENCH_CALLBACKS = file;

    const load = os.loadavg()[0].toFixed(1);
    const fire = (title: string) => {
      say(`${title}: ${payments.length} callbacks over ${opts.connections} connections`);
      return autocannon({
        url: base,
        workers: 1,
        connections: opts.connections,
        amount: payments.length,
        timeout: 30,
        requests: [{ method: 'POST', path: '/qrcallback', headers: { 'content-type': 'application/json' }, setupRequest: path.join(__dirname, 'callbacks-request.cjs') }],
      } as autocannon.Options);
    };
    // autocannon's workers: each worker thread loads callbacks-request.cjs afresh, so with one
    // worker every request of a run is a different callback
    if (opts.workerStopped) await stopWorker();
    const accepted = await fire('POST /qrcallback, each callback new');
    if (opts.workerStopped) await startWorker();
    const receipts = Number((await db('callback_receipts').count<{ count: string }[]>('* as count'))[0].count);
    const settleS = await waitUntil('payments paid', async () => (await count('paid')) >= receipts);
    const duplicates = await fire('POST /qrcallback, each callback again (duplicates)');
    const receiptsAfter = Number((await db('callback_receipts').count<{ count: string }[]>('* as count'))[0].count);

    const cpus = os.cpus();
    const line = (name: string, r: autocannon.Result) =>
      `${name.padEnd(30)} ${(r['2xx'] / r.duration).toFixed(1).padStart(8)} callbacks/s  p50 ${ms(r.latency.p50).padStart(9)}  p99 ${ms(r.latency.p99).padStart(9)}  ` +
      `(${r['2xx']} ok, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${r.duration.toFixed(1)} s)`;
    process.stdout.write(
      [
        '',
        `Talat callback API benchmark — ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}, ${opts.connections} connections, loopback, load average before ${load}` +
          (opts.workerStopped ? ', worker stopped while accepting' : ''),
        line('accepted (new) QR callbacks', accepted),
        line('duplicate QR callbacks', duplicates),
        `receipts: ${receipts} after the first pass, ${receiptsAfter} after the duplicates; every payment paid ${settleS.toFixed(1)} s after the last accepted callback`,
        '',
      ].join('\n'),
    );
  } finally {
    say('stopping');
    await stopAll();
  }
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => void stopAll().finally(() => process.exit(130)));

const guard = setTimeout(() => {
  say('time limit (5 min) reached: stopping');
  void stopAll().finally(() => process.exit(1));
}, 5 * 60_000);
guard.unref();

main().then(
  () => process.exit(0),
  (e) => {
    say(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
