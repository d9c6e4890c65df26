/**
 * `npx tsx bench/temporal-shapes.ts [-- --payments N --rounds K]`
 *
 * What a paid payment's options cost the Temporal dev server (as `npm start` runs it: SQLite file,
 * WAL), with nothing of Talat around it: each variant starts N workflows with a start delay and
 * ends each with a signal-with-start (Talat's QR shape), 16 at a time, in K interleaved rounds
 * (default 300 and 5, after a warm-up). Variants: none of Talat's options; its three search
 * attributes at start; PaymentStatus upserted in the last task; both; both with Talat's sizes of
 * input and memo. Prints the dev server's CPU ms per payment by round, each variant's median and
 * median difference from the first, and its persistence requests per payment (its metrics).
 */
import path from 'node:path';
import { Client, Connection, type WorkflowStartOptions } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { OrderIdKey, PaymentMethodKey, PaymentStatusKey } from '../src/domain/search-attributes';
import { freePort, operationCounts, startEmbeddedTemporal } from '../src/stack/temporal';
import { ensureSearchAttributesOn } from '../src/temporal/client';
import { installTemporalRuntime } from '../src/temporal/runtime';
import { createLogger } from '../src/logger';
import { cpuSnapshot } from './proc-cpu';
import { benchData, intArg, loadAverage, runBounded, say } from './support';

const N = intArg('--payments', 300, 2000);
const ROUNDS = intArg('--rounds', 5, 10);
const C = 16;
const QUEUE = 'bench-shapes';

type Variant = { name: string; upsert: boolean; attributes: boolean; bytes: boolean };
const VARIANTS: Variant[] = [
  { name: 'no options', upsert: false, attributes: false, bytes: false },
  { name: '3 search attributes at start', upsert: false, attributes: true, bytes: false },
  { name: 'PaymentStatus upserted at the end', upsert: true, attributes: false, bytes: false },
  { name: 'both (Talat)', upsert: true, attributes: true, bytes: false },
  { name: "both, with Talat's payload sizes", upsert: true, attributes: true, bytes: true },
];
// about the start input's and the memo's sizes in a paid QR payment's history
const INPUT_PAD = 'x'.repeat(1200);
const MEMO = { payment: { pad: 'y'.repeat(550) } };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const { dataDir, stops, stopAll } = benchData(`bench-shapes-${process.pid}`);
runBounded(15, stopAll, async () => {
  const load = loadAverage();
  installTemporalRuntime(createLogger('warn'), 'WARN');
  say('starting the Temporal dev server (own, SQLite file) and a worker');
  const t = await startEmbeddedTemporal({
    port: await freePort(),
    namespace: 'default',
    dbFile: path.join(dataDir, 'temporal.db'),
    dataDir: path.join(__dirname, '..', '.data'),
  });
  stops.push(() => t.stop());
  const connection = await Connection.connect({ address: t.address });
  stops.push(() => connection.close());
  const client = new Client({ connection, namespace: 'default' });
  await ensureSearchAttributesOn(connection, 'default');
  const native = await NativeConnection.connect({ address: t.address });
  const worker = await Worker.create({
    connection: native,
    namespace: 'default',
    taskQueue: QUEUE,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: require.resolve('./temporal-shapes/workflows'),
      logger: {
        log: () => undefined,
        trace: () => undefined,
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: () => undefined,
      },
    }),
    activities: { record: async (status: string) => status },
  });
  const running = worker.run();
  stops.push(async () => {
    worker.shutdown();
    await running;
    await native.close();
  });

  /** persistence requests so far by operation, visibility ones marked (the dev server's metrics) */
  const requests = async (): Promise<Record<string, number>> => {
    const [all, visibility] = await Promise.all([
      operationCounts([t.metricsPort], 'persistence_requests'),
      operationCounts([t.metricsPort], 'visibility_persistence_requests'),
    ]);
    return Object.fromEntries([...all, ...[...visibility].map(([op, n]) => [`visibility ${op}`, n] as const)]);
  };
  const pay = async (v: Variant, id: string) => {
    const options = {
      taskQueue: QUEUE,
      workflowId: id,
      args: [{ upsert: v.upsert, ...(v.bytes ? { pad: INPUT_PAD } : {}) }],
      ...(v.attributes
        ? {
            typedSearchAttributes: [
              { key: OrderIdKey, value: id },
              { key: PaymentMethodKey, value: 'qr' },
              { key: PaymentStatusKey, value: 'pending' },
            ],
          }
        : {}),
      ...(v.bytes ? { memo: MEMO } : {}),
    } satisfies WorkflowStartOptions;
    await client.workflow.start('shapePayment', { ...options, startDelay: '10 minutes' });
    const handle = await client.workflow.signalWithStart('shapePayment', {
      ...options,
      workflowIdConflictPolicy: 'USE_EXISTING',
      signal: 'result',
      signalArgs: [{ status: 'paid' }],
    });
    await handle.result();
  };

  const cpu: Record<string, number[]> = {};
  const perPayment: Record<string, string> = {};
  for (let round = 0; round <= ROUNDS; round++) {
    for (const v of VARIANTS) {
      const n = round === 0 ? 50 : N;
      say(`${round === 0 ? 'warm-up' : `round ${round}/${ROUNDS}`}: ${v.name}, ${n} payments`);
      const ids = Array.from({ length: n }, (_, i) => `shape-${process.pid}-${round}-${VARIANTS.indexOf(v)}-${i}`);
      let next = 0;
      const [a, ra] = [cpuSnapshot(dataDir), await requests()];
      await Promise.all(
        Array.from({ length: C }, async () => {
          while (next < ids.length) await pay(v, ids[next++]);
        }),
      );
      await new Promise((r) => setTimeout(r, 3000)); // the server's queues after the last result
      const [b, rb] = [cpuSnapshot(dataDir), await requests()];
      if (round === 0) continue;
      (cpu[v.name] ??= []).push((b.temporal - a.temporal) / n);
      perPayment[v.name] ??= Object.entries(rb)
        .map(([k, x]) => [k, (x - (ra[k] ?? 0)) / n] as const)
        .filter(([, x]) => x >= 0.05)
        .sort((p, q) => q[1] - p[1])
        .map(([k, x]) => `${k} ${x.toFixed(2)}`)
        .join(', ');
    }
  }
  const base = cpu[VARIANTS[0].name];
  const lines = [
    `Temporal shapes benchmark — ${N} payments per variant and round, ${ROUNDS} interleaved rounds, ${C} concurrent, load average before ${load}`,
    'the dev server CPU ms per payment (rounds; median; median difference from the first variant, round by round):',
    ...VARIANTS.map((v) => {
      const xs = cpu[v.name];
      const diff = median(xs.map((x, i) => x - base[i]));
      return `  ${v.name.padEnd(34)} ${xs.map((x) => x.toFixed(2)).join(' ')}; median ${median(xs).toFixed(2)}; ${diff >= 0 ? '+' : ''}${diff.toFixed(2)}`;
    }),
    'persistence requests per payment (the first measured round):',
    ...VARIANTS.map((v) => `  ${v.name.padEnd(34)} ${perPayment[v.name]}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
});
