import fs from 'node:fs';
import path from 'node:path';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Activities } from '../../activities';
import { dataConverterOf, type KeyRing } from './codec';

export const WORKFLOWS_PATH = require.resolve('../../workflows');

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

export async function createWorker(opts: {
  address: string;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  /** A prebuilt bundle (tests build one once); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /** the payload codec's key ring: the same as the client's */
  codecKeys?: KeyRing;
}): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: opts.address });
  try {
    const worker = await Worker.create({
      connection,
      namespace: opts.namespace,
      taskQueue: opts.taskQueue,
      activities: opts.activities,
      ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
      shutdownGraceTime: opts.shutdownGraceTime ?? '10 seconds',
      // A payment's workflow tasks are short (a patch marker, a timer, a local activity): poll for
      // them eagerly and keep many payments cached, so a burst of starts is picked up at once
      // rather than waiting behind the default 10 pollers (bench:engine, schedule-to-start).
      workflowTaskPollerBehavior: { type: 'autoscaling', minimum: 2, maximum: 50, initial: 10 },
      maxConcurrentWorkflowTaskExecutions: 100,
      maxCachedWorkflows: 5000,
      maxConcurrentLocalActivityExecutions: 200,
      // A task for a workflow cached on a worker that was killed waits this long on that worker's
      // sticky queue before any worker may take it (default 10 s): a crashed worker's payments
      // resume within 10 s. A live worker answers its sticky queue in milliseconds.
      stickyQueueScheduleToStartTimeout: '3 seconds',
      ...(opts.codecKeys ? { dataConverter: dataConverterOf(opts.codecKeys) } : {}),
    });
    return { worker, connection };
  } catch (e) {
    await connection.close().catch(() => undefined);
    throw e;
  }
}
