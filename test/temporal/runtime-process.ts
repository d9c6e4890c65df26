/**
 * A process with the Temporal runtime installed as Talat's processes install it, for
 * test/temporal/runtime-logs.test.ts: `node --import tsx test/temporal/runtime-process.ts ADDRESS`
 * logs at debug to stdout (one write per line), runs a worker with one activity on a fresh task
 * queue for a moment, then shuts it down and ends.
 */
import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createLogger, createLogOutput } from '../../src/logger';
import { installTemporalRuntime } from '../../src/temporal/runtime';

const [address] = process.argv.slice(2);
const logger = createLogger('debug', createLogOutput({ buffered: false }));
installTemporalRuntime(logger, 'DEBUG');

void (async () => {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue: `runtime-logs-${randomUUID()}`,
    activities: { noop: async () => undefined },
  });
  const run = worker.run();
  await new Promise((r) => setTimeout(r, 1500));
  worker.shutdown();
  await run;
  await connection.close();
})();
