/**
 * The short chaos run of CI: `npm run chaos` (bench/chaos.ts) with its own Postgres, Temporal dev
 * server, a worker and a gateway, for a few seconds of load with a kill -9 of each kind of
 * process; no payment may be lost or applied twice. Bounded: the run is killed after 90 s.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const LIMIT_MS = 90_000;

jest.setTimeout(LIMIT_MS + 15_000);

it('a short chaos run: a kill -9 of the worker, a gateway, Temporal and Postgres; 0 lost, 0 applied twice', async () => {
  // one gateway (fewer processes to start on a small machine); a kill about every 2 s takes each kind in turn
  const args = [
    '--duration',
    '14',
    '--rate',
    '3',
    '--kill-every',
    '2',
    '--qr-expiry',
    '8',
    '--gateways',
    '1',
    '--seed',
    '7',
    // the script's own bound comes first, so a slow settle is reported order by order
    '--settle-within',
    '50',
  ];
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'chaos.ts'), ...args], {
    cwd: ROOT,
    // the workflows bundled once by the global set-up
    env: { ...process.env, CHAOS_WORKFLOW_BUNDLE: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-20_000)));
  // SIGTERM makes the script stop its stack; SIGKILL if even that hangs
  const term = setTimeout(() => child.kill('SIGTERM'), LIMIT_MS);
  const kill = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS + 10_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(term);
  clearTimeout(kill);
  // the script removes its data directory when it ends normally; not after a SIGKILL
  const data = path.join(ROOT, '.data', `chaos-${child.pid}`);
  fs.rmSync(data, { recursive: true, force: true });
  if (code === 0) fs.rmSync(`${data}.log`, { force: true });

  const line = out.split('\n').find((l) => l.startsWith('CHAOS_RESULT '));
  if (!line) throw new Error(`no result (exit ${code}):\n${out}\n${err}`);
  const r = JSON.parse(line.slice('CHAOS_RESULT '.length)) as {
    created: number;
    orders: number;
    lost: number;
    appliedTwice: number;
    badSignatures: number;
    webhooksPerPayment: number;
    kills: Record<string, number>;
  };
  const context = `${out}\n${err.slice(-4000)}`;
  expect({ lost: r.lost, appliedTwice: r.appliedTwice, badSignatures: r.badSignatures, context }).toEqual({
    lost: 0,
    appliedTwice: 0,
    badSignatures: 0,
    context,
  });
  expect(r.created).toBe(r.orders);
  expect(r.created).toBeGreaterThan(0);
  for (const kind of ['worker', 'gateway', 'temporal', 'postgres']) expect(r.kills[kind]).toBeGreaterThanOrEqual(1);
  expect(code).toBe(0);
});
