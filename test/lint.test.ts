/**
 * The layer rules are enforced by a tool: ESLint allows under workflows/ only the workflow SDK,
 * src/domain (the contract) and type-only activities, keeps src/domain to itself, and rejects a
 * promise left floating (a missing `await` on an activity) in workflows/ and activities/. Each
 * probe below is a gap the old deny-list let through. Last, the comments: none longer than 12
 * lines, none citing a benchmark figure.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCHMARK_FIGURE, commentBlocks, sourceFiles, type CommentBlock } from './support/comments';

const root = path.resolve(__dirname, '..');

/**
 * Every probe of this file, linted once in one ESLint process (the config is ESM, and the
 * type-aware rules build one TypeScript program for all of them).
 */
const probes: { file: string; code: string }[] = [];
let results: string[][] | undefined;

const LINT_ALL = `
import { ESLint } from 'eslint';
const probes = JSON.parse(await new Promise((r) => { let s = ''; process.stdin.on('data', (c) => (s += c)); process.stdin.on('end', () => r(s)); }));
const eslint = new ESLint({ cwd: process.cwd() });
const out = [];
for (const p of probes) {
  const [result] = await eslint.lintText(p.code, { filePath: p.file });
  out.push(result.messages.map((m) => m.ruleId + ': ' + m.message));
}
process.stdout.write(JSON.stringify(out));
`;

/** Lint `code` as if it were the file `file`, with the project's own ESLint config. */
function lintAs(file: string, code: string): () => string[] {
  const i = probes.push({ file, code }) - 1;
  return () => results![i];
}

// the type-aware rules build a TypeScript program of the whole project: allow for a loaded machine
beforeAll(() => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', LINT_ALL], {
    cwd: root,
    input: JSON.stringify(probes),
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`eslint failed: ${r.stderr}`);
  results = JSON.parse(r.stdout) as string[][];
}, 300_000);

describe('lint: workflows stay deterministic', () => {
  const rejected = [
    ["import fs from 'node:fs';\nexport const x = fs;\n", 'node:fs'],
    ["import { randomUUID } from 'crypto';\nexport const x = randomUUID;\n", 'crypto'],
    ["import knex from 'knex';\nexport const x = knex;\n", 'knex'],
    ["import { Client } from 'pg';\nexport const x = Client;\n", 'pg'],
    ["import { createActivities } from '../activities';\nexport const x = createActivities;\n", 'activities'],
    ["import { createDb } from '../src/db/knex';\nexport const x = createDb;\n", 'src/db'],
    ['export const x = process.env.HOME;\n', 'process'],
    [
      "import { processCallback } from '../src/callbacks/processor';\nexport const x = processCallback;\n",
      'src/callbacks/processor',
    ],
    ["import { postWebhook } from '../src/webhooks/http';\nexport const x = postWebhook;\n", 'src/webhooks/http'],
    [
      "import { startBankSimulator } from '../src/simulators/bank';\nexport const x = startBankSimulator;\n",
      'src/simulators/bank',
    ],
    ["import client from 'prom-client';\nexport const x = client;\n", 'prom-client'],
    ["import { newId } from '../src/ids';\nexport const x = newId;\n", 'src/ids'],
    ["import { z } from 'zod';\nexport const x = z;\n", 'zod'],
  ].map(([code, what]) => [code, what, lintAs('workflows/probe.ts', code)] as const);
  it.each(rejected)('rejects %j (%s)', (_code, what, messages) => {
    expect(messages().join('\n')).toMatch(/no-restricted-(imports|globals)/);
    expect(messages().join('\n')).toContain(what);
  });

  const allowed = lintAs(
    'workflows/probe.ts',
    [
      "import { proxyActivities } from '@temporalio/workflow';",
      "import type { Activities } from '../activities';",
      "import { transition } from '../src/payments';",
      "import { paymentResultSignal } from '../src/payments';",
      "import { emitPaymentStatusUpdated } from './notify';",
      'export const s = [paymentResultSignal, emitPaymentStatusUpdated];',
      'export const acts = proxyActivities<Activities>({ startToCloseTimeout: 1000 });',
      'export const t = transition;',
      '',
    ].join('\n'),
  );
  it('accepts the workflow SDK, the contract, src/domain and type-only activity imports', () => {
    expect(allowed()).toEqual([]);
  });

  const outside = lintAs('activities/probe.ts', "import fs from 'node:fs';\nexport const x = fs;\n");
  it('allows the same imports outside workflows/', () => {
    expect(outside()).toEqual([]);
  });
});

