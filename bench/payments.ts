/**
 * `npm run bench:payments [-- --qr N --seconds S --connections C]`
 *
 * Measures, on this machine, POST /qrpayment creations per second and GET /checkstatus requests
 * per second with p50/p99 latency. Self-contained and loopback only: starts its own Postgres
 * cluster (under .data/bench-<pid>, removed afterwards) and an in-memory Temporal dev server on
 * free ports, a worker and the gateway on 127.0.0.1, a sandbox API key, then drives the gateway
 * with autocannon. Bounded: N QR payments (default 1000, at most 2 minutes), then S seconds of
 * status checks (default 10). Rate limits are raised for the run (they would cap it at 100/s).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pino from 'pino';
import { createActivities } from '../activities';
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
  return { qr: num('--qr', 1000, 20_000), seconds: num('--seconds', 10, 60), connections: num('--connections', 16, 256) };
}

const say = (m: string) => process.stderr.write(`[bench] ${m}\n`);
const ms = (n: number) => `${n.toFixed(1)} ms`;

const dataDir = path.join(path.resolve(__dirname, '..'), '.data', `bench-${process.pid}`);
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
    });
    const logger = pino({ level: 'silent' });
    const db = createDb(pg.url, { poolMax: 20 });
    stops.push(() => db.destroy());
    await migrateLatest(db);
    const client = await connectClient(temporal.address, 'default');
    stops.push(() => client.connection.close());

    say('bundling the workflows and starting a worker');
    installTemporalRuntime('ERROR');
    const taskQueue = 'bench-payments';
    const { worker, connection } = await createWorker({ address: temporal.address, namespace: 'default', taskQueue, activities: createActivities({ db, config, logger }) });
    const run = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await run;
      await connection.close();
    });

    const app = createApp({ config, db, temporal: { client, taskQueue }, logger });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(() => new Promise((resolve) => server.close(resolve)));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const { key } = await createApiKey(db, { name: 'bench', scopes: ['payments:write', 'payments:read'], mode: 'sandbox' });
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const load = os.loadavg()[0].toFixed(1);

    // warm-up: a few payments and status checks, not measured
    for (let i = 0; i < 20; i++) {
      await fetch(`${base}/qrpayment`, { method: 'POST', headers, body: JSON.stringify({ orderId: `warm-${i}`, userId: 'u', amount: 10, customerId: 'c' }) });
      await fetch(`${base}/checkstatus/warm-${i}`, { headers });
    }

    // autocannon runs in a worker thread (workers: 1), so the load generator does not share the
    // event loop of the gateway and the Temporal worker; requests are plain data for that reason:
    // a random id per request ([<id>]) makes each order id new
    say(`POST /qrpayment: ${opts.qr} new payments over ${opts.connections} connections`);
    const prefix = `bench-${process.pid}-`;
    const qr = await autocannon({
      url: `${base}/qrpayment`,
      workers: 1,
      connections: opts.connections,
      amount: opts.qr,
      timeout: 30,
      method: 'POST',
      headers,
      idReplacement: true,
      body: JSON.stringify({ orderId: `${prefix}[<id>]`, userId: 'u-bench', amount: 123.45, customerId: 'c-bench' }),
    });

    // let the worker catch up (each workflow writes its payments row), so the status phase
    // measures reads of the record, not the fallback for payments not recorded yet
    const countRows = async () => Number((await db('payments').where('order_id', 'like', `${prefix}%`).count<{ count: string }[]>('* as count'))[0].count);
    const caughtUpStart = Date.now();
    let rows = await countRows();
    while (rows < qr['2xx'] && Date.now() - caughtUpStart < 120_000) {
      await new Promise((r) => setTimeout(r, 250));
      rows = await countRows();
    }
    const catchUpS = (Date.now() - caughtUpStart) / 1000;
    say(`the worker had recorded ${rows} of ${qr['2xx']} payments ${catchUpS.toFixed(1)} s after the last response`);

    say(`GET /checkstatus/{orderId}: ${opts.seconds} s over ${opts.connections} connections`);
    const known: string[] = (await db('payments').where('order_id', 'like', `${prefix}%`).limit(500).pluck('order_id')) as string[];
    if (known.length === 0) throw new Error('no payment was recorded: nothing to check');
    const status = await autocannon({
      url: base,
      workers: 1,
      connections: opts.connections,
      duration: opts.seconds,
      timeout: 30,
      requests: known.map((id) => ({ method: 'GET' as const, path: `/checkstatus/${id}`, headers })),
    });

    const cpus = os.cpus();
    const line = (name: string, r: autocannon.Result, rate: number, unit: string) =>
      `${name.padEnd(28)} ${rate.toFixed(1).padStart(8)} ${unit.padEnd(12)} p50 ${ms(r.latency.p50).padStart(9)}  p99 ${ms(r.latency.p99).padStart(9)}  ` +
      `(${r['2xx']} ok, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${(r.duration).toFixed(1)} s)`;
    const out = [
      '',
      `Talat payment API benchmark — ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}, ${opts.connections} connections, loopback, load average before ${load}`,
      line('POST /qrpayment (creations)', qr, qr['2xx'] / qr.duration, 'payments/s'),
      line('GET /checkstatus/{orderId}', status, status['2xx'] / status.duration, 'req/s'),
      `workflows: ${rows} of ${qr['2xx']} payments recorded by their workflow ${catchUpS.toFixed(1)} s after the last creation (end to end ${((qr.duration + catchUpS) > 0 ? rows / (qr.duration + catchUpS) : 0).toFixed(1)} recorded/s)`,
      '',
    ];
    process.stdout.write(out.join('\n'));
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
