/**
 * The production entry points start from compiled JavaScript with production dependencies only.
 *
 * Bounded and offline: the sources are compiled file by file with TypeScript's emitter (the
 * compiler options of tsconfig.build.json, without the type check that `npm run typecheck`
 * does) into a directory of this test's own, the run's prebuilt workflow bundle is put where
 * `npm run build` writes it, and node_modules there (a temporary directory outside the project)
 * holds only what `npm ci --omit=dev`
 * installs: the package-lock entries not marked dev, linked from the project's node_modules
 * (node --preserve-symlinks, so nothing resolves back into the full tree).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync, type ChildProcess } from 'node:child_process';
import ts from 'typescript';
import { createTestStack, uniq, waitFor, type TestStack } from '../support/stack';
import { fieldSigned, resultOf } from '../callbacks/helpers';
import { apiKey } from '../webhooks/helpers';
import { freePort } from '../../src/stack/temporal';
import { ROOT, roleEnv, spawnRole, stopProcess } from '../support/roles';

jest.setTimeout(300_000);

// outside the project, so no node_modules of a parent directory is on the resolution path
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'talat-prod-'));
let stack: TestStack;
const children: { child: ChildProcess; exited: Promise<number | null> }[] = [];

/** tsconfig.build.json's emit, file by file. */
function compile(): number {
  const { config } = ts.readConfigFile(path.join(ROOT, 'tsconfig.build.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  for (const file of parsed.fileNames) {
    if (file.endsWith('.d.ts')) continue; // declarations emit nothing
    const js = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions: { ...parsed.options, sourceMap: false },
      fileName: file,
    });
    const target = path.join(out, 'dist', path.relative(ROOT, file)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, js.outputText);
  }
  // the files tsc does not emit, copied as `npm run build` does
  const assets = 'src/checkout/assets';
  fs.cpSync(path.join(ROOT, assets), path.join(out, 'dist', assets), { recursive: true });
  return parsed.fileNames.length;
}

/** node_modules with the production packages of package-lock.json only (what `npm ci --omit=dev` installs). */
function productionModules(): { linked: number; dev: string[] } {
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  let linked = 0;
  const dev: string[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    const m = /^node_modules\/((@[^/]+\/)?[^/]+)$/.exec(key);
    if (!m) continue; // the root, or nested under a package (comes with it)
    if (entry.dev) {
      dev.push(m[1]);
      continue;
    }
    const real = path.join(ROOT, key);
    if (!fs.existsSync(real)) continue; // an optional package for another platform
    const link = path.join(out, key);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(real, link, 'dir');
    linked++;
  }
  return { linked, dev };
}

beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  compile();
  fs.copyFileSync(process.env.TALAT_TEST_WORKFLOW_BUNDLE!, path.join(out, 'dist', 'workflow-bundle.js'));
  fs.mkdirSync(path.join(out, 'scripts'));
  fs.copyFileSync(path.join(ROOT, 'scripts', 'run.cjs'), path.join(out, 'scripts', 'run.cjs'));
  fs.cpSync(path.join(ROOT, 'bin'), path.join(out, 'bin'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'data', 'catalog'), path.join(out, 'data', 'catalog'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(out, 'package.json'));
  productionModules();
});

afterAll(async () => {
  await Promise.all(children.map(({ child, exited }) => stopProcess(child, exited)));
  await stack?.close();
  fs.rmSync(out, { recursive: true, force: true });
});

/** The environment of a production-dependency process: nothing inherited but PATH and HOME. */
const prodEnv = (extra: Record<string, string>) => {
  const env = roleEnv(stack.taskQueue, extra);
  delete (env as Record<string, string | undefined>).WORKFLOW_BUNDLE_PATH; // the worker must find dist/workflow-bundle.js itself
  return env;
};
const NODE = ['--preserve-symlinks', '--preserve-symlinks-main'];

it('dev-only packages are absent: tsx, typescript, smtp-server, jest cannot be loaded there', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  for (const dev of ['tsx', 'typescript', 'smtp-server', 'jest']) {
    expect({ dev, inDependencies: dev in pkg.dependencies }).toEqual({ dev, inDependencies: false });
    const r = spawnSync(process.execPath, [...NODE, '-e', `require.resolve(${JSON.stringify(dev)})`], {
      cwd: out,
      env: { PATH: process.env.PATH! },
      encoding: 'utf8',
    });
    expect({ dev, status: r.status }).toEqual({ dev, status: 1 });
  }
});