describe('lint: no module state in what the workflow bundle shares between workflows', () => {
  const probesOf = (file: string) =>
    ['let seen = 0;\nexport const next = () => ++seen;\n', 'export var count = 0;\n'].map((code) => lintAs(file, code));
  const refused = [
    ...probesOf('workflows/probe.ts'),
    ...probesOf('src/domain/probe.ts'),
    ...probesOf('src/payments/index.ts'),
  ];
  it.each(refused.map((m, i) => [i, m] as const))('refuses a module-level let or var (%d)', (_i, messages) => {
    expect(messages().join('\n')).toMatch(/no-restricted-syntax: the workflow bundle shares this module/);
  });
  const inFunction = lintAs(
    'workflows/probe.ts',
    'export function f(): number {\n  let n = 0;\n  n += 1;\n  return n;\n}\n',
  );
  const elsewhere = lintAs('src/payments/probe.ts', 'let seen = 0;\nexport const next = () => ++seen;\n');
  it('allows a let inside a function, and module state outside the bundle', () => {
    expect(inFunction()).toEqual([]);
    expect(elsewhere()).toEqual([]);
  });
});

const floatingActivityCall = [
  "import { proxyActivities } from '@temporalio/workflow';",
  "import type { Activities } from '../activities';",
  "const { recordPayment } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });",
  'export async function probe(): Promise<void> {',
  '  recordPayment({} as never);',
  '}',
  '',
].join('\n');

describe('lint: no floating promises in workflows/ and activities/ (type-aware)', () => {
  const missingAwait = lintAs('workflows/probe.ts', floatingActivityCall);
  it('rejects a missing await on an activity in a workflow', () => {
    expect(missingAwait().join('\n')).toMatch(/@typescript-eslint\/no-floating-promises/);
  });

  const awaited = lintAs(
    'workflows/probe.ts',
    floatingActivityCall.replace('  recordPayment(', '  await recordPayment('),
  );
  it('accepts the same call awaited', () => {
    expect(awaited()).toEqual([]);
  });

  const inActivity = lintAs(
    'activities/probe.ts',
    'export async function later(): Promise<void> {}\nexport async function probe(): Promise<void> {\n  later();\n}\n',
  );
  it('rejects a floating promise in an activity', () => {
    expect(inActivity().join('\n')).toMatch(/@typescript-eslint\/no-floating-promises/);
  });
});

describe('lint: src/domain imports nothing outside itself', () => {
  const rejected = [
    ["import { createDb } from '../db/knex';\nexport const x = createDb;\n", '../db/knex'],
    ["import { newId } from '../ids';\nexport const x = newId;\n", '../ids'],
    ["import { loadConfig } from '../config';\nexport const x = loadConfig;\n", '../config'],
    ["import knex from 'knex';\nexport const x = knex;\n", 'knex'],
    ["import { createHash } from 'node:crypto';\nexport const x = createHash;\n", 'node:crypto'],
  ].map(([code, what]) => [code, what, lintAs('src/domain/probe.ts', code)] as const);
  it.each(rejected)('rejects %j (%s)', (_code, what, messages) => {
    expect(messages().join('\n')).toMatch(/no-restricted-imports/);
    expect(messages().join('\n')).toContain(what);
  });

  const allowed = lintAs(
    'src/domain/probe.ts',
    "import { transition } from './payment-state';\nimport { defineSignal } from '@temporalio/workflow';\nexport const x = [transition, defineSignal];\n",
  );
  it('accepts imports within src/domain and of the pure libraries', () => {
    expect(allowed()).toEqual([]);
  });
});

describe('comments: short, and no benchmark figures (docs/architecture.md)', () => {
  const files = sourceFiles(root, ['src', 'workflows', 'activities']);
  const blocks = files.flatMap((f) => commentBlocks(f, fs.readFileSync(path.join(root, f), 'utf8')));
  const at = (b: CommentBlock) => `${b.file}:${b.line} (${b.lines.length} lines)`;

  it('reads every comment of src/, workflows/ and activities/', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(blocks.length).toBeGreaterThan(500);
  });

  it('has no comment block longer than 12 lines', () => {
    expect(blocks.filter((b) => b.lines.length > 12).map(at)).toEqual([]);
  });

  it('has no comment citing a benchmark run or a measured figure', () => {
    expect(blocks.filter((b) => BENCHMARK_FIGURE.test(b.lines.join(' '))).map(at)).toEqual([]);
  });

  it('the checks can fail: a 13-line block and a figure are found', () => {
    const long = `/**\n${' * line\n'.repeat(11)} */\nexport const x = 1; // a '/*' in a string is no comment\n`;
    expect(commentBlocks('probe.ts', long).map((b) => b.lines.length)).toEqual([13]);
    const slashes = '// one\n// two\nconst s = "/* not a comment */";\n// three\n';
    expect(commentBlocks('probe.ts', slashes).map((b) => b.lines.length)).toEqual([2, 1]);
    for (const figure of [
      '(bench:hotpaths)',
      '104 us of main-thread CPU',
      'took 0.42 ms',
      '55 ms p50',
      'at 50 payments/s',
    ])
      expect(BENCHMARK_FIGURE.test(`// ${figure}`)).toBe(true);
    for (const plain of ['a 5 s timeout', 'WEBHOOK_TIMEOUT_MS', 'within 2 s', 'RATE_LIMIT_PER_SECOND (100) per second'])
      expect(BENCHMARK_FIGURE.test(`// ${plain}`)).toBe(false);
  });
});
