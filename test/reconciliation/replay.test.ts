/**
 * The recorded history of a reconciliation run (waited for its file, polled, reconciled, told the
 * operator) replays against today's workflow code: a change to the workflow's commands must be
 * versioned (a new type or patched()). Its payloads are kept decrypted (the keys are generated per
 * data directory), as test/replay's fixtures are.
 *
 * Record it again after an intended, versioned change:
 * RECORD_REPLAY_FIXTURES=reconciliation npx jest test/reconciliation/replay.test.ts
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { settlementKey } from '../../src/reconciliation';
import { taskQueueOf } from '../../src/domain/temporal';
import { createSettlementStore } from '../../src/reconciliation/files';
import { findTemporalCli } from '../../src/stack/temporal';
import { decrypted } from '../support/history';
import { startSmtpSink } from '../../src/simulators/smtp-sink';
import { historyFromJson } from '../../src/temporal/history';
import { createTestStack, uniq, waitFor } from '../support/stack';
import { generateDay, settlementEnv } from './generate';

const FIXTURE = path.join(__dirname, '..', 'replay', 'reconciliation.history.json');

if (process.env.RECORD_REPLAY_FIXTURES === 'reconciliation') {
  it('records a run that waited for its file', async () => {
    const smtp = await startSmtpSink();
    const tag = randomUUID().slice(0, 6);
    const stack = await createTestStack({
      env: {
        ...settlementEnv(smtp.url),
      },
    });
    try {
      const date = '2025-05-05';
      const day = await generateDay(stack.db, 'card', date, 60, `${tag}rp`);
      const workflowId = uniq('recon-replay');
      const handle = await stack.client.workflow.start('reconcileSettlementWorkflow', {
        taskQueue: taskQueueOf('background', stack.taskQueue),
        workflowId,
        args: [{ provider: 'card', mode: 'sandbox', date, fileWaitSeconds: 60, filePollSeconds: 1 }],
      });
      await waitFor(async () => (await handle.fetchHistory()).events!.some((e) => e.timerStartedEventAttributes));
      await createSettlementStore(stack.config).put(settlementKey('card', date), day.text);
      await handle.result();
      const shown = spawnSync(
        findTemporalCli(process.env.TEMPORAL_CLI_PATH),
        ['workflow', 'show', '--workflow-id', workflowId, '--address', process.env.TALAT_TEST_TEMPORAL_ADDRESS!].concat(
          ['--namespace', 'default', '--output', 'json'],
        ),
        { encoding: 'utf8' },
      );
      if (shown.status !== 0) throw new Error(shown.stderr);
      const clear = await decrypted(JSON.parse(shown.stdout), stack.config.temporal.codecKeys);
      fs.writeFileSync(FIXTURE, `${JSON.stringify(clear, null, 2)}\n`);
    } finally {
      await stack.close();
      await smtp.stop();
    }
  }, 120_000);
}

it('the recorded reconciliation history replays against the current workflow code', async () => {
  const json = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
  const history = historyFromJson(json);
  expect(history.events!.some((e) => e.timerFiredEventAttributes)).toBe(true);
  const options = {
    workflowBundle: { codePath: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
  };
  await Worker.runReplayHistory(options, history);
  // the check can fail: the same history with its first activity renamed does not replay
  const tampered = JSON.parse(JSON.stringify(json).replace('"settlementFileArrived"', '"somethingElse"'));
  await expect(Worker.runReplayHistory(options, historyFromJson(tampered))).rejects.toBeInstanceOf(
    DeterminismViolationError,
  );
});
