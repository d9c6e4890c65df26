/**
 * Production workers refuse payloads the codec did not encrypt: a workflow started, signalled or
 * updated in clear by someone who reaches the Temporal frontend without the codec keys runs no
 * workflow code (its workflow task fails), while encrypted payloads work as before.
 */
import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import { createActivities } from '../../activities';
import { createQueueWorkers } from '../../src/app/worker';
import { AesGcmCodec } from '../../src/temporal/codec';
import { sandboxProviders } from '../../src/simulators/providers';
import { createTestStack, outsiderTemporalClient, testLogger, waitFor, type TestStack } from '../support/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
});
afterAll(() => stack.close());

describe('the codec in production', () => {
  it('decode refuses a payload written without the codec; it still opens encrypted ones', async () => {
    const codec = new AesGcmCodec(stack.config.temporal.codecKeys, { requireEncrypted: true });
    const clear = defaultPayloadConverter.toPayload({ orderId: 'x' });
    await expect(codec.decode([clear])).rejects.toThrow(/not encrypted/);
    const [sealed] = await codec.encode([clear]);
    expect(await codec.decode([sealed])).toEqual([clear]);
  });

  it('a worker with requireEncrypted runs no workflow started in clear; an encrypted start runs', async () => {
    const paymentsQueue = `test-${randomUUID()}`;
    const workers = await createQueueWorkers({
      address: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
      namespace: 'default',
      paymentsQueue,
      queues: ['payments'],
      activities: createActivities({
        db: stack.db,
        config: stack.config,
        logger: testLogger,
        sandbox: sandboxProviders({ db: stack.db }),
      }),
      workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
      shutdownGraceTime: '1 second',
      codecKeys: stack.config.temporal.codecKeys,
      requireEncrypted: true,
    });
    const run = workers.run();
    const raw = await outsiderTemporalClient();
    try {
      const forged = await raw.workflow.start('orderRefundsWorkflow', {
        taskQueue: paymentsQueue,
        workflowId: `forged-${randomUUID()}`,
        args: [{ orderId: 'ORD-X', idleSeconds: 1 }],
      });
      const failedTask = await waitFor(
        async () => {
          const { events } = await forged.fetchHistory();
          return events?.find((e) => e.workflowTaskFailedEventAttributes);
        },
        20_000,
        'a failed workflow task',
      );
      expect(failedTask.workflowTaskFailedEventAttributes?.failure?.message).toMatch(/not encrypted/);
      expect((await forged.describe()).status.name).toBe('RUNNING');
      await forged.terminate('test over');

      const genuine = await stack.client.workflow.start('orderRefundsWorkflow', {
        taskQueue: paymentsQueue,
        workflowId: `genuine-${randomUUID()}`,
        args: [{ orderId: 'ORD-Y', idleSeconds: 1 }],
      });
      await genuine.result();
    } finally {
      await raw.connection.close();
      await workers.stop();
      await run;
    }
  });
});
