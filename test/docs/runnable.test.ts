/**
 * Docs that run: README's `bash server` block (npm start as printed, in a data directory of its
 * own, on the default ports, so they must be free) is started once; then every `bash runnable`
 * block of README.md and docs/*.md runs in bash, in file order, with the shell state of the
 * file's earlier blocks; exit code 0 and each fragment of its `The output contains:` text block
 * are checked. Ctrl-C last.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blocksOf, scriptOf, type Block } from './blocks';

jest.setTimeout(300_000);
const root = path.resolve(__dirname, '../..');
const files = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const blocks = files.flatMap((f) => blocksOf(f, fs.readFileSync(path.join(root, f), 'utf8')));
const servers = blocks.filter((b) => b.kind === 'server' && b.file === 'README.md');
const runnable = blocks.filter((b) => b.kind === 'runnable');
const BLOCK_TIMEOUT_MS = 180_000;

/** A binary provisioning already put under .data/tools, so the stack does not fetch it again. */
function provisioned(name: string): Record<string, string> {
  const tools = path.join(root, '.data', 'tools');
  if (!fs.existsSync(tools)) return {};
  for (const dir of fs.readdirSync(tools)) {
    const bin = path.join(tools, dir, name);
    if (fs.existsSync(bin)) return { [name === 'temporal' ? 'TEMPORAL_CLI_PATH' : 'OBJECT_STORE_BIN']: bin };
  }
  return {};
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-docs-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATA_DIR: path.join(work, 'data'),
  LOG_LEVEL: 'warn',
  ...provisioned('temporal'),
  ...provisioned('weed'),
};
for (const k of [
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'S3_ENDPOINT',
  'NODE_ENV',
  'PORT',
  'PG_PORT',
  'WEBHOOK_ALLOW_LOOPBACK',
])
  delete env[k];

/** Each block in a process group of its own, so whatever it leaves running is stopped at the end. */
const groups: ChildProcess[] = [];
let server: ChildProcess;
let serverOut = '';
let serverExit: Promise<number | null>;

function run(block: Block, state: string): Promise<{ code: number | string; out: string }> {
  const script = path.join(work, `block-${groups.length}.sh`);
  fs.writeFileSync(script, scriptOf(block.code, state));
  const child = spawn('bash', [script], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  groups.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(
      () => resolve({ code: `timeout after ${BLOCK_TIMEOUT_MS / 1000} s`, out }),
      BLOCK_TIMEOUT_MS,
    );
    // 'exit', not 'close': a receiver a block leaves in the background may hold the pipes open
    child.once('exit', (code) => {
      clearTimeout(timer);
      setTimeout(() => resolve({ code: code ?? 'killed', out }), 100);
    });
  });
}

beforeAll(async () => {
  expect(servers).toHaveLength(1);
  const script = path.join(work, 'server.sh');
  fs.writeFileSync(script, `set -e\n${servers[0].code}\n`);
  server = spawn('bash', [script], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (d: Buffer) => (serverOut += d.toString()));
  server.stderr!.on('data', (d: Buffer) => (serverOut += d.toString()));
  serverExit = new Promise((resolve) => server.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 240_000;
  while (!serverOut.includes('Press Ctrl-C to stop.')) {
    if (server.exitCode !== null || Date.now() > deadline)
      throw new Error(`README.md:${servers[0].line}: the server block did not come up:\n${serverOut}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

afterAll(() => {
  for (const g of [...groups, server])
    try {
      process.kill(-g.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  fs.rmSync(work, { recursive: true, force: true });
});

it('the server block prints where each part is', () => {
  expect(serverOut).toContain('Talat is running:');
  expect(serverOut).toContain('gateway        http://127.0.0.1:3000');
  expect(serverOut).toContain('temporal web   http://127.0.0.1:8233');
});

describe.each(files.filter((f) => runnable.some((b) => b.file === f)))('%s', (file) => {
  const state = path.join(work, `${file.replace(/\W/g, '_')}.state`);
  it.each(runnable.filter((b) => b.file === file).map((b) => [`${b.file}:${b.line}`, b] as const))(
    '%s runs as printed',
    async (where, block) => {
      const { code, out } = await run(block, state);
      if (code !== 0) throw new Error(`${where}: exited ${code}\n--- output\n${out}`);
      const missing = block.expects.filter((e) => !out.includes(e));
      if (missing.length)
        throw new Error(
          `${where}: output lacks ${missing.map((m) => JSON.stringify(m)).join(', ')}\n--- output\n${out}`,
        );
    },
  );
});

it('Ctrl-C stops everything cleanly (exit 0)', async () => {
  process.kill(-server.pid!, 'SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([serverExit, new Promise((r) => (timer = setTimeout(() => r('timeout'), 60_000)))]);
  clearTimeout(timer);
  expect(code).toBe(0);
});
