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
  '<!-- expect: a -->',
  '<!-- expect: "b":1 -->',
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
    [11, 'runnable', []],
    [14, 'server', []],
  ]);
  expect(blocks[1].code).toBe('echo "$A $B $(greet x) $PWD"');
  expect(() => blocksOf('g.md', '```bash runnable\necho\n')).toThrow('g.md:1: the block is never closed');
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
