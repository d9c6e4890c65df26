import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Activities } from '../../activities';
import { dataConverterOf, type KeyRing } from './codec';

export const WORKFLOWS_PATH = require.resolve('../../workflows');

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
  const worker = await Worker.create({
    connection,
    namespace: opts.namespace,
    taskQueue: opts.taskQueue,
    activities: opts.activities,
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    shutdownGraceTime: opts.shutdownGraceTime ?? '10 seconds',
    ...(opts.codecKeys ? { dataConverter: dataConverterOf(opts.codecKeys) } : {}),
  });
  return { worker, connection };
}
