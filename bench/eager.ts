/**
 * `npm run bench:eager [-- --payments N --connections C --rounds R]`
 *
 * Does eager workflow start (`requestEagerStart`) help where the worker shares the process with
 * the gateway (`npm start`)? The server then hands the new workflow's first task back in the
 * start call's answer to that worker, instead of through the task queue. Eager start needs the
 * client and the worker on one NativeConnection, so this runs its own pair on one, with the start
 * options the gateway really sends (recorded from one POST /qrpayment), and starts N payment
 * workflows per batch over C concurrent callers, batches with and without eager start taken in
 * turn (R rounds). Prints starts/s, the start call's p50/p99, how many the server started
 * eagerly, and start -> first workflow task started (from the histories), p50/p99.
 */
import { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { createActivities } from '../activities';
import { sandboxProviders } from '../src/simulators/providers';
import { dataConverterOf } from '../src/temporal/codec';
import { createWorker } from '../src/app/worker';
import { headerLine, intArg, loadAverage, ms, runBench, say } from './support';

const args = () => ({
  payments: intArg('--payments', 150, 2000),
  connections: intArg('--connections', 16, 256),
  rounds: intArg('--rounds', 2, 10),
});
const percentile = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
};
const tsMs = (t: temporal.api.history.v1.IHistoryEvent['eventTime']) =>
  Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

runBench(
  `bench-eager-${process.pid}`,
  {
    taskQueue: 'bench-eager',
    scopes: ['payments:write'],
    temporalFile: true,
    env: { SIMULATORS: 'off', QR_EXPIRY_S: '600' },
  },
  args,
  async (opts, stack) => {
    const { base, key, config, db } = stack;
    const load = loadAverage();
    await stack.stopWorker();
    // the options of one real gateway start
    const gw = stack.temporal.client;
    type StartArgs = Parameters<typeof gw.workflow.start>;
    let recorded: StartArgs | undefined;
    const start0 = gw.workflow.start.bind(gw.workflow);
    gw.workflow.start = ((...a: StartArgs) => ((recorded ??= a), start0(...a))) as typeof gw.workflow.start;
    const res = await fetch(`${base}/qrpayment`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ orderId: `eager-${process.pid}`, userId: 'u-bench', amount: 123.45, customerId: 'c' }),
    });
    if (res.status !== 200 || !recorded) throw new Error(`POST /qrpayment: ${res.status}`);
    gw.workflow.start = start0;
    const [type, options] = recorded;

    say('a worker and a client on one NativeConnection');
    const connection = await NativeConnection.connect({ address: stack.temporal.address });
    const taskQueue = `eager-${process.pid}`;
    const { worker } = await createWorker({
      address: stack.temporal.address,
      namespace: 'default',
      taskQueue,
      codecKeys: config.temporal.codecKeys,
      activities: createActivities({
        db,
        config,
        logger: pino({ level: 'silent' }),
        sandbox: sandboxProviders({ db }),
      }),
      connection,
    });
    const running = worker.run();
    const client = new Client({
      connection,
      namespace: 'default',
      ...(config.temporal.codecKeys ? { dataConverter: dataConverterOf(config.temporal.codecKeys) } : {}),
    });

    type Batch = { rate: number; lat: number[]; eager: number; ids: string[] };
    const batch = async (eager: boolean, round: number): Promise<Batch> => {
      let next = 0;
      let eagerly = 0;
      const lat: number[] = [];
      const ids: string[] = [];
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: opts.connections }, async () => {
          while (next < opts.payments) {
            const workflowId = `eager-${eager ? 'on' : 'off'}-${round}-${next++}-${process.pid}`;
            const t = performance.now();
            const h = await client.workflow.start(type, {
              ...options,
              taskQueue,
              workflowId,
              requestEagerStart: eager,
            } as StartArgs[1]);
            lat.push(performance.now() - t);
            ids.push(workflowId);
            if (h.eagerlyStarted) eagerly++;
          }
        }),
      );
      return { rate: opts.payments / ((performance.now() - t0) / 1000), lat, eager: eagerly, ids };
    };
    const firstTask = async (ids: string[]) => {
      const out: number[] = [];
      for (const id of ids.slice(0, 60)) {
        const { events } = await client.workflow.getHandle(id).fetchHistory();
        const started = events?.find((e) => e.eventType === 1);
        const task = events?.find((e) => e.eventType === 6);
        if (started && task) out.push(tsMs(task.eventTime) - tsMs(started.eventTime));
      }
      return out;
    };
    const rows: Record<'off' | 'on', { rate: number[]; lat: number[]; eager: number; first: number[] }> = {
      off: { rate: [], lat: [], eager: 0, first: [] },
      on: { rate: [], lat: [], eager: 0, first: [] },
    };
    await batch(false, 0); // warm-up
    for (let r = 1; r <= opts.rounds; r++)
      for (const eager of [false, true]) {
        say(`round ${r}: ${opts.payments} starts, eager ${eager ? 'on' : 'off'}`);
        const b = await batch(eager, r);
        await new Promise((done) => setTimeout(done, 2000)); // the worker catches up
        const row = rows[eager ? 'on' : 'off'];
        row.rate.push(b.rate);
        row.lat.push(...b.lat);
        row.eager += b.eager;
        row.first.push(...(await firstTask(b.ids)));
      }
    worker.shutdown();
    await running;
    await connection.close();

    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    process.stdout.write(
      [
        '',
        headerLine('eager start', opts.connections, load) + `, after ${loadAverage()}`,
        `${opts.rounds} rounds of ${opts.payments} payment workflow starts each way, in turn; the gateway's start options; worker and client on one NativeConnection`,
        ...(['off', 'on'] as const).map((k) => {
          const r = rows[k];
          return (
            `requestEagerStart ${k.padEnd(4)} ${mean(r.rate).toFixed(1).padStart(7)} starts/s  start call p50 ${ms(percentile(r.lat, 50))} p99 ${ms(percentile(r.lat, 99))}  ` +
            `started eagerly ${r.eager} of ${opts.rounds * opts.payments}  start -> first task started p50 ${ms(percentile(r.first, 50))} p99 ${ms(percentile(r.first, 99))}`
          );
        }),
        '',
      ].join('\n'),
    );
  },
);
