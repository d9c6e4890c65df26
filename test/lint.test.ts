/**
 * The determinism rule is enforced by a tool: ESLint rejects Node built-ins, I/O libraries and
 * value imports of activities under workflows/, and accepts what workflows are allowed to use.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

/** Lint `code` as if it were the file `file`, with the project's own ESLint config (in a child process: the config is ESM). */
async function lintAs(file: string, code: string): Promise<string[]> {
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules/eslint/bin/eslint.js'), '--stdin', '--stdin-filename', file, '--format', 'json'], {
    cwd: root,
    input: code,
    encoding: 'utf8',
  });
  const [result] = JSON.parse(r.stdout) as { messages: { ruleId: string; message: string }[] }[];
  return result.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('lint: workflows stay deterministic', () => {
  it.each([
    ["import fs from 'node:fs';\nexport const x = fs;\n", 'node:fs'],
    ["import { randomUUID } from 'crypto';\nexport const x = randomUUID;\n", 'crypto'],
    ["import knex from 'knex';\nexport const x = knex;\n", 'knex'],
    ["import { Client } from 'pg';\nexport const x = Client;\n", 'pg'],
    ["import { createActivities } from '../activities';\nexport const x = createActivities;\n", 'activities'],
    ["import { createDb } from '../src/db/knex';\nexport const x = createDb;\n", 'src/db'],
    ['export const x = process.env.HOME;\n', 'process'],
  ])('rejects %j (%s)', async (code, what) => {
    const messages = await lintAs('workflows/probe.ts', code);
    expect(messages.join('\n')).toMatch(/no-restricted-(imports|globals)/);
    expect(messages.join('\n')).toContain(what);
  });

  it('accepts the workflow SDK, src/domain and type-only activity imports', async () => {
    const code = [
      "import { proxyActivities } from '@temporalio/workflow';",
      "import type { Activities } from '../activities';",
      "import { transition } from '../src/domain/payment-state';",
      'export const acts = proxyActivities<Activities>({ startToCloseTimeout: 1000 });',
      'export const t = transition;',
      '',
    ].join('\n');
    expect(await lintAs('workflows/probe.ts', code)).toEqual([]);
  });

  it('allows the same imports outside workflows/', async () => {
    expect(await lintAs('activities/probe.ts', "import fs from 'node:fs';\nexport const x = fs;\n")).toEqual([]);
  });
});
