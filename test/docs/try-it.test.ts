/**
 * README "Try it", as a newcomer types it: `npm start` spawned as printed (in a data directory of
 * its own), then the README's shell block run verbatim by bash, then Ctrl-C. The ports are the
 * defaults the README prints, so this test needs them free.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

jest.setTimeout(300_000);
const root = path.resolve(__dirname, '../..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

/** The first ```sh block after `heading`. */
export function shellBlockAfter(text: string, heading: string): string {
  const from = text.indexOf(heading);
  if (from < 0) throw new Error(`README has no "${heading}"`);
  const m = /```sh\n([\s\S]*?)```/.exec(text.slice(from));
  if (!m) throw new Error(`no sh block after "${heading}"`);
  return m[1];
}

/** A binary provisioning already put under .data/tools, so the test does not fetch it again. */
function provisioned(name: string): Record<string, string> {
  const tools = path.join(root, '.data', 'tools');
  if (!fs.existsSync(tools)) return {};
  for (const dir of fs.readdirSync(tools)) {
    const bin = path.join(tools, dir, name);
    if (fs.existsSync(bin)) return { [name === 'temporal' ? 'TEMPORAL_CLI_PATH' : 'OBJECT_STORE_BIN']: bin };
  }
  return {};
}

let start: ChildProcess;
let out = '';
let exited: Promise<number | null>;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-try-it-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  ...provisioned('temporal'),
  ...provisioned('weed'),
};
for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'S3_ENDPOINT', 'NODE_ENV', 'PORT', 'PG_PORT']) delete env[k];

beforeAll(async () => {
  expect(shellBlockAfter(readme, '## The two commands')).toContain('npm install && npm start');
  start = spawn('npm', ['start'], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  start.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  start.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  exited = new Promise((resolve) => start.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 240_000;
  while (!out.includes('Press Ctrl-C to stop.')) {
    if (start.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

afterAll(async () => {
  if (start.exitCode === null) process.kill(-start.pid!, 'SIGKILL');
  start.stdout!.destroy();
  start.stderr!.destroy();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

it('npm start prints where each part is', () => {
  expect(out).toContain('Talat is running:');
  expect(out).toContain('gateway        http://127.0.0.1:3000');
  expect(out).toContain('temporal web   http://127.0.0.1:8233');
});

it('the Try it block works as printed: a QR payment paid, a card payment accepted', () => {
  const block = shellBlockAfter(readme, '### Try it');
  const printed = execFileSync('bash', ['-euo', 'pipefail', '-c', block], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  // curl -s prints each answer without a newline: split the envelopes where one ends
  const [qr, status, card] = printed
    .trim()
    .replace(/}\s*{"statusCode"/g, '}\n{"statusCode"')
    .split('\n')
    .map((l) => JSON.parse(l) as { statusCode: number; body: Record<string, unknown> });
  expect(qr.statusCode).toBe(200);
  expect(qr.body).toMatchObject({ orderId: 'ORD-2001', method: 'qr', amount: 120.5 });
  expect((qr.body.qr as { payload: string }).payload).toMatch(/^000201/);
  expect(qr.body.checkoutUrl).toMatch(/^http:\/\/127\.0\.0\.1:3000\/checkout\//);
  expect(status.statusCode).toBe(200);
  expect(status.body).toMatchObject({ orderId: 'ORD-2001', status: 'paid' });
  expect(card.body).toMatchObject({ orderId: 'ORD-2002' });
});

it('Ctrl-C stops everything cleanly (exit 0)', async () => {
  process.kill(-start.pid!, 'SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r('timeout'), 60_000)))]);
  clearTimeout(timer);
  expect(code).toBe(0);
});
