/**
 * docs/reconciliation.md stays true: its example files parse as the formats they show, and each
 * shell command in it runs as printed (output and exit code checked).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isCalendarDay, SETTLEMENT_PROVIDERS, type SettlementProvider } from '../../src/reconciliation';
import { parseSettlementFile } from '../../src/reconciliation/parsers';
import { testDatabaseUrl, workerDb } from '../support/stack';

const ROOT = path.resolve(__dirname, '..', '..');
const doc = fs.readFileSync(path.join(ROOT, 'docs', 'reconciliation.md'), 'utf8');
const commands = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1].trim().split('\n'));
const run = (command: string, env: Record<string, string> = {}) =>
  spawnSync('sh', ['-c', command], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NODE_ENV: 'test', ...env },
    timeout: 240_000,
  });

it('every example file parses, with the provider and day it is shown for', () => {
  const files = [...doc.matchAll(/<!-- settlement: (\w+) (\S+) -->\n```csv\n([\s\S]*?)```/g)];
  expect(files.map((f) => f[1]).sort()).toEqual([...SETTLEMENT_PROVIDERS].sort());
  for (const [, provider, day, text] of files) {
    expect(isCalendarDay(day)).toBe(true);
    expect(parseSettlementFile(provider as SettlementProvider, day, text).length).toBeGreaterThan(0);
  }
});

it('the commands are the ones tested here', () => {
  expect(commands).toEqual([
    'npm run apikey -- create --name ops --scopes reconciliation:read,reconciliation:manage --sandbox',
    'npm run bench:reconciliation -- --lines 500 --runs 1',
  ]);
});

it('the operator key command prints a sandbox key with the operator scopes', async () => {
  const db = await workerDb();
  const r = run(commands[0], { DATABASE_URL: testDatabaseUrl(`talat_test_w${process.env.JEST_WORKER_ID ?? '1'}`) });
  expect(r.status).toBe(0);
  const key = r.stdout.trim().split('\n').pop()!;
  expect(key).toMatch(/^tk_test_/);
  const row = await db('api_keys').where({ name: 'ops' }).orderBy('created_at', 'desc').first();
  expect(row.scopes).toEqual(['reconciliation:read', 'reconciliation:manage']);
  await db.destroy();
}, 120_000);

it('the benchmark runs as printed and reports lines per second for every provider', () => {
  const r = run(commands[1]);
  // on failure, the benchmark's own account of why (its stderr), not only its exit code
  expect({ status: r.status, stderr: r.status === 0 ? '' : r.stderr.slice(-2000) }).toEqual({ status: 0, stderr: '' });
  for (const p of SETTLEMENT_PROVIDERS)
    expect(r.stdout).toMatch(new RegExp(`^${p} +run 1 +\\d+ lines .* \\d+ lines/s$`, 'm'));
}, 240_000);
