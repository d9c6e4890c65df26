/**
 * What `npm start` and `npm test` install: scripts/provision.sh installs the browser of the
 * browser tests only with --tests (the first step of `npm test`), never on `npm start`. Run with
 * apt-get, sudo and fc-list replaced by stubs that record their calls (no font: a browser is wanted).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

function provision(args: string[]): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-provision-'));
  try {
    const log = path.join(dir, 'calls');
    const stub = (name: string, body: string) =>
      fs.writeFileSync(path.join(dir, name), `#!/bin/sh\necho "${name} $*" >> ${log}\n${body}\n`, { mode: 0o755 });
    stub('apt-get', 'exit 0');
    stub('sudo', 'exec "$@"');
    stub('fc-list', 'exit 0');
    let failed: string[] = [];
    try {
      execFileSync('bash', [path.join(root, 'scripts', 'provision.sh'), ...args], {
        env: {
          ...process.env,
          PATH: `${dir}:${process.env.PATH}`,
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          S3_ENDPOINT: 'http://127.0.0.1:1',
          DATABASE_URL: 'postgres://127.0.0.1:1/none',
          CHECKOUT_BROWSER: 'on',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (e) {
      failed = [`failed: ${(e as { stderr?: Buffer }).stderr?.toString() ?? e}`];
    }
    return [...(fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : []), ...failed];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

it('npm start provisions no browser; npm test does', () => {
  expect(pkg.scripts.start).toMatch(/^bash scripts\/provision\.sh && /);
  expect(pkg.scripts.test).toMatch(/^bash scripts\/provision\.sh --tests && /);
  expect(provision([])).toEqual([]);
  expect(provision(['--tests']).join('\n')).toMatch(/apt-get install -y -qq chromium fonts-thai-tlwg/);
});

it("README's prerequisites say what npm test needs beyond npm start: Go, and the browser", () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const twoCommands = readme.slice(readme.indexOf('## The two commands'), readme.indexOf('### Try it'));
  expect(twoCommands).toMatch(/`npm test` also needs Go/);
  expect(twoCommands).toMatch(/`npm test` .*installs Chromium/s);
  expect(twoCommands).not.toMatch(/nothing else needed/i);
});