it('migrate, worker and gateway run from the build; a QR payment is created and paid through them', async () => {
  // `talat migrate` as the image runs it (bin/talat picks dist/ itself)
  const migrate = spawnSync(process.execPath, [...NODE, 'bin/talat', 'migrate'], {
    cwd: out,
    env: { PATH: process.env.PATH!, ...prodEnv({}) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect({ status: migrate.status, out: `${migrate.stdout}${migrate.stderr}` }).toEqual({
    status: 0,
    out: expect.stringContaining('database is up to date'),
  });

  const workerPort = await freePort();
  const worker = await spawnRole(
    [...NODE, 'dist/src/roles/worker.js'],
    prodEnv({ WORKER_HTTP_PORT: String(workerPort), METRICS_ACCESS: 'key' }),
    { cwd: out, inheritEnv: false },
  );
  children.push(worker);
  expect(worker.output()).toContain(
    `workflows from the prebuilt bundle ${path.join(out, 'dist', 'workflow-bundle.js')}`,
  );

  // the gateway through `npm run gateway`'s launcher, which picks dist/ when there is a build
  const port = await freePort();
  const gateway = await spawnRole(
    [...NODE, 'scripts/run.cjs', 'roles/gateway'],
    prodEnv({ PORT: String(port), METRICS_ACCESS: 'key' }),
    {
      cwd: out,
      inheritEnv: false,
    },
  );
  children.push(gateway);
  expect(gateway.output()).not.toContain('tsx');

  expect((await fetch(`http://127.0.0.1:${workerPort}/readyz`)).status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

  const key = await apiKey(stack);
  const orderId = uniq('ord');
  const created = await fetch(`http://127.0.0.1:${port}/qrpayment`, {
    method: 'POST',
    headers: { 'X-API-Key': key.key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ orderId, userId: 'u-1', amount: 12, customerId: 'c-1' }),
  });
  expect(created.status).toBe(200);
  const paymentId = ((await created.json()) as { body: { paymentId: string } }).body.paymentId;
  const row = await waitFor(() => stack.db('payments').where({ id: paymentId }).first(), 20_000, 'payment recorded');
  const cb = fieldSigned(stack.config, 'QR', { paymentId, status: 'success', amount: 12, orderId });
  const paid = await fetch(`http://127.0.0.1:${port}/qrcallback`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: cb.raw,
  });
  expect(paid.status).toBe(200);
  await expect(resultOf(stack, row.workflow_id)).resolves.toMatchObject({ status: 'paid' });

  // each role's /metrics with METRICS_ACCESS=key (production's default): only a key with the scope metrics; the worker's has
  // the payment it just applied and the Temporal SDK's temporal_* (on a free port, unasked)
  for (const base of [`http://127.0.0.1:${port}`, `http://127.0.0.1:${workerPort}`]) {
    const refused = await fetch(`${base}/metrics`);
    expect({ base, status: refused.status }).toEqual({ base, status: 401 });
    expect(((await refused.json()) as { body: { code: string } }).body.code).toBe('UNAUTHORIZED');
    expect((await fetch(`${base}/metrics`, { headers: { 'X-API-Key': key.key } })).status).toBe(403);
  }
  const scraper = await apiKey(stack, ['metrics']);
  let workerMetrics = '';
  for (const until = Date.now() + 30_000; Date.now() < until && !/^temporal_/m.test(workerMetrics);) {
    const res = await fetch(`http://127.0.0.1:${workerPort}/metrics`, {
      headers: { Authorization: `Bearer ${scraper.key}` },
    });
    expect(res.status).toBe(200);
    workerMetrics = await res.text();
    if (!/^temporal_/m.test(workerMetrics)) await new Promise((r) => setTimeout(r, 500));
  }
  expect(workerMetrics).toMatch(/^temporal_/m);
  expect(workerMetrics).toMatch(/^talat_payment_transitions_total\{method="qr",to="paid"\} [1-9]/m);

  expect(await Promise.all(children.splice(0).map(({ child, exited }) => stopProcess(child, exited)))).toEqual([0, 0]);
});

it('`talat` runs the build without tsx: --help, apikey, promptpay, exit codes, replay of the payment above', () => {
  const talat = (...args: string[]) =>
    spawnSync(process.execPath, [...NODE, 'bin/talat', ...args], {
      cwd: out,
      env: { PATH: process.env.PATH!, ...prodEnv({}) },
      encoding: 'utf8',
      timeout: 60_000,
    });
  const help = talat('--help');
  expect({ status: help.status, stderr: help.stderr }).toEqual({ status: 0, stderr: '' });
  expect(help.stdout).toMatch(/^ {2}replay\b/m);

  const created = talat('apikey', 'create', '--name', uniq('built'), '--scopes', 'payments:read', '--json');
  expect({ status: created.status, stderr: created.stderr }).toEqual({ status: 0, stderr: '' });
  const { id } = JSON.parse(created.stdout) as { id: string };
  expect(talat('apikey', 'revoke', id)).toMatchObject({ status: 0, stdout: `revoked ${id}\n` });
  expect(talat('apikey', 'revoke', 'key_doesnotexist')).toMatchObject({
    status: 1,
    stdout: '',
    stderr: 'talat apikey revoke: no API key key_doesnotexist: nothing was revoked\n',
  });
  const badCrc = talat(
    'promptpay',
    '--parse',
    '00020101021129370016A000000677010111011300668012345675802TH53037646304FFFF',
  );
  expect(badCrc).toMatchObject({ status: 1, stderr: expect.stringContaining('the CRC is wrong') });

  // the payment of the test above, replayed against dist/workflow-bundle.js
  const replay = talat('replay', '--since', '1h', '--task-queue', stack.taskQueue);
  expect({ status: replay.status, stderr: replay.stderr }).toEqual({ status: 0, stderr: '' });
  expect(replay.stdout).toMatch(/^1 replayed, 0 non-deterministic$/m);
});
