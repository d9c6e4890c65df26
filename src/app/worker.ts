import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Activities } from '../../activities';
import { temporalTlsOptions, type TemporalTlsFiles } from '../temporal/client';
import { taskQueueOf, type QueueKind } from '../domain/temporal';
import { dataConverterOf } from '../temporal/codec';
import type { KeyRing } from '../key-ring';

export const WORKFLOWS_PATH = require.resolve('../../workflows');

/**
 * How the workflows are bundled, wherever they are. `preloadModules`: the workflow code's modules
 * are evaluated once per worker and shared, deep-frozen, by every workflow in the reusable V8
 * context (without it, each new workflow ran all of their module scopes again). They may hold
 * constants and functions only: module state would be shared by every workflow (the lint refuses
 * a module-level `let` or `var` in them; see docs/engine.md).
 */
export const WORKFLOW_BUNDLER_OPTIONS = { preloadModules: [WORKFLOWS_PATH] };

/** Where `npm run build` writes the prebuilt workflow bundle: dist/workflow-bundle.js. */
export const BUILT_BUNDLE_NAME = 'workflow-bundle.js';

/**
 * The prebuilt workflow bundle to load: `explicit` (WORKFLOW_BUNDLE_PATH) when given, else
 * dist/workflow-bundle.js when this module runs compiled from dist/ (never under tsx, where the
 * sources may be newer than any bundle); undefined -> bundle the workflows at start.
 */
export function prebuiltWorkflowBundle(explicit?: string): string | undefined {
  if (explicit) {
    if (!fs.existsSync(explicit))
      throw new Error(`WORKFLOW_BUNDLE_PATH: ${explicit} does not exist (run \`npm run build\`)`);
    return path.resolve(explicit);
  }
  if (!__filename.endsWith('.js')) return undefined;
  const built = path.resolve(__dirname, '..', '..', BUILT_BUNDLE_NAME);
  return fs.existsSync(built) ? built : undefined;
}

/**
 * Each queue's worker settings: its own slots, so one kind of work never takes another's.
 *  - payments: short workflow tasks (a patch marker, a timer, a local activity) polled eagerly,
 *    many payments kept cached (a pending QR payment waits up to its expiry), and local-activity
 *    slots for the settle step (its first webhook attempts are bounded by WEBHOOK_TIMEOUT_MS).
 *  - webhooks: a retry storm to a dead endpoint is throttled here: few workflow tasks at a time
 *    (they share the machine's cores with the payments), many POSTs in flight (they only wait).
 *  - background: bank calls and paid-order processing: few at a time.
 */
export const QUEUE_TUNING: Record<QueueKind, Partial<WorkerOptions>> = {
  payments: {
    workflowTaskPollerBehavior: { type: 'autoscaling', minimum: 2, maximum: 50, initial: 10 },
    maxConcurrentWorkflowTaskExecutions: 500,
    maxCachedWorkflows: 5000,
    maxConcurrentLocalActivityExecutions: 200,
  },
  webhooks: {
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 2 },
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 4 },
    maxConcurrentWorkflowTaskExecutions: 4,
    maxConcurrentActivityTaskExecutions: 100,
    maxConcurrentLocalActivityExecutions: 10,
    maxCachedWorkflows: 1000,
  },
  background: {
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 2 },
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 2 },
    maxConcurrentWorkflowTaskExecutions: 4,
    maxConcurrentActivityTaskExecutions: 20,
    maxConcurrentLocalActivityExecutions: 10,
    maxCachedWorkflows: 500,
  },
};

/** The workflow code, bundled (webpack's progress silenced, its errors on stderr): for workers, tests and builds. */
export async function bundleWorkflows(): Promise<string> {
  const quiet = () => undefined;
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...WORKFLOW_BUNDLER_OPTIONS,
    logger: { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: console.error, log: quiet },
  });
  return code;
}

interface WorkerBase {
  namespace: string;
  activities: Activities;
  /** A prebuilt bundle (tests build one once); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /** the payload codec's key ring: the same as the client's */
  codecKeys?: KeyRing;
  /** refuse payloads the codec did not encrypt (production: NODE_ENV=production) */
  requireEncrypted?: boolean;
  /** TLS / mTLS to the frontend (TEMPORAL_TLS_*): the same as the client's */
  tls?: TemporalTlsFiles;
}

