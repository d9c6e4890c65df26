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
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config';
import { createApiKey } from '../src/http/middleware/api-key';
import { freePort } from '../src/stack/temporal';
import { offerSteadily, s2sSummary, scheduleToStart } from './steady';
import { headerLine, intArg, loadAverage, runBench, say } from './support';

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

runBench(
  `bench-bulkhead-${process.pid}`,
  {
    taskQueue: QUEUE,
    scopes: ['payments:write', 'payments:read', 'webhooks:manage'],
    temporalFile: true,
    env: { QR_EXPIRY_S: String(opts.expiry), WEBHOOK_INLINE_PER_ENDPOINT: opts.inline, WEBHOOK_ALLOW_LOOPBACK: 'on' },
  },
  () => opts,
  async (o, stack) => {
    const { base, key, db, config } = stack;
    const client = stack.temporal.client;
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
    const steadyKey = (await createApiKey(db, { name: 'bench-steady', scopes: ['payments:write'], mode: 'sandbox' }))
      .key;

    const createQr = async (apiKey: string, orderId: string) => {
      const res = await fetch(`${base}/qrpayment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ orderId, userId: 'u-bench', amount: 10, customerId: 'c-bench' }),
      });
      if (res.status !== 200) throw new Error(`POST /qrpayment: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };

    say(`storm: ${o.storm} QR payments to expire in ${o.expiry} s, webhook endpoint ${o.dead} (${deadUrl})`);
    const stormIds: string[] = [];
    const stormStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < o.storm) {
          const orderId = `${prefix}storm-${next++}`;
          stormIds.push(`payment-${orderId}`);
          await createQr(key, orderId);
        }
      }),
    );
    const stormCreatedS = (performance.now() - stormStart) / 1000;

    say(`steady: ${o.rate} payments/s for ${o.seconds} s from another merchant while the storm runs`);
    const steadyIds: string[] = [];
    const run = await offerSteadily(o.rate, o.seconds, (i) => {
      const orderId = `${prefix}steady-${i}`;
      steadyIds.push(`payment-${orderId}`);
      return createQr(steadyKey, orderId);
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
        `queues: payments ${QUEUE}, webhooks and background named after it (one worker each, this process); WEBHOOK_INLINE_PER_ENDPOINT ${o.inline}, WEBHOOK_TIMEOUT_MS ${config.webhooks.timeoutMs}`,
        `storm: ${o.storm} QR payments created in ${stormCreatedS.toFixed(1)} s, expiring ${o.expiry} s later, endpoint ${o.dead}`,
        `steady: ${run.offered} QR payments offered at ${o.rate}/s in ${run.seconds.toFixed(1)} s (${run.errors} errors), load average after ${loadAfter}`,
        `storm at the end of the window: ${atWindowEnd}`,
        `storm at the end:               ${atEnd}`,
        `payment workflow-task schedule-to-start, steady merchant during the storm: ${s2sSummary(steady.s2s, steady.histories, steady.unstarted)}`,
        `payment workflow-task schedule-to-start, the storm's own payments:         ${s2sSummary(storm.s2s, storm.histories, storm.unstarted)}`,
        `goal: p99 <= 1000 ms`,
        '',
      ].join('\n'),
    );
  },
);
