/**
 * `npm ci` (what the Dockerfile and a clean machine run) refuses a package-lock.json that is out of
 * step with package.json; this asks npm itself, without touching node_modules.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

it('npm ci --dry-run agrees with package-lock.json', () => {
  const res = spawnSync('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: path.resolve(__dirname, '..'),
    encoding: 'utf8',
    timeout: 120_000,
  });
  const errors = res.stderr.split('\n').filter((l) => l.startsWith('npm error'));
  expect(errors).toEqual([]);
  expect(res.status).toBe(0);
}, 130_000);
