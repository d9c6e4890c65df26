/**
 * `npm run bench:engine [-- --payments N --connections C --rate R --seconds S --phases LIST --rounds K --profile DIR]`
 *
 * What a payment costs Temporal and how close the gateway comes to raw Temporal calls on the same
 * server, in one run on this machine. Self-contained and loopback only: its own Postgres cluster
 * and a Temporal dev server run as `npm start` runs it (SQLite file, WAL), a worker, the gateway,
 * a webhook receiver; bounded in count (N payments per phase, default 400) and time (5 minutes).
 *
 * Prints, side by side:
 *  1. history events per paid QR payment (and per paid card payment) with one delivered webhook,
 *     counted from Temporal: the payment workflow and every workflow it starts;
 *  2. callback 200 -> webhook received, p50/p99, one payment at a time;
 *  3. POST /qrpayment creations/s next to raw `client.workflow.start`/s on the same server;
 *  4. POST /qrcallback accepted/s next to raw signals/s on the same server, in 3 interleaved
 *     rounds, with the main thread's CPU per callback and per raw signal;
 *     3 and 4 compare like with like: the worker is stopped for both sides (its workflow tasks,
 *     local activities and webhook POSTs would otherwise share the process and the server with
 *     the gateway only), and the raw calls repeat the options and payload the gateway's own
 *     client sent (recorded from it): what is left is the gateway's own cost;
 *  5. raw starts/s on the embedded server (WAL) next to a dev server with SQLite's defaults;
 *  6. workflow-task schedule-to-start p50/p99/max of the payment workflows at R payments/s offered
 *     (each created, then paid by its signed callback the moment the gateway answered) for S seconds (default 50/s for 10 s); how it is computed: bench/steady.ts. `--steady-only`
 *     runs this phase alone (to try worker settings one at a time).
 *
 * `--phases LIST` (e.g. `--phases 4` or `--phases 3,4,6`) runs only the phases listed (1 and 2 are
 * one loop and run together; 4 needs the payments of 3 and 5 its start options, so 4 and 5 imply 3);
 * all of them by default. `--rounds K` (default 1) runs 3 as K interleaved rounds (gateway, raw,
 * gateway, raw...) of N each, a ratio per round and over all, and the CPU ms per call of Node's main
 * thread, Postgres and the Temporal server on each side (bench/proc-cpu.ts): on a shared machine the
 * two sides then see the same neighbours.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { Client, Connection } from '@temporalio/client';
import { signatureHeaders, signPayload } from '../src/callbacks/verify';
import { cpuPerCall, cpuSnapshot, type CpuSnapshot } from './proc-cpu';
import { percentile, s2sBreakdown, s2sSummary, scheduleToStart } from './steady';
import { watchWorker } from './worker-watch';
import {
  benchPaymentIds,
  flagArg,
  headerLine,
  intArg,
  loadAverage,
  mainThreadCpuMs,
  ms,
  profiled,
  resultLine,
  runBench,
  say,
  type Stack,
} from './support';
import { paymentWorkflowIdOf } from '../src/payments';
import { operationCounts } from '../src/stack/temporal';

const args = () => ({
  payments: intArg('--payments', 400, 5000),
  connections: intArg('--connections', 16, 256),
  rate: intArg('--rate', 50, 500),
  seconds: intArg('--seconds', 10, 60),
  /** only phase 6 (schedule-to-start at R/s offered): for trying worker settings one at a time */
  steadyOnly: flagArg('--steady-only'),
  phases: phasesArg(),
  rounds: intArg('--rounds', 1, 20),
});

/** `--phases LIST`: the phases to run (1-6, comma-separated; 1 and 2 go together, 4 and 5 imply 3); all by default. */
function phasesArg(): Set<number> {
  const a = process.argv.slice(2);
  const i = a.indexOf('--phases');
  if (i < 0) return new Set([1, 2, 3, 4, 5, 6]);
  const list = (a[i + 1] ?? '').split(',').map(Number);
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < 1 || n > 6))
    throw new Error('--phases must be a comma-separated list of phases from 1 to 6, e.g. 3,4');
  const phases = new Set(list);
  if (phases.has(1) || phases.has(2)) phases.add(1).add(2);
  // 4 posts the callbacks of 3's payments; 5 repeats 3's start options on a second server
  if (phases.has(4) || phases.has(5)) phases.add(3);
  return phases;
}