const workerOptions = (
  connection: NativeConnection,
  opts: WorkerBase & { taskQueue: string; kind: QueueKind },
): WorkerOptions => ({
  connection,
  namespace: opts.namespace,
  taskQueue: opts.taskQueue,
  activities: opts.activities,
  ...(opts.workflowBundle
    ? { workflowBundle: opts.workflowBundle }
    : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: WORKFLOW_BUNDLER_OPTIONS }),
  shutdownGraceTime: opts.shutdownGraceTime ?? '10 seconds',
  // A task for a workflow cached on a worker that was killed waits this long on that worker's
  // sticky queue before any worker may take it (default 10 s): a crashed worker's payments
  // resume within 10 s. A live worker answers its sticky queue in milliseconds.
  stickyQueueScheduleToStartTimeout: '3 seconds',
  ...QUEUE_TUNING[opts.kind],
  ...(opts.codecKeys
    ? { dataConverter: dataConverterOf(opts.codecKeys, { requireEncrypted: opts.requireEncrypted }) }
    : {}),
});

const connect = (opts: { address: string; tls?: TemporalTlsFiles }) => {
  const tls = temporalTlsOptions(opts.tls);
  return NativeConnection.connect({ address: opts.address, ...(tls ? { tls } : {}) });
};

/**
 * One worker on `taskQueue` with the settings of `kind` (default payments), on `connection` when
 * given (shared by the queues' workers), else on a connection of its own.
 */
export async function createWorker(
  opts: WorkerBase & { address: string; taskQueue: string; kind?: QueueKind; connection?: NativeConnection },
): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = opts.connection ?? (await connect(opts));
  try {
    const worker = await Worker.create(workerOptions(connection, { ...opts, kind: opts.kind ?? 'payments' }));
    return { worker, connection };
  } catch (e) {
    if (!opts.connection) await connection.close().catch(() => undefined);
    throw e;
  }
}

export interface QueueWorkers {
  /** the workers' one connection */
  connection: NativeConnection;
  /** one worker per polled queue */
  workers: { kind: QueueKind; taskQueue: string; worker: Worker }[];
  /** resolves when every worker stopped; rejects when one failed */
  run(): Promise<void>;
  /** every worker stops polling and drains; resolves once all stopped and the connection closed */
  stop(): Promise<void>;
  /** RUNNING when every worker runs, else the first other state */
  state(): string;
  /** "talat-payments, talat-webhooks, talat-background" */
  describe(): string;
}

/**
 * The workers of the queues `queues` (docs/deploy.md), named after `paymentsQueue`
 * (taskQueueOf), on one connection, the workflows bundled once for all of them.
 */
export async function createQueueWorkers(
  opts: WorkerBase & { address: string; paymentsQueue: string; queues: readonly QueueKind[] },
): Promise<QueueWorkers> {
  const connection = await connect(opts);
  try {
    const workflowBundle = opts.workflowBundle ?? { code: await bundleWorkflows() };
    const workers: QueueWorkers['workers'] = [];
    for (const kind of opts.queues) {
      const taskQueue = taskQueueOf(kind, opts.paymentsQueue);
      workers.push({
        kind,
        taskQueue,
        worker: await Worker.create(workerOptions(connection, { ...opts, workflowBundle, taskQueue, kind })),
      });
    }
    let runs: Promise<void>[] | undefined;
    const run = () => Promise.all((runs ??= workers.map((w) => w.worker.run()))).then(() => undefined);
    let stopped: Promise<void> | undefined;
    const stop = () =>
      (stopped ??= (async () => {
        for (const w of workers) if (w.worker.getState() === 'RUNNING') w.worker.shutdown();
        await Promise.allSettled(runs ?? []);
        await connection.close();
      })());
    return {
      connection,
      workers,
      run,
      stop,
      state: () => workers.map((w) => w.worker.getState()).find((s) => s !== 'RUNNING') ?? 'RUNNING',
      describe: () => workers.map((w) => w.taskQueue).join(', '),
    };
  } catch (e) {
    await connection.close().catch(() => undefined);
    throw e;
  }
}
