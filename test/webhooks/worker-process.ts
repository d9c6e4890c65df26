/**
 * A Talat worker in a process of its own, for the crash test: started with `tsx`, it runs the
 * real activities and the prebuilt workflow bundle on TALAT_CRASH_TASK_QUEUE and prints
 * "worker ready" once polling. The test kills it with SIGKILL.
 */
import pino from 'pino';
import { createActivities } from '../../activities';
import { sandboxProviders } from '../../src/simulators/providers';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { installTemporalRuntime } from '../../src/temporal/runtime';
import { createWorker } from '../../src/app/worker';

async function main() {
  const env = process.env;
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATA_DIR: '.data',
    WEBHOOK_ALLOW_LOOPBACK: 'on', // the receiver is on 127.0.0.1
    ...JSON.parse(env.TALAT_CRASH_CONFIG_ENV ?? '{}'),
  });
  const db = createDb(env.TALAT_CRASH_DATABASE_URL!);
  installTemporalRuntime(pino({ level: 'error' }, pino.destination(2)), 'ERROR');
  const { worker } = await createWorker({
    address: env.TALAT_TEST_TEMPORAL_ADDRESS!,
    namespace: 'default',
    taskQueue: env.TALAT_CRASH_TASK_QUEUE!,
    activities: createActivities({ db, config, logger: pino({ level: 'silent' }), sandbox: sandboxProviders({ db }) }),
    workflowBundle: { codePath: env.TALAT_TEST_WORKFLOW_BUNDLE! },
    codecKeys: config.temporal.codecKeys,
  });
  const running = worker.run();
  process.stdout.write('worker ready\n');
  await running;
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});
