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

    // warm-up: a few payments and status checks, not measured
    for (let i = 0; i < 20; i++) {
      await fetch(`${base}/qrpayment`, { method: 'POST', headers, body: JSON.stringify({ orderId: `warm-${i}`, userId: 'u', amount: 10, customerId: 'c' }) });
      await fetch(`${base}/checkstatus/warm-${i}`, { headers });
    }

    say(`POST /qrpayment: ${opts.qr} new payments over ${opts.connections} connections`);
    let seq = 0;
    const orderIds: string[] = [];
    const qr = await autocannon({
      url: base,
      connections: opts.connections,
      amount: opts.qr,
      timeout: 30,
      requests: [
        {
          method: 'POST',
          path: '/qrpayment',
          headers,
          setupRequest: (req) => {
            const orderId = `bench-${process.pid}-${seq++}`;
            orderIds.push(orderId);
            return { ...req, body: JSON.stringify({ orderId, userId: 'u-bench', amount: (seq % 5000) + 1, customerId: 'c-bench' }) };
          },
        },
      ],
    });
    // let the worker catch up (each workflow writes its payments row), so the status phase
    // measures reads of the record, not the fallback for payments not recorded yet
    const countRows = async () =>
      Number((await db('payments').where('order_id', 'like', `bench-${process.pid}-%`).count<{ count: string }[]>('* as count'))[0].count);
    const caughtUpStart = Date.now();
    let rows = await countRows();
    while (rows < qr['2xx'] && Date.now() - caughtUpStart < 120_000) {
      await new Promise((r) => setTimeout(r, 250));
      rows = await countRows();
    }
    const catchUpS = (Date.now() - caughtUpStart) / 1000;
    say(`the worker had recorded ${rows} of ${qr['2xx']} payments ${catchUpS.toFixed(1)} s after the last response`);

    say(`GET /checkstatus/{orderId}: ${opts.seconds} s over ${opts.connections} connections`);
    let n = 0;
    const known = orderIds.slice(0, Math.max(1, Math.min(orderIds.length, 5000)));
    const status = await autocannon({
      url: base,
      connections: opts.connections,
      duration: opts.seconds,
      timeout: 30,
      requests: [{ method: 'GET', headers, setupRequest: (req) => ({ ...req, path: `/checkstatus/${known[n++ % known.length]}` }) }],
    });

    const cpus = os.cpus();
    const line = (name: string, r: autocannon.Result, rate: number, unit: string) =>
      `${name.padEnd(28)} ${rate.toFixed(1).padStart(8)} ${unit.padEnd(12)} p50 ${ms(r.latency.p50).padStart(9)}  p99 ${ms(r.latency.p99).padStart(9)}  ` +
      `(${r['2xx']} ok, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${(r.duration).toFixed(1)} s)`;
    const out = [
      '',
      `Talat payment API benchmark — ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}, ${opts.connections} connections, loopback`,
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
