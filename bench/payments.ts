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
import autocannon from 'autocannon';
import { headerLine, intArg, loadAverage, resultLine, runBench, say } from './support';

const args = () => ({
  qr: intArg('--qr', 1000, 20_000),
  seconds: intArg('--seconds', 10, 60),
  connections: intArg('--connections', 16, 256),
});

runBench(
  `bench-${process.pid}`,
  { taskQueue: 'bench-payments', scopes: ['payments:write', 'payments:read'] },
  args,
  async (opts, { db, base, key }) => {
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const load = loadAverage();

    // warm-up: a few payments and status checks, not measured
    for (let i = 0; i < 20; i++) {
      await fetch(`${base}/qrpayment`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ orderId: `warm-${i}`, userId: 'u', amount: 10, customerId: 'c' }),
      });
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
      // with `amount` the run ends at autocannon's next sample tick: every 10 ms, not 1 s, so the
      // rate below is not 2xx / (time rounded up to a second) (bench/engine.ts phase 3 says more)
      sampleInt: 10,
      timeout: 30,
      method: 'POST',
      headers,
      idReplacement: true,
      body: JSON.stringify({ orderId: `${prefix}[<id>]`, userId: 'u-bench', amount: 123.45, customerId: 'c-bench' }),
    });

    // let the worker catch up (each workflow writes its payments row), so the status phase
    // measures reads of the record, not the fallback for payments not recorded yet
    const countRows = async () =>
      Number(
        (await db('payments').where('order_id', 'like', `${prefix}%`).count<{ count: string }[]>('* as count'))[0]
          .count,
      );
    const caughtUpStart = Date.now();
    let rows = await countRows();
    while (rows < qr['2xx'] && Date.now() - caughtUpStart < 120_000) {
      await new Promise((r) => setTimeout(r, 250));
      rows = await countRows();
    }
    const catchUpS = (Date.now() - caughtUpStart) / 1000;
    say(`the worker had recorded ${rows} of ${qr['2xx']} payments ${catchUpS.toFixed(1)} s after the last response`);

    say(`GET /checkstatus/{orderId}: ${opts.seconds} s over ${opts.connections} connections`);
    const known: string[] = (await db('payments')
      .where('order_id', 'like', `${prefix}%`)
      .limit(500)
      .pluck('order_id')) as string[];
    if (known.length === 0) throw new Error('no payment was recorded: nothing to check');
    const status = await autocannon({
      url: base,
      workers: 1,
      connections: opts.connections,
      duration: opts.seconds,
      timeout: 30,
      requests: known.map((id) => ({ method: 'GET' as const, path: `/checkstatus/${id}`, headers })),
    });

    const out = [
      '',
      headerLine('payment API', opts.connections, load),
      resultLine('POST /qrpayment (creations)', 28, qr, qr['2xx'] / qr.duration, 'payments/s'),
      resultLine('GET /checkstatus/{orderId}', 28, status, status['2xx'] / status.duration, 'req/s'),
      `workflows: ${rows} of ${qr['2xx']} payments recorded by their workflow ${catchUpS.toFixed(1)} s after the last creation (end to end ${(qr.duration + catchUpS > 0 ? rows / (qr.duration + catchUpS) : 0).toFixed(1)} recorded/s)`,
      '',
    ];
    process.stdout.write(out.join('\n'));
  },
);
