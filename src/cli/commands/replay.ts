/**
 * `talat replay [--since 24h | --workflow-id ID...] [--file history.json...]`: the check to run
 * before rolling out workers. Downloads the histories of this build's workflow types from the
 * configured Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_*, the codec keys: as
 * the worker connects; the embedded dev server of `npm start` otherwise) and replays them with
 * Worker.runReplayHistories against this build's workflow code. Exit 1 on any non-determinism.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import pino from 'pino';
import { loadConfig } from '../../config';
import { BankWorkflowType } from '../../bank';
import { CallbackWorkflowType } from '../../callbacks';
import { PaymentWorkflowType } from '../../payments';
import { RECONCILIATION_WORKFLOW } from '../../reconciliation';
import { RefundsWorkflowType } from '../../refunds';
import { WebhookWorkflowType } from '../../webhooks';
import { prebuiltWorkflowBundle, WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../../app/worker';
import { connectClient } from '../../temporal/client';
import { dataConverterOf } from '../../temporal/codec';
import { historyFromJson } from '../../temporal/history';
import { installTemporalRuntime } from '../../temporal/runtime';
import { CliError, usage } from '../context';

/** `30m`, `24h`, `7d` as milliseconds. */
export function durationMs(s: string): number {
  const m = /^(\d+)(m|h|d)$/.exec(s.trim());
  if (!m || Number(m[1]) === 0) throw usage(`--since: ${JSON.stringify(s)} is not a duration such as 30m, 24h or 7d`);
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}

/** The workflow types this build registers (workflows/index.ts checks them against the contract). */
const TYPES = new Set<string>([
  ...[PaymentWorkflowType, RefundsWorkflowType, CallbackWorkflowType, BankWorkflowType, WebhookWorkflowType].flatMap(
    (types) => Object.values(types),
  ),
  RECONCILIATION_WORKFLOW,
]);

interface Opts {
  since: string;
  workflowId?: string[];
  taskQueue?: string;
  file?: string[];
  max: string;
  json?: boolean;
}

export function replayCommand(program: Command): void {
  program
    .command('replay')
    .description("replay recent workflow histories against this build's workflows: exit 1 on any non-determinism")
    .option('--since <duration>', 'workflows started within this time (30m, 24h, 7d)', '24h')
    .option('--task-queue <queue>', 'only the workflows of this task queue (with --since)')
    .option('--workflow-id <id...>', 'these workflows (their latest run) instead of --since')
    .option('--file <history.json...>', 'histories exported with `temporal workflow show --output json` instead')
    .option('--max <n>', 'replay at most this many histories (the newest first)', '1000')
    .option('--json', 'print one JSON object per history, then a summary')
    .action(async (o: Opts) => {
      const max = Number(o.max);
      if (!Number.isInteger(max) || max < 1)
        throw usage(`--max: ${JSON.stringify(o.max)} is not a positive whole number`);
      const config = loadConfig();
      const types = new Map<string, string>();
      const histories: HistoryAndWorkflowId[] = [];
      let close = async () => undefined as void;
      if (o.file?.length) {
        for (const f of o.file) {
          let json: unknown;
          try {
            json = JSON.parse(fs.readFileSync(f, 'utf8'));
          } catch (e) {
            throw new CliError(`${f}: ${(e as Error).message}`);
          }
          histories.push({ workflowId: f, history: historyFromJson(json) as HistoryAndWorkflowId['history'] });
        }
      } else {
        const address = config.temporal.address ?? `127.0.0.1:${config.temporal.embeddedPort}`;
        let client;
        try {
          // TLS only to a Temporal of TEMPORAL_ADDRESS: the embedded dev server speaks plain TCP
          client = await connectClient(address, config.temporal.namespace, {
            codecKeys: config.temporal.codecKeys,
            tls: config.temporal.address ? config.temporal.tls : undefined,
          });
        } catch (e) {
          throw new CliError(`Temporal at ${address} is unreachable: ${(e as Error).message}`);
        }
        close = () => client.connection.close();
        try {
          if (o.workflowId?.length) {
            for (const id of o.workflowId) {
              const handle = client.workflow.getHandle(id);
              const d = await handle.describe().catch((e: Error) => {
                throw new CliError(`workflow ${id}: ${e.message}`);
              });
              types.set(id, d.type);
              histories.push({ workflowId: id, history: await handle.fetchHistory() });
            }
          } else {
            const after = new Date(Date.now() - durationMs(o.since)).toISOString();
            const queue = o.taskQueue ? ` AND TaskQueue = ${JSON.stringify(o.taskQueue)}` : '';
            for await (const wf of client.workflow.list({ query: `StartTime > "${after}"${queue}` })) {
              if (!TYPES.has(wf.type)) continue; // another application's workflows in the namespace
              if (histories.length >= max) break;
              types.set(wf.workflowId, wf.type);
              histories.push({
                workflowId: wf.workflowId,
                history: await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory(),
              });
            }
          }
        } catch (e) {
          await close();
          throw e instanceof CliError ? e : new CliError(`reading histories from ${address}: ${(e as Error).message}`);
        }
      }
      await close();

      // the SDK's own errors to stderr (its warnings repeat what the report says)
      installTemporalRuntime(pino({ level: 'error' }, pino.destination(2)), 'ERROR');
      const bundle = prebuiltWorkflowBundle(config.temporal.workflowBundlePath);
      const results: { workflowId: string; runId: string; type?: string; ok: boolean; error?: string }[] = [];
      const replayed = Worker.runReplayHistories(
        {
          ...(bundle
            ? { workflowBundle: { codePath: bundle } }
            : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: WORKFLOW_BUNDLER_OPTIONS }),
          dataConverter: dataConverterOf(config.temporal.codecKeys),
          replayName: 'talat-replay',
        },
        histories,
      );
      for await (const r of replayed) {
        const one = {
          workflowId: r.workflowId,
          runId: r.runId,
          ...(types.has(r.workflowId) ? { type: types.get(r.workflowId) } : {}),
          ok: !r.error,
          ...(r.error ? { error: `${r.error.name}: ${r.error.message}` } : {}),
        };
        results.push(one);
        if (o.json) process.stdout.write(`${JSON.stringify(one)}\n`);
        else
          process.stdout.write(
            `${one.ok ? 'ok  ' : 'FAIL'}  ${one.workflowId}${one.type ? ` (${one.type})` : ''}${one.error ? `\n      ${one.error}` : ''}\n`,
          );
      }
      const failed = results.filter((r) => !r.ok).length;
      // --json: JSON lines, the summary last
      const summary = { replayed: results.length, failed };
      process.stdout.write(
        o.json
          ? `${JSON.stringify(summary)}\n`
          : `${
              results.length === 0
                ? `no histories to replay${o.workflowId || o.file ? '' : ` (no workflow of this build started in the last ${o.since})`}`
                : `${results.length} replayed, ${failed} non-deterministic`
            }\n`,
      );
      if (failed)
        throw new CliError(`${failed} of ${results.length} histories do not replay: do not roll out this build`);
    });
}