const EventType = {
  StartChildWorkflowExecutionInitiated: 29,
} as const;

const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/**
 * POSTs each JSON body once to `url` over `c` concurrent loops from a worker thread (as autocannon
 * runs its load), so the HTTP client's own work does not share the gateway's thread.
 */
function postFromWorkerThread(
  url: string,
  bodies: string[],
  c: number,
): Promise<{ ok: number; latencies: number[]; seconds: number }> {
  const code = `
    const { parentPort, workerData: { url, bodies, c } } = require('node:worker_threads');
    (async () => {
      let next = 0, ok = 0;
      const latencies = [];
      const t0 = performance.now();
      await Promise.all(Array.from({ length: c }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++];
          const t = performance.now();
          const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
          await res.arrayBuffer();
          latencies.push(performance.now() - t);
          if (res.status === 200) ok++;
        }
      }));
      parentPort.postMessage({ ok, latencies, seconds: (performance.now() - t0) / 1000 });
    })();`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { url, bodies, c } });
    w.once('message', (m: { ok: number; latencies: number[]; seconds: number }) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

/**
 * Pays payments at `rate` per second from a worker thread (an open loop, as a shop's customers
 * and its provider would: each on its own schedule, not waiting for the others): POST /qrpayment,
 * then, the moment it answered, the payment's signed callback. The callbacks are signed in
 * advance (the payment id is derived from the order), so the thread only sends.
 */
function payFromWorkerThread(
  base: string,
  apiKey: string,
  payments: { create: string; callback: string }[],
  rate: number,
): Promise<{ errors: number; firstError: string; seconds: number }> {
  const code = `
    const { parentPort, workerData: { base, apiKey, payments, rate } } = require('node:worker_threads');
    const sleep = (n) => new Promise((r) => setTimeout(r, n));
    (async () => {
      let errors = 0, firstError = '';
      const inflight = [];
      const t0 = performance.now();
      const post = async (path, headers, body) => {
        const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
        const text = await res.text();
        if (res.status !== 200) throw new Error('POST ' + path + ': ' + res.status + ' ' + text.slice(0, 200));
      };
      for (let i = 0; i < payments.length; i++) {
        const wait = t0 + (i * 1000) / rate - performance.now();
        if (wait > 0) await sleep(wait);
        const p = payments[i];
        inflight.push(
          post('/qrpayment', { 'x-api-key': apiKey }, p.create)
            .then(() => post('/qrcallback', {}, p.callback))
            .catch((e) => { errors++; firstError ||= e.message; }),
        );
      }
      await Promise.all(inflight);
      parentPort.postMessage({ errors, firstError, seconds: (performance.now() - t0) / 1000 });
    })();`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { base, apiKey, payments, rate } });
    w.once('message', (m: { errors: number; firstError: string; seconds: number }) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

/** Concurrency `c` loops over `n` calls of `fn(i)` (i from `from`); calls/s over the whole run. */
async function rawRate(
  n: number,
  c: number,
  fn: (i: number) => Promise<unknown>,
  from = 0,
): Promise<{ rate: number; p50: number; p99: number; latencies: number[]; seconds: number }> {
  let next = 0;
  const lat: number[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        const i = from + next++;
        const t = performance.now();
        await fn(i);
        lat.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  return { rate: n / seconds, p50: percentile(lat, 50), p99: percentile(lat, 99), latencies: lat, seconds };
}

runBench(
  `bench-engine-${process.pid}`,
  {
    taskQueue: 'bench-engine',
    scopes: ['payments:write', 'payments:read', 'webhooks:manage'],
    temporalFile: true,
    env: {
      CALLBACK_MAX_AGE_S: '3600',
      SIMULATORS: 'on',
      QR_EXPIRY_S: '600',
      WEBHOOK_ALLOW_LOOPBACK: 'on',
    },
  },
  args,
  async (opts, stack: Stack) => {
    const { base, key, config, db, temporal: t } = stack;
    const client = t.client;
    const load = loadAverage();
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const prefix = `eng-${process.pid}-`;

    // a webhook receiver on loopback that notes when each order's event arrives
    const arrivals = new Map<string, number>();
    // every POST's webhook-id by order: a retry repeats its id; two ids for one order's one
    // transition would be a webhook sent twice
    const webhookIds = new Map<string, string[]>();
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { orderId?: string } };
          const orderId = body.data?.orderId;
          if (orderId) {
            if (!arrivals.has(orderId)) arrivals.set(orderId, performance.now());
            const seen = webhookIds.get(orderId) ?? [];
            seen.push(String(req.headers['webhook-id']));
            webhookIds.set(orderId, seen);
          }
        } catch {
          /* not ours */
        }
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const reg = await fetch(`${base}/webhooks/endpoints`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ url: hookUrl, publicPayments: true }),
    });
    if (reg.status !== 201) throw new Error(`webhook endpoint: ${reg.status} ${await reg.text()}`);

    const createQr = async (orderId: string) => {
      const res = await fetch(`${base}/qrpayment`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ orderId, userId: 'u-bench', amount: 123.45, customerId: 'c-bench' }),
      });
      if (res.status !== 200) throw new Error(`POST /qrpayment: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { body: { paymentId: string } }).body.paymentId;
    };
    /** the payments row: its id is what the provider's callback names */
    const paymentRow = async (orderId: string) => {
      for (let i = 0; i < 400; i++) {
        const row = (await db('payments').where({ order_id: orderId }).first('id', 'provider_ref', 'workflow_id')) as
          { id: string; provider_ref: string | null; workflow_id: string } | undefined;
        if (row) return row;
        await sleep(5);
      }
      throw new Error(`no payments row for ${orderId}`);
    };
    const qrCallback = (orderId: string, paymentId: string) =>
      JSON.stringify(
        signPayload(config.callbacks.providers.QR.secret, {
          paymentId,
          status: 'success',
          amount: 123.45,
          orderId,
          timestamp: new Date().toISOString(),
        }),
      );
    const postCallback = async (body: string) => {
      const res = await fetch(`${base}/qrcallback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      if (res.status !== 200) throw new Error(`POST /qrcallback: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    const waitArrival = async (orderId: string) => {
      for (let i = 0; i < 2000 && !arrivals.has(orderId); i++) await sleep(2);
      const at = arrivals.get(orderId);
      if (at === undefined) throw new Error(`no webhook for ${orderId}`);
      return at;
    };

    /**
     * After the load: every payment paid in Postgres and its webhook received, exactly once per
     * webhook-id (waited for up to 60 s). What an overload must not cost: a payment left behind,
     * or one transition's webhook sent under two ids.
     */
    const settledAfterLoad = async (orderIds: string[]): Promise<string> => {
      const t0 = performance.now();
      const missing = () => orderIds.filter((o) => !arrivals.has(o));
      while (missing().length > 0 && performance.now() - t0 < 60_000) await sleep(200);
      const waited = (performance.now() - t0) / 1000;
      const rows: { status: string; n: string }[] = await db('payments')
        .whereIn('order_id', orderIds)
        .groupBy('status')
        .select('status', db.raw('count(*) as n'));
      const byStatus = rows.map((x) => `${x.status} ${x.n}`).join(', ');
      let repeated = 0;
      let twoIds = 0;
      for (const o of orderIds) {
        const seen = webhookIds.get(o) ?? [];
        if (new Set(seen).size > 1) twoIds++;
        else if (seen.length > 1) repeated++;
      }
      return (
        `  after the load: payments in Postgres ${byStatus || 'none'}; webhooks received for ${orderIds.length - missing().length} of ${orderIds.length} ` +
        `(waited ${waited.toFixed(1)} s more once the histories were read); ${repeated} sent again with the same webhook-id, ${twoIds} orders with two webhook-ids`
      );
    };

    /** R payments/s offered for S seconds; the schedule-to-start line (the load average at its end beside it) */
    const steadyPhase = async (): Promise<string> => {
      say(`offered load: ${opts.rate} payments/s for ${opts.seconds} s, then schedule-to-start from the histories`);
      const ids: string[] = [];
      const orderIds: string[] = [];
      // a payment offered is a payment paid: created, then its signed callback the moment the
      // gateway answered (its settle step's workflow task counts too, not only the first one);
      // sent from a worker thread, as a shop's clients are not in Talat's process
      const payments = Array.from({ length: opts.rate * opts.seconds }, (_, i) => {
        const orderId = `${prefix}steady-${i}`;
        orderIds.push(orderId);
        const own = benchPaymentIds(config.identity.secret, stack.keyId, orderId);
        ids.push(own.workflowId);
        return {
          create: JSON.stringify({ orderId, userId: 'u-bench', amount: 123.45, customerId: 'c-bench' }),
          callback: qrCallback(orderId, own.paymentId),
        };
      });
      const pgDir = path.join(stack.dataDir, 'pg');
      const watch = watchWorker(
        stack.temporal.workerMetricsPort,
        'bench-engine',
        path.join(stack.dataDir, 'temporal.db-wal'),
      );
      const [c0, p0, t0] = [cpuSnapshot(pgDir), process.cpuUsage(), performance.now()];
      const paid = await profiled('steady', () => payFromWorkerThread(base, key, payments, opts.rate));
      const [c1, p1, wall] = [cpuSnapshot(pgDir), process.cpuUsage(), performance.now() - t0];
      const workerLine = await watch.stop();
      const run = { ...paid, offered: payments.length };
      // how busy each part was while the load ran, in % of one core (the machine has os.cpus() of them)
      const busy = (ms: number) => `${((ms / wall) * 100).toFixed(0)}%`;
      const processMs = (p1.user + p1.system - p0.user - p0.system) / 1000;
      const cpuLine =
        `  CPU while offered (% of one core, ${os.cpus().length} cores): Talat's main thread ${busy(c1.node - c0.node)}, ` +
        `Talat's process (with its workflow threads and the load generator's thread) ${busy(processMs)}, ` +
        `Postgres ${busy(c1.postgres - c0.postgres)}, Temporal server ${busy(c1.temporal - c0.temporal)}`;
      const loadAfter = loadAverage();
      if (run.firstError) say(`offered load: ${run.errors} failed, the first: ${run.firstError}`);
      const r = await scheduleToStart(client, ids);
      const outcome = await settledAfterLoad(orderIds);
      const { s2s, histories, unstarted } = r;
      return (
        `workflow-task schedule-to-start at ${opts.rate}/s offered, paid (${run.offered} payments in ${run.seconds.toFixed(1)} s, ${run.errors} errors, load average after ${loadAfter}): ` +
        s2sSummary(s2s, histories, unstarted) +
        `\n  by task: ${s2sBreakdown(r)}\n${cpuLine}\n${workerLine}\n${outcome}`
      );
    };
    const run = (n: number) => opts.phases.has(n);
    if (opts.steadyOnly || (opts.phases.size === 1 && run(6))) {
      const steady = await steadyPhase();
      receiver.close();
      process.stdout.write(['', headerLine('engine (--steady-only)', opts.connections, load), steady, ''].join('\n'));
      return;
    }

    /** events of a workflow and of every workflow it started as a child, after all closed */
    const countEvents = async (workflowId: string): Promise<{ total: number; parts: string[] }> => {
      const parts: string[] = [];
      let total = 0;
      const queue = [workflowId];
      while (queue.length) {
        const id = queue.shift()!;
        const h = client.workflow.getHandle(id);
        await h.result().catch(() => undefined);
        const { events } = await h.fetchHistory();
        total += events?.length ?? 0;
        parts.push(`${id.replace(prefix, '')}: ${events?.length ?? 0}`);
        for (const e of events ?? [])
          if (
            e.eventType === EventType.StartChildWorkflowExecutionInitiated &&
            e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId
          )
            queue.push(e.startChildWorkflowExecutionInitiatedEventAttributes.workflowId);
      }
      return { total, parts };
    };

    /**
     * The dev server's visibility writes so far, by operation, from its own Prometheus metrics
     * (visibility_persistence_latency_count: one per write of the visibility store).
     */
    const visibilityWrites = () => operationCounts([t.metricsPort], 'visibility_persistence_latency_count');

    // 1 + 2: one payment at a time, paid by a signed callback the moment the gateway answered
    say('one payment at a time: events per payment, callback 200 -> webhook received');
    const latencies: number[] = [];
    const qrEvents: { total: number; parts: string[] }[] = [];
    // visibility writes per QR payment: the first 5 payments, each waited to its close
    const visibility0 = run(1) ? await visibilityWrites() : new Map<string, number>();
    let visibility1 = visibility0;
    for (let i = 0; i < (run(1) ? 20 : 0); i++) {
      const orderId = `${prefix}low-${i}`;
      await createQr(orderId);
      const { id } = await paymentRow(orderId);
      const body = qrCallback(orderId, id);
      await postCallback(body);
      const ok = performance.now();
      latencies.push((await waitArrival(orderId)) - ok);
      if (i < 5) qrEvents.push(await countEvents(paymentWorkflowIdOf(id)));
      if (i === 4) {
        // the close's write is made by the server's visibility queue shortly after the close
        for (let j = 0; j < 100; j++) {
          visibility1 = await visibilityWrites();
          if (
            (visibility1.get('RecordWorkflowExecutionClosed') ?? 0) -
              (visibility0.get('RecordWorkflowExecutionClosed') ?? 0) >=
            5
          )
            break;
          await sleep(50);
        }
      }
    }
    const visibilityPerPayment = [...visibility1]
      .map(([op, n]) => [op, (n - (visibility0.get(op) ?? 0)) / 5] as const)
      .filter(([, n]) => n > 0);
    // card: charge at the sandbox provider, then its signed callback
    const cardEvents: { total: number; parts: string[] }[] = [];
    for (let i = 0; i < (run(1) ? 3 : 0); i++) {
      const orderId = `${prefix}card-${i}`;
      const form = new URLSearchParams({ orderId, userId: 'u-bench', amount: '250.50', token: 'tok_bench' }).toString();
      const res = await fetch(`${base}/cardpayment`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-api-key': key },
        body: form,
      });
      if (res.status !== 200) throw new Error(`POST /cardpayment: ${res.status} ${await res.text()}`);
      let row = await paymentRow(orderId);
      for (let j = 0; j < 400 && !row.provider_ref; j++) row = (await sleep(5), await paymentRow(orderId));
      const cb = new URLSearchParams({
        objectId: row.provider_ref ?? '',
        token: 'tok_bench',
        status: 'true',
        message: '',
        saveCard: 'false',
      }).toString();
      const cres = await fetch(`${base}/callback`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...signatureHeaders(config.callbacks.providers.CARD.secret, cb),
        },
        body: cb,
        redirect: 'manual',
      });
      if (cres.status >= 400) throw new Error(`POST /callback: ${cres.status} ${await cres.text()}`);
      await waitArrival(orderId);
      cardEvents.push(await countEvents((await paymentRow(orderId)).workflow_id));
    }

    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
    const line = (name: string, rate: number, unit: string, p50: number, p99: number) =>
      `${name.padEnd(44)} ${rate.toFixed(1).padStart(8)} ${unit.padEnd(9)} p50 ${ms(p50).padStart(9)}  p99 ${ms(p99).padStart(9)}`;
    const mean = (xs: { total: number }[]) => xs.reduce((a, x) => a + x.total, 0) / Math.max(1, xs.length);
    const range = (xs: { total: number }[]) =>
      `${Math.min(...xs.map((x) => x.total))}-${Math.max(...xs.map((x) => x.total))}`;
    const out: string[] = [];
    if (run(1))
      out.push(
        `history events, paid QR payment + 1 webhook     ${range(qrEvents)} (mean ${mean(qrEvents).toFixed(1)}; ${qrEvents[0]?.parts.join(', ')})`,
        `Temporal visibility writes per paid QR payment  ${visibilityPerPayment.reduce((a, [, n]) => a + n, 0).toFixed(1)} (${visibilityPerPayment.map(([op, n]) => `${op} ${n.toFixed(1)}`).join(', ')}; from the dev server's metrics, 5 payments)`,
        `history events, paid card payment + 1 webhook   ${range(cardEvents)} (mean ${mean(cardEvents).toFixed(1)}; ${cardEvents[0]?.parts.join(', ')})`,
        `callback 200 -> webhook received (1 at a time)  p50 ${ms(percentile(latencies, 50))}  p99 ${ms(percentile(latencies, 99))}  (${latencies.length} payments)`,
      );

    // 3 + 4 compare the gateway with the very Temporal calls it makes, like with like: the worker
    // is stopped for both (no workflow task, local activity or webhook POST shares the process or
    // the server with either side), and the raw calls repeat the gateway's own start options
    // (memo, search attributes, policies, input) and signal payload, recorded from its client.
    type StartArgs = Parameters<typeof client.workflow.start>;
    const rawQueue = `bench-raw-${process.pid}`;
    let startOf: ((c: Client, tag: string) => (i: number) => Promise<unknown>) | undefined;
    let embeddedStarts: { rate: number; p50: number; p99: number } | undefined;
    const callbackOrders: string[] = [];
    if (run(3)) {
      if (!run(1)) {
        // without 1 + 2 the gateway is cold: a few creations first, as 1 + 2 would have made
        say('warming up: 20 creations one at a time');
        for (let i = 0; i < 20; i++) await createQr(`${prefix}warm-${i}`);
      }
      await stack.stopWorker();
      let gatewayStart: StartArgs | undefined;
      let gatewaySignal:
        { def: Parameters<ReturnType<typeof client.workflow.getHandle>['signal']>[0]; args: unknown[] } | undefined;
      const start0 = client.workflow.start.bind(client.workflow);
      const getHandle0 = client.workflow.getHandle.bind(client.workflow);
      client.workflow.start = ((...a: StartArgs) => (
        (gatewayStart ??= a),
        start0(...a)
      )) as typeof client.workflow.start;
      client.workflow.getHandle = ((...a: Parameters<typeof getHandle0>) => {
        const h = getHandle0(...a);
        const signal0 = h.signal.bind(h);
        h.signal = ((def: never, ...args: unknown[]) => (
          (gatewaySignal ??= { def, args }),
          signal0(def, ...(args as []))
        )) as typeof h.signal;
        return h;
      }) as typeof client.workflow.getHandle;
      const restoreClient = () => {
        client.workflow.start = start0;
        client.workflow.getHandle = getHandle0;
      };

      // 3: creations through the gateway, then raw starts of the same calls on a queue no worker
      // polls; K rounds of both in turn
      const pgDir = path.join(stack.dataDir, 'pg');
      const zero: CpuSnapshot = { node: 0, postgres: 0, temporal: 0 };
      const add = (t: CpuSnapshot, a: CpuSnapshot, b: CpuSnapshot) => {
        for (const k of ['node', 'postgres', 'temporal'] as const) t[k] += b[k] - a[k];
      };
      const cpuGateway = { ...zero };
      const cpuRaw = { ...zero };
      let startType: StartArgs[0] | undefined;
      let startOpts: StartArgs[1] | undefined;
      const rawStart =
        (c: Client, tag: string, offset = 0) =>
        (i: number) =>
          c.workflow.start(startType!, {
            ...startOpts!,
            taskQueue: rawQueue,
            workflowId: `raw-${tag}-${process.pid}-${offset + i}`,
          } as StartArgs[1]);
      startOf = rawStart;
      const rounds: { qr: autocannon.Result; qrRate: number; raw: { rate: number; p50: number; p99: number } }[] = [];
      for (let k = 0; k < opts.rounds; k++) {
        const tag = opts.rounds > 1 ? ` (round ${k + 1} of ${opts.rounds})` : '';
        say(`POST /qrpayment: ${opts.payments} payments over ${opts.connections} connections (worker stopped)${tag}`);
        const c0 = cpuSnapshot(pgDir);
        const qr = await profiled(`gateway qrpayment${opts.rounds > 1 ? ` ${k + 1}` : ''}`, () =>
          autocannon({
            url: `${base}/qrpayment`,
            workers: 1,
            connections: opts.connections,
            amount: opts.payments,
            // autocannon ends a run with `amount` at its next sample tick (every sampleInt ms, 1 s by
            // default), so `duration` was the time of the last response rounded UP to a second
            // (300 creations in 3.2 s -> 4.0 s: 75/s, not 94/s); the raw side is timed exactly
            sampleInt: 10,
            timeout: 30,
            method: 'POST',
            headers,
            idReplacement: true,
            body: JSON.stringify({
              orderId: `${prefix}tp-${k}-[<id>]`,
              userId: 'u-bench',
              amount: 123.45,
              customerId: 'c-bench',
            }),
          }),
        );
        if (!gatewayStart) throw new Error('the gateway made no workflow start');
        [startType, startOpts] = gatewayStart;
        say(
          `raw client.workflow.start with the gateway's options: ${opts.payments} over ${opts.connections} concurrent callers${tag}`,
        );
        const c1 = cpuSnapshot(pgDir);
        const raw = await rawRate(opts.payments, opts.connections, rawStart(client, 'a', k * opts.payments));
        const c2 = cpuSnapshot(pgDir);
        add(cpuGateway, c0, c1);
        add(cpuRaw, c1, c2);
        rounds.push({ qr, qrRate: qr['2xx'] / qr.duration, raw });
      }
      const createdOk = rounds.reduce((a, r) => a + r.qr['2xx'], 0);
      const starts = rounds[0].raw;
      for (const [k, r] of rounds.entries()) {
        const tag = opts.rounds > 1 ? ` [round ${k + 1}]` : '';
        out.push(
          resultLine(`POST /qrpayment (creations, worker stopped)${tag}`, 44, r.qr, r.qrRate, 'payments/s'),
          line(`raw workflow.start, the gateway's options${tag}`, r.raw.rate, 'starts/s', r.raw.p50, r.raw.p99),
          `  ratio gateway / raw starts${tag}: ${ratio(r.qrRate, r.raw.rate)}`,
        );
      }
      if (opts.rounds > 1) {
        // both sides over all rounds: calls / seconds spent
        const gw = createdOk / rounds.reduce((a, r) => a + r.qr.duration, 0);
        const rw = (opts.payments * rounds.length) / rounds.reduce((a, r) => a + opts.payments / r.raw.rate, 0);
        out.push(
          `over ${rounds.length} rounds: gateway ${gw.toFixed(1)} payments/s, raw ${rw.toFixed(1)} starts/s, ratio ${ratio(gw, rw)}`,
        );
      }
      out.push(
        `  gateway creations, ${cpuPerCall(zero, cpuGateway, createdOk)}`,
        `  raw starts,        ${cpuPerCall(zero, cpuRaw, opts.payments * rounds.length)}`,
      );
      if (run(5)) embeddedStarts = starts;

      if (run(4)) {
        // 4: accepted callbacks for the payments just created, then raw signals (the gateway's payload) to the raw workflows
        const rows: { id: string; order_id: string }[] = [];
        for (let i = 0; i < 600 && rows.length < createdOk; i++) {
          rows.splice(
            0,
            rows.length,
            ...(await db('payments').where('order_id', 'like', `${prefix}tp-%`).select('id', 'order_id')),
          );
          if (rows.length < createdOk) await sleep(100);
        }
        // in ROUNDS turns, the gateway's callbacks then as many raw signals: a change of the machine's
        // load hits both sides; the main thread's CPU per call is the steadier figure on a shared machine
        const ROUNDS = 3;
        say(
          `POST /qrcallback: ${rows.length} callbacks, then raw signals with the gateway's payload, in ${ROUNDS} rounds over ${opts.connections} connections (worker stopped)`,
        );
        const bodies = rows.map((r) => qrCallback(r.order_id, r.id));
        callbackOrders.push(...rows.map((r) => r.order_id));
        const gw = { ok: 0, seconds: 0, cpuMs: 0, latencies: [] as number[] };
        // the gateway's Postgres queries while it answers the callbacks: how many, and their latency
        // (knex's query events: a transaction's BEGIN and COMMIT are not among them)
        const pgQueries = { on: false, started: new Map<string, number>(), latencies: [] as number[] };
        const onQuery = (q: { __knexQueryUid?: string }) =>
          pgQueries.on && q.__knexQueryUid && pgQueries.started.set(q.__knexQueryUid, performance.now());
        const onResponse = (_r: unknown, q: { __knexQueryUid?: string }) => {
          const t = q.__knexQueryUid ? pgQueries.started.get(q.__knexQueryUid) : undefined;
          if (t !== undefined) pgQueries.latencies.push(performance.now() - t);
        };
        db.on('query', onQuery).on('query-response', onResponse).on('query-error', onResponse);
        const raw = { n: 0, seconds: 0, cpuMs: 0, latencies: [] as number[] };
        for (let round = 0; round < ROUNDS; round++) {
          const part = bodies.slice(
            Math.floor((round * bodies.length) / ROUNDS),
            Math.floor(((round + 1) * bodies.length) / ROUNDS),
          );
          let cpu0 = mainThreadCpuMs();
          pgQueries.on = true;
          const g = await profiled(`gateway qrcallback round ${round + 1}`, () =>
            postFromWorkerThread(`${base}/qrcallback`, part, opts.connections),
          );
          gw.cpuMs += mainThreadCpuMs() - cpu0;
          pgQueries.on = false;
          gw.ok += g.ok;
          gw.seconds += g.seconds;
          gw.latencies.push(...g.latencies);
          if (!gatewaySignal) throw new Error('the gateway sent no signal');
          const { def: signalDef, args: signalArgs } = gatewaySignal;
          const from = Math.floor((round * opts.payments) / ROUNDS);
          const n = Math.floor(((round + 1) * opts.payments) / ROUNDS) - from;
          cpu0 = mainThreadCpuMs();
          const r = await rawRate(
            n,
            opts.connections,
            (i) => client.workflow.getHandle(`raw-a-${process.pid}-${i}`).signal(signalDef, ...(signalArgs as [])),
            from,
          );
          raw.cpuMs += mainThreadCpuMs() - cpu0;
          raw.n += n;
          raw.seconds += r.seconds;
          raw.latencies.push(...r.latencies);
        }
        const cbRate = gw.ok / gw.seconds;
        const sigRate = raw.n / raw.seconds;
        db.off('query', onQuery).off('query-response', onResponse).off('query-error', onResponse);
        const cbCpu = (1000 * gw.cpuMs) / Math.max(1, gw.ok);
        const sigCpu = (1000 * raw.cpuMs) / Math.max(1, raw.n);
        out.push(
          line(
            'POST /qrcallback (accepted, worker stopped)',
            cbRate,
            'cb/s',
            percentile(gw.latencies, 50),
            percentile(gw.latencies, 99),
          ) +
            `  (${gw.ok} of ${bodies.length} 200; main thread ${cbCpu.toFixed(0)} us CPU/callback; ` +
            `${(pgQueries.latencies.length / Math.max(1, gw.ok)).toFixed(1)} Postgres queries/callback without BEGIN/COMMIT, ` +
            `p50 ${ms(percentile(pgQueries.latencies, 50))} each)`,
          line(
            "raw signals, the gateway's payload",
            sigRate,
            'signals/s',
            percentile(raw.latencies, 50),
            percentile(raw.latencies, 99),
          ) + `  (main thread ${sigCpu.toFixed(0)} us CPU/signal)`,
          `  ratio gateway / raw signals: ${ratio(cbRate, sigRate)} (rate, ${ROUNDS} interleaved rounds); ${ratio(sigCpu, cbCpu)} (raw CPU/signal over gateway CPU/callback, main thread)`,
        );
      }
      restoreClient();

      // the worker again, and the backlog of 3 + 4 worked off before the steady load of 6
      if (run(5) || run(6)) {
        say('worker restarted: waiting for the payments of 4 to be settled and their webhooks received');
        await stack.startWorker();
        for (let i = 0; i < 900 && callbackOrders.some((o) => !arrivals.has(o)); i++) await sleep(100);
      }
    }

    if (run(5)) {
      // 5: raw starts on a dev server with SQLite's default settings, started for the comparison
      say('raw starts on a second dev server with SQLite default settings (file, no pragmas)');
      const plainAddress = await stack.startTemporal({
        dbFile: path.join(stack.dataDir, 'temporal-defaults.db'),
        sqlitePragmas: false,
      });
      const plainConn = await Connection.connect({ address: plainAddress });
      const plain = new Client({ connection: plainConn, namespace: 'default' });
      if (!embeddedStarts || !startOf) throw new Error('phase 5 needs phase 3');
      const starts = embeddedStarts;
      const plainStarts = await rawRate(opts.payments, opts.connections, startOf(plain, 'b'));
      await plainConn.close();
      out.push(
        line('raw starts, embedded server (SQLite WAL)', starts.rate, 'starts/s', starts.p50, starts.p99),
        line(
          'raw starts, dev server with SQLite defaults',
          plainStarts.rate,
          'starts/s',
          plainStarts.p50,
          plainStarts.p99,
        ),
        `  ratio embedded / defaults: ${ratio(starts.rate, plainStarts.rate)}`,
      );
    }

    // 6: payments offered at a steady rate; schedule-to-start of every workflow task of theirs
    if (run(6)) out.push(await steadyPhase());
    receiver.close();
    process.stdout.write(
      [
        '',
        headerLine('engine', opts.connections, load) +
          `, after ${loadAverage()}, phases ${[...opts.phases].sort().join(',')}`,
        ...out,
        '',
      ].join('\n'),
    );
  },
);
