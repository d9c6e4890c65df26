/**
 * CPU time of the processes a benchmark runs, read from Linux's /proc (no sampling, no timing):
 * this process's main thread (the gateway, or the raw Temporal client; a load generator on a
 * worker thread is not in it), the embedded Postgres (the postmaster and every backend, the ended
 * ones through the postmaster's children's times) and the Temporal dev server. On a shared
 * machine, CPU per call is steadier than calls per second.
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

/** clock ticks per second of /proc's times (CLK_TCK; 100 on Linux everywhere in practice) */
const TICKS = 100;

interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime + cutime + cstime, in ms */
  ms: number;
  /** utime + stime alone (a thread's own time), in ms */
  own: number;
}

function readStat(file: string): Stat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined; // gone meanwhile
  }
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text
    .slice(close + 2)
    .split(' ')
    .map(Number);
  // after "(comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
  return {
    pid: Number(text.slice(0, text.indexOf(' '))),
    ppid: f[1],
    comm,
    ms: ((f[11] + f[12] + f[13] + f[14]) * 1000) / TICKS,
    own: ((f[11] + f[12]) * 1000) / TICKS,
  };
}

/** CPU time (user + system) of this process's main thread so far, in ms (Linux: /proc; elsewhere NaN). */
export function mainThreadCpuMs(): number {
  return readStat(`/proc/self/task/${process.pid}/stat`)?.own ?? NaN;
}

/**
 * CPU ms so far of this process's threads by kind: `main`, else the thread's name (Temporal's
 * Rust core runs on `tokio-runtime-w`, workflow code on Node worker threads, crypto and zlib
 * work on `libuv-worker`). A thread that has ended is no longer counted.
 */
export function threadsCpuMs(): Map<string, number> {
  const by = new Map<string, number>();
  let tids: string[] = [];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return by; // not Linux
  }
  for (const tid of tids) {
    const s = readStat(`/proc/self/task/${tid}/stat`);
    if (!s) continue;
    const kind = s.pid === process.pid ? 'main' : s.comm;
    by.set(kind, (by.get(kind) ?? 0) + s.own);
  }
  return by;
}

function allProcesses(): Stat[] {
  if (!fs.existsSync('/proc/self/stat')) return [];
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readStat(`/proc/${d}/stat`))
    .filter((s): s is Stat => s !== undefined);
}

/** ms of CPU of `root` and all its descendants. */
function treeMs(procs: Stat[], root: number): number {
  const children = new Map<number, Stat[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  let total = 0;
  const queue = procs.filter((p) => p.pid === root);
  while (queue.length) {
    const p = queue.pop()!;
    total += p.ms;
    queue.push(...(children.get(p.pid) ?? []));
  }
  return total;
}

export interface CpuSnapshot {
  node: number;
  postgres: number;
  temporal: number;
}

/**
 * A snapshot of the CPU ms so far: this process's main thread, the Postgres cluster of `pgDataDir`
 * (its postmaster.pid) and the Temporal dev servers this process started.
 */
export function cpuSnapshot(pgDataDir: string): CpuSnapshot {
  const procs = allProcesses();

  let postmaster = 0;
  try {
    postmaster = Number(fs.readFileSync(path.join(pgDataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    /* not ours */
  }
  const temporal = procs
    .filter((p) => p.ppid === process.pid && p.comm.startsWith('temporal'))
    .reduce((a, p) => a + treeMs(procs, p.pid), 0);
  return { node: mainThreadCpuMs() || 0, postgres: postmaster ? treeMs(procs, postmaster) : 0, temporal };
}

/** CPU ms per call between two snapshots, e.g. "node 3.1, postgres 1.2, temporal 4.0 ms/call". */
export function cpuPerCall(a: CpuSnapshot, b: CpuSnapshot, calls: number): string {
  const per = (k: keyof CpuSnapshot) => ((b[k] - a[k]) / Math.max(1, calls)).toFixed(2);
  return `CPU ms/call: node main thread ${per('node')}, postgres ${per('postgres')}, temporal ${per('temporal')}`;
}

/** CPU ms so far of each named process and its descendants (one /proc read for all), e.g. { history: pid }. */
export function treesMs(pids: Record<string, number | undefined>): Record<string, number> {
  const procs = allProcesses();
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, pid ? treeMs(procs, pid) : NaN]));
}

/** `--cpu-profile DIR`: this process's main thread profiled around each round, one .cpuprofile per round. */
export function mainThreadProfiler(dir: string) {
  const session = new Session();
  session.connect();
  fs.mkdirSync(dir, { recursive: true });
  return {
    async start() {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    },
    async stop(name: string) {
      const { profile } = await session.post('Profiler.stop');
      fs.writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    },
  };
}
