/**
 * The runnable-docs convention itself: which blocks are found, their expectations, and the shell
 * state one block leaves for the next (variables, functions, directory), without a stack.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blocksOf, scriptOf } from './blocks';

const sample = [
  '# Guide',
  '```sh',
  'echo not run',
  '```',
  '```bash runnable',
  'export A=1; B="two words"; greet() { echo "hi $1"; }; cd /tmp',
  '```',
  '',
  'The output contains:',
  '',
  '```text',
  'a',
  '"b":1',
  '```',
  '  ```bash runnable',
  '  echo "$A $B $(greet x) $PWD"',
  '  ```',
  '```bash server',
  'npm start',
  '```',
  '````markdown',
  '```bash runnable',
  'echo nested in an example, not run',
  '```',
  '````',
].join('\n');

it('finds the runnable and server blocks, their lines and expectations', () => {
  const blocks = blocksOf('g.md', sample);
  expect(blocks.map((b) => [b.line, b.kind, b.expects])).toEqual([
    [5, 'runnable', ['a', '"b":1']],
    [15, 'runnable', []],
    [18, 'server', []],
  ]);
  expect(blocks[1].code).toBe('echo "$A $B $(greet x) $PWD"');
  expect(() => blocksOf('g.md', '```bash runnable\necho\n')).toThrow('g.md:1: the block is never closed');
});

it('refuses an expected output the reader cannot see', () => {
  expect(() => blocksOf('g.md', '```bash runnable\necho a\n```\n<!-- expect: a -->\n')).toThrow(
    'g.md:4: an expected output in an HTML comment is hidden from the reader',
  );
  expect(() => blocksOf('g.md', '```bash runnable\necho a\n```\nThe output contains:\n\na\n')).toThrow(
    'g.md:6: "The output contains:" must be followed by a text block',
  );
});

it('every runnable block of the docs shows what it prints, and the shown text is what is checked', () => {
  const root = path.resolve(__dirname, '../..');
  const files = [
    'README.md',
    ...fs
      .readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const blocks = files.flatMap((f) => blocksOf(f, fs.readFileSync(path.join(root, f), 'utf8')));
  expect(blocks.filter((b) => b.kind === 'runnable').length).toBeGreaterThan(20);
  expect(blocks.reduce((n, b) => n + b.expects.length, 0)).toBeGreaterThanOrEqual(65);
});

it('carries variables, functions and the directory from one block to the next', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-blocks-'));
  try {
    const state = path.join(dir, 'state');
    const run = (code: string) => {
      fs.writeFileSync(path.join(dir, 's.sh'), scriptOf(code, state));
      return execFileSync('bash', [path.join(dir, 's.sh')], { encoding: 'utf8', cwd: os.homedir() });
    };
    const [first, second] = blocksOf('g.md', sample);
    run(first.code);
    expect(run(second.code).trim()).toBe('1 two words hi x /tmp');
    expect(() => run('false; echo after')).toThrow();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
