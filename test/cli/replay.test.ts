/**
 * `talat replay`, spawned as typed: histories downloaded from the test Temporal (--workflow-id,
 * --since with --task-queue) and exported files (--file) replay against this build's workflows;
 * a history this build cannot reproduce (recorded by other code under the same type, or a
 * recorded fixture altered) exits 1 and names it.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { paymentWorkflowIdOf } from '../../src/payments';
import { dataConverterOf } from '../../src/temporal/codec';
import { paidQr } from '../payments/support';
import { createTestStack, type TestStack } from '../support/stack';
import { apiKey } from '../webhooks/helpers';
import { ROOT, talat } from './support';

jest.setTimeout(240_000);

let stack: TestStack;
let temporal: Record<string, string>;
beforeAll(async () => {
  stack = await createTestStack();
  temporal = {
    TEMPORAL_ADDRESS: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    WORKFLOW_BUNDLE_PATH: process.env.TALAT_TEST_WORKFLOW_BUNDLE!,
  };
});
afterAll(() => stack?.close());

const fixture = (file: string) => path.join(ROOT, 'test', 'replay', file);

describe('talat replay of histories on Temporal', () => {
  let paymentId: string;
  beforeAll(async () => {
    paymentId = (await paidQr(stack, (await apiKey(stack)).key, 120)).paymentId;
  });

  it('--workflow-id and --since with --task-queue: a payment of this build replays, exit 0', async () => {
    const byId = await talat(['replay', '--workflow-id', paymentWorkflowIdOf(paymentId)], temporal);
    expect(byId).toEqual({
      code: 0,
      stdout: `ok    ${paymentWorkflowIdOf(paymentId)} (qrPaymentWorkflowV3)\n1 replayed, 0 non-deterministic\n`,
      stderr: '',
    });
    const recent = await talat(['replay', '--since', '1h', '--task-queue', stack.taskQueue, '--json'], temporal);
    expect(recent.code).toBe(0);
    const lines = recent.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toEqual({ replayed: 1, failed: 0 });
    expect(lines[0]).toMatchObject({ workflowId: paymentWorkflowIdOf(paymentId), ok: true });
  });

  it('a history recorded by other code under the same type: exit 1, FAIL and the reason', async () => {
    const taskQueue = `impostor-${randomUUID()}`;
    const worker = await Worker.create({
      connection: stack.workers!.connection,
      namespace: 'default',
      taskQueue,
      workflowsPath: require.resolve('./fixtures/impostor-workflows'),
      dataConverter: dataConverterOf(stack.config.temporal.codecKeys), // the test client encrypts
    });
    const workflowId = `impostor-${randomUUID()}`;
    await worker.runUntil(
      stack.client.workflow.execute('orderRefundsWorkflow', {
        taskQueue,
        workflowId,
        args: [{ orderId: 'impostor', idleSeconds: 1 }],
        workflowExecutionTimeout: '60 seconds',
      }),
    );
    const [byId, recent] = await Promise.all([
      talat(['replay', '--workflow-id', workflowId], temporal),
      talat(['replay', '--since', '1h', '--task-queue', taskQueue], temporal),
    ]);
    for (const r of [byId, recent]) {
      expect(r).toMatchObject({
        code: 1,
        stdout: expect.stringContaining(`FAIL  ${workflowId} (orderRefundsWorkflow)`),
        stderr: 'talat replay: 1 of 1 histories do not replay: do not roll out this build\n',
      });
      expect(r.stdout).toMatch(/DeterminismViolationError/);
    }
  });

  it('nothing started in the window: exit 0, says so; an unknown id or Temporal down: exit 1', async () => {
    const [none, unknown, down] = await Promise.all([
      talat(['replay', '--since', '1m', '--task-queue', `empty-${randomUUID()}`], temporal),
      talat(['replay', '--workflow-id', 'no-such-workflow'], temporal),
      talat(['replay'], { ...temporal, TEMPORAL_ADDRESS: '127.0.0.1:1' }),
    ]);
    expect(none).toMatchObject({ code: 0, stdout: expect.stringContaining('no histories to replay') });
    expect(unknown).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^talat replay: workflow no-such-workflow: /),
    });
    expect(down).toMatchObject({ code: 1, stderr: expect.stringMatching(/^talat replay: .*127\.0\.0\.1:1/) });
  });
});

describe('talat replay --file', () => {
  it('recorded fixtures replay (exit 0); one altered to issue another activity fails (exit 1)', async () => {
    const good = await talat(
      ['replay', '--file', fixture('qr-payment-v2.history.json'), fixture('refunds.history.json')],
      temporal,
    );
    expect(good).toMatchObject({ code: 0, stdout: expect.stringContaining('2 replayed, 0 non-deterministic') });

    const h = JSON.parse(fs.readFileSync(fixture('qr-payment.history.json'), 'utf8')) as {
      events: { eventType: string; activityTaskScheduledEventAttributes?: { activityType: { name: string } } }[];
    };
    h.events.find(
      (e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
    )!.activityTaskScheduledEventAttributes!.activityType.name = 'someOtherActivity';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-replay-'));
    const tampered = path.join(dir, 'tampered.history.json');
    fs.writeFileSync(tampered, JSON.stringify(h));
    try {
      const bad = await talat(['replay', '--file', tampered, '--json'], temporal);
      expect(bad.code).toBe(1);
      const lines = bad.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toEqual([
        expect.objectContaining({
          workflowId: tampered,
          ok: false,
          error: expect.stringContaining('someOtherActivity'),
        }),
        { replayed: 1, failed: 1 },
      ]);
      expect(bad.stderr).toContain('do not roll out this build');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--since that is not a duration: exit 2', async () => {
    const r = await talat(['replay', '--since', 'yesterday'], temporal);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('--since: "yesterday" is not a duration') });
  });
});
