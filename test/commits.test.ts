/**
 * Commit subjects are at most 72 characters (commitlint.config.js): @commitlint/cli's own
 * executable checks every commit after BASE, the commit this rule started from. A shallow clone
 * that lacks BASE skips the check and says so; a full clone without it fails.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const BASE = '5f56a04';
const COMMITLINT = path.join(root, 'node_modules', '.bin', 'commitlint');

const git = (...args: string[]) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
const commitlint = (args: string[], input?: string) =>
  spawnSync(COMMITLINT, args, { cwd: root, encoding: 'utf8', input, timeout: 60_000 });

const hasBase = git('cat-file', '-e', `${BASE}^{commit}`).status === 0;
const shallow = git('rev-parse', '--is-shallow-repository').stdout.trim() === 'true';
if (!hasBase && shallow)
  console.warn(`test/commits.test.ts: skipped: this clone is shallow and lacks ${BASE}; fetch the history to check`);

describe('commit subjects', () => {
  (hasBase || !shallow ? it : it.skip)(`every commit after ${BASE} has a subject of at most 72 characters`, () => {
    expect(hasBase).toBe(true); // a full clone must hold the base commit
    const count = Number(git('rev-list', '--count', `${BASE}..HEAD`).stdout.trim());
    expect(count).toBeGreaterThan(0);
    const r = commitlint(['--from', BASE, '--to', 'HEAD']);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
    // the same command fails on BASE itself, whose subject is one of the long ones of before
    const before = commitlint(['--from', `${BASE}~1`, '--to', BASE]);
    expect(before.stdout).toContain('header-max-length');
    expect(before.status).not.toBe(0);
  });

  it('the linter refuses a 73-character subject and takes a 72-character one', () => {
    const long = commitlint([], `${'x'.repeat(73)}\n\nbody\n`);
    expect(long.status).not.toBe(0);
    expect(long.stdout).toContain('header-max-length');
    const ok = commitlint([], `${'x'.repeat(72)}\n\nbody\n`);
    expect(ok.stdout + ok.stderr).toBe('');
    expect(ok.status).toBe(0);
  });
});
