/**
 * The production roles (src/roles/gateway.ts, src/roles/worker.ts) as real child processes on
 * the test services: started from the TypeScript sources with tsx, or from a build (`entry`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../src/stack/temporal';
import { testDatabaseUrl } from './stack';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface RoleProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<port> of the gateway, or of the worker's health server */
  base: string;
  output(): string;
  /** SIGTERM, then the exit code (SIGKILL after `ms`) */
  stop(ms?: number): Promise<number | null>;
}

/** The environment of a role on this jest worker's database and the test Temporal server. */
export function roleEnv(taskQueue: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    DATA_DIR: path.join(ROOT, '.data'),
    DATABASE_URL: testDatabaseUrl(`talat_test_w${process.env.JEST_WORKER_ID ?? '1'}`),
    TEMPORAL_ADDRESS: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
    TEMPORAL_TASK_QUEUE: taskQueue,
    WORKFLOW_BUNDLE_PATH: process.env.TALAT_TEST_WORKFLOW_BUNDLE!,
    SIMULATORS: 'off',
    // the tests' webhook receivers are on 127.0.0.1 (an allowance production refuses)
    ...(extra.NODE_ENV === 'production' ? {} : { WEBHOOK_ALLOW_LOOPBACK: 'on' }),
    ...extra,
  };
}

/** Spawns `args` (node arguments) with `env`; waits for the role's "is running" banner or its exit. */
export function spawnRole(
  args: string[],
  env: Record<string, string>,
  opts: { cwd?: string; waitMs?: number; inheritEnv?: boolean } = {},
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  const base =
    opts.inheritEnv === false
      ? { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' }
      : process.env;
  const child = spawn(process.execPath, args, {
    cwd: opts.cwd ?? ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no start-up banner within ${opts.waitMs ?? 180_000} ms:\n${out}`));
    }, opts.waitMs ?? 180_000);
    const onData = () => {
      if (/Talat (gateway|worker) is running/.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before it was running:\n${out}`));
    });
  });
}

/** A role from the sources (tsx) on a free port. */
export async function startRole(role: 'gateway' | 'worker', env: Record<string, string>): Promise<RoleProcess> {
  const port = String(await freePort());
  const portVar: Record<string, string> = role === 'gateway' ? { PORT: port } : { WORKER_HTTP_PORT: port };
  const { child, output, exited } = await spawnRole(
    ['--import', 'tsx', path.join(ROOT, 'src', 'roles', `${role}.ts`)],
    { ...env, ...portVar },
  );
  return { child, base: `http://127.0.0.1:${port}`, output, stop: (ms) => stopProcess(child, exited, ms) };
}

export async function stopProcess(
  child: ChildProcess,
  exited: Promise<number | null>,
  ms = 30_000,
): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), ms);
  const code = await exited;
  clearTimeout(t);
  return code;
}

/**
 * A worker in its own process (test/webhooks/worker-process.ts) on the task queue of a test's
 * own database, one node process so that SIGKILL kills the worker itself; resolves once it polls.
 */
export async function startCrashWorker(taskQueue: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'webhooks', 'worker-process.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      TALAT_CRASH_DATABASE_URL: testDatabaseUrl(`talat_test_w${process.env.JEST_WORKER_ID ?? '1'}`),
      TALAT_CRASH_TASK_QUEUE: taskQueue,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('worker ready')) resolve();
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => reject(new Error(`worker process exited (${code}):\n${output}`)));
  });
  return child;
}
