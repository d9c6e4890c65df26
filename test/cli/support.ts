/**
 * The `talat` executable as a user runs it: `node bin/talat <args>` (what `npx talat` and the npm
 * aliases run), or any command line (`npx knex ...`), spawned to its exit with stdout, stderr
 * and the exit code kept apart. Asynchronous, so a gateway in the test process keeps serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a command: the test's, minus what would point it elsewhere, plus `env`. */
export function cliEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TALAT_API_KEY', 'TALAT_API_URL', 'NODE_ENV']) delete base[k];
  return { ...base, NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env };
}

/** Starts `cmd args`; `done` resolves at its exit. */
export function start(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
  opts: { cwd?: string; timeoutMs?: number } = {},
): { child: ChildProcess; stdout: () => string; stderr: () => string; done: Promise<Ran> } {
  const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const done = new Promise<Ran>((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** `talat <args>` through bin/talat, to its exit. */
export const talat = (args: string[], env: Record<string, string> = {}, opts: { timeoutMs?: number } = {}) =>
  start(process.execPath, [path.join(ROOT, 'bin', 'talat'), ...args], env, opts).done;

/** Resolves when `read()` matches `re` (polling), or rejects after `ms`. */
export async function waitForOutput(read: () => string, re: RegExp, ms = 60_000): Promise<RegExpMatchArray> {
  const until = Date.now() + ms;
  for (;;) {
    const m = read().match(re);
    if (m) return m;
    if (Date.now() > until) throw new Error(`no ${re} within ${ms} ms in:\n${read()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
