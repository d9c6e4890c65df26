/**
 * `npm run bench:callbacks [-- --callbacks N --connections C --worker-stopped --provider P]`
 *
 * Measures, on this machine, accepted signed callbacks per second and their p50/p99 latency;
 * then the same callbacks again as duplicates (the stored first response). `--provider`:
 *  - `qr` (default): POST /qrcallback, the field-signed form (allow-list, HMAC over the canonical
 *    JSON, timestamp, payment lookup, receipt committed with the signal accepted by Temporal);
 *  - `cardnet` or `bankapp`: POST /cardnetcallback or /bankappcallback, the handler form
 *    (X-Timestamp and X-Signature over the raw body; the receipt's finish and the provider's
 *    record store are one statement), on the same QR payments.
 * Self-contained and loopback only: its own Postgres cluster
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
import path from 'node:path';
import autocannon from 'autocannon';
import { signatureHeaders, signPayload } from '../src/callbacks/verify';
import { CALLBACK_PATH_OF } from '../src/callbacks';
import { cpuPerCall, cpuSnapshot } from './proc-cpu';
import { choiceArg, flagArg, headerLine, intArg, loadAverage, resultLine, runBench, say } from './support';

const args = () => ({
  callbacks: intArg('--callbacks', 1000, 10_000),
  connections: intArg('--connections', 16, 256),
  workerStopped: flagArg('--worker-stopped'),
  provider: choiceArg('--provider', ['qr', 'cardnet', 'bankapp'] as const),
});

const stack = {
  taskQueue: 'bench-callbacks',
  scopes: ['payments:write'],
  env: {
    CALLBACK_MAX_AGE_S: '3600', // the callbacks are signed before the run starts
    SIMULATORS: 'off',
  },
};

runBench(
  `bench-callbacks-${process.pid}`,
  stack,
  args,
  async (opts, { dataDir, config, db, base, key, stopWorker, startWorker }) => {
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
      Number(
        (
          await db('payments')
            .where('order_id', 'like', `${prefix}%`)
            .modify((q) => (status ? q.where({ status }) : q))
            .count<{ count: string }[]>('* as count')
        )[0].count,
      );
    await waitUntil('payments recorded', async () => (await count()) >= opts.callbacks);

    const payments: { id: string; order_id: string }[] = await db('payments')
      .where('order_id', 'like', `${prefix}%`)
      .select('id', 'order_id');
    const { provider } = opts;
    const callbackPath = CALLBACK_PATH_OF[provider];
    const timestamp = new Date();
    // one request a line: its body and the headers that go with it (the handler form's signature
    // is in its headers, the QR form's in its body)
    const requestOf = (p: { id: string; order_id: string }): { body: string; headers: Record<string, string> } => {
      if (provider === 'qr') {
        const body = signPayload(config.callbacks.providers.QR.secret, {
          paymentId: p.id,
          status: 'success',
          amount: 123.45,
          orderId: p.order_id,
          timestamp: timestamp.toISOString(),
        });
        return { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
      }
      const body = JSON.stringify({
        orderId: p.order_id,
        paymentId: p.id,
        success: true,
        userId: 'u-bench',
        amount: 123.45,
      });
      const secret = config.callbacks.providers[provider === 'cardnet' ? 'CARDNET' : 'BANKAPP'].secret;
      return {
        body,
        headers: {
          'content-type': 'application/json',
          ...signatureHeaders(secret, body, Math.floor(timestamp.getTime() / 1000)),
        },
      };
    };
    const file = path.join(dataDir, 'callbacks.jsonl');
    fs.writeFileSync(file, payments.map((p) => JSON.stringify(requestOf(p))).join('\n') + '\n');
    process.env.TALAT_BENCH_CALLBACKS = file;

    const load = loadAverage();
    const fire = (title: string) => {
      say(`${title}: ${payments.length} callbacks over ${opts.connections} connections`);
      return autocannon({
        url: base,
        workers: 1,
        connections: opts.connections,
        amount: payments.length,
        // with `amount` the run ends at autocannon's next sample tick: every 10 ms, not 1 s, so the
        // rate below is not 2xx / (time rounded up to a second) (bench/engine.ts phase 3 says more)
        sampleInt: 10,
        timeout: 30,
        requests: [
          {
            method: 'POST',
            path: callbackPath,
            setupRequest: path.join(__dirname, 'callbacks-request.cjs'),
          },
        ],
      } as autocannon.Options);
    };
    // autocannon's workers: each worker thread loads callbacks-request.cjs afresh, so with one
    // worker every request of a run is a different callback
    if (opts.workerStopped) await stopWorker();
    // CPU per callback from /proc (steadier than the rate on a shared machine): the gateway's main
    // thread (the load generator is on a worker thread), Postgres and the Temporal server
    const pgDir = path.join(dataDir, 'pg');
    const cpu0 = cpuSnapshot(pgDir);
    const accepted = await fire(`POST ${callbackPath}, each callback new`);
    const cpuAccepted = cpuPerCall(cpu0, cpuSnapshot(pgDir), accepted['2xx']);
    if (opts.workerStopped) await startWorker();
    const receipts = Number((await db('callback_receipts').count<{ count: string }[]>('* as count'))[0].count);
    const settleS = await waitUntil('payments paid', async () => (await count('paid')) >= receipts);
    const cpu1 = cpuSnapshot(pgDir);
    const duplicates = await fire(`POST ${callbackPath}, each callback again (duplicates)`);
    const cpuDuplicates = cpuPerCall(cpu1, cpuSnapshot(pgDir), duplicates['2xx']);
    const receiptsAfter = Number((await db('callback_receipts').count<{ count: string }[]>('* as count'))[0].count);

    const line = (name: string, r: autocannon.Result) => resultLine(name, 30, r, r['2xx'] / r.duration, 'callbacks/s');
    process.stdout.write(
      [
        '',
        headerLine('callback API', opts.connections, load) +
          (opts.workerStopped ? ', worker stopped while accepting' : ''),
        line(`accepted (new) ${callbackPath}`, accepted),
        `  ${cpuAccepted}${opts.workerStopped ? '' : ' (the worker settling payments meanwhile included)'}`,
        line(`duplicate ${callbackPath}`, duplicates),
        `  ${cpuDuplicates}`,
        `receipts: ${receipts} after the first pass, ${receiptsAfter} after the duplicates; every payment paid ${settleS.toFixed(1)} s after the last accepted callback`,
        '',
      ].join('\n'),
    );
  },
);
