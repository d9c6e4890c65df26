/**
 * Supervision of the embedded services of `npm start` (Postgres, the Temporal dev server, the
 * object store): a service that exits while it should be running is started again, with
 * exponential back-off (RESTART_BACKOFF), each exit and restart logged; stop() ends it for good.
 *
 * Also the port rule the embedded services share: a port already held by another process is a
 * refusal with a message that names the port and what to do, never a silent use of that process.
 */
import fs from 'node:fs';
import net from 'node:net';

/** A running instance of a service: how to notice its end and how to stop it. */
export interface Running {
  /** the process id, for logs (and the chaos suite's kill -9) */
  pid?: number;
  /** resolves with a description ("exit code 1", "signal SIGKILL") when the instance ends */
  exited: Promise<string>;
  stop(): Promise<void>;
}

export interface Supervised {
  name: string;
  /** the current instance's pid (undefined while restarting) */
  pid(): number | undefined;
  /** how many times it was restarted */
  restarts(): number;
  /** resolves once the next restart (after the current instance's end) has succeeded */
  nextStart(): Promise<void>;
  /** no more restarts (an exit from now on is final), without stopping it: the start of a shutdown */
  hold(): void;
  /** no more restarts, and the instance (or the one being started) stopped */
  stop(): Promise<void>;
}

/** Back-off of restarts: 0.5 s, doubling, at most 15 s; back to 0.5 s after 60 s of running. */
export const RESTART_BACKOFF = { initialMs: 500, maxMs: 15_000, stableMs: 60_000 } as const;

/**
 * Runs `start` now (its failure is the caller's, as before), then watches the instance: when it
 * ends without stop(), waits the back-off and starts it again, for as long as it takes.
 */
export async function supervise(
  name: string,
  start: () => Promise<Running>,
  log: { info(msg: string): void; warn(msg: string): void; error(msg: string): void },
  backoff: { initialMs: number; maxMs: number; stableMs: number } = RESTART_BACKOFF,
): Promise<Supervised> {
  let current: Running | undefined = await start();
  let stopped = false;
  let restarts = 0;
  let delay = backoff.initialMs;
  let startedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  let waiters: (() => void)[] = [];
  let restarting: Promise<unknown> | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });

  const watch = async (instance: Running): Promise<void> => {
    const how = await instance.exited;
    if (stopped || instance !== current) return;
    current = undefined;
    if (Date.now() - startedAt >= backoff.stableMs) delay = backoff.initialMs;
    for (;;) {
      log.warn(`${name} exited unexpectedly (${how}): restarting it in ${delay} ms`);
      await sleep(delay);
      if (stopped) return;
      delay = Math.min(backoff.maxMs, delay * 2);
      try {
        const starting = start();
        restarting = starting.catch(() => undefined);
        const next = await starting;
        restarting = undefined;
        if (stopped) return void (await next.stop());
        current = next;
        restarts++;
        startedAt = Date.now();
        log.warn(`${name} restarted (pid ${next.pid ?? '?'}, restart #${restarts})`);
        const w = waiters;
        waiters = [];
        w.forEach((f) => f());
        void watch(next);
        return;
      } catch (e) {
        restarting = undefined;
        log.error(`${name} could not be restarted: ${(e as Error).message.split('\n')[0]}`);
      }
    }
  };
  void watch(current);

  function hold() {
    stopped = true;
    clearTimeout(timer);
    wake?.();
  }

  return {
    name,
    pid: () => current?.pid,
    restarts: () => restarts,
    nextStart: () => new Promise<void>((resolve) => waiters.push(resolve)),
    hold,
    async stop() {
      hold();
      const c = current;
      current = undefined;
      await c?.stop();
      // a restart under way when stop() came: its instance is stopped as soon as it is up
      await restarting;
    },
  };
}

/** Whether something accepts connections on 127.0.0.1:`port`, or holds it (listen fails). */
export async function portInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  const listenFails = await new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(true));
    srv.listen(port, host, () => srv.close(() => resolve(false)));
  });
  if (listenFails) return true;
  return new Promise<boolean>((resolve) => {
    const s = net.connect({ host, port });
    const done = (v: boolean) => {
      s.destroy();
      resolve(v);
    };
    s.setTimeout(500, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** The pid and command line of the process listening on TCP `port` (Linux /proc), when it can be told. */
export function portHolder(port: number): { pid: number; command: string } | undefined {
  try {
    const hex = port.toString(16).toUpperCase().padStart(4, '0');
    const inodes = new Set<string>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      if (!fs.existsSync(table)) continue;
      for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
        const f = line.trim().split(/\s+/);
        // local address "0100007F:1C31", state 0A = LISTEN, inode in column 10
        if (f[1]?.endsWith(`:${hex}`) && f[3] === '0A') inodes.add(f[9]);
      }
    }
    if (!inodes.size) return undefined;
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      let fds: string[];
      try {
        fds = fs.readdirSync(`/proc/${d}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        let target = '';
        try {
          target = fs.readlinkSync(`/proc/${d}/fd/${fd}`);
        } catch {
          continue;
        }
        const m = /^socket:\[(\d+)\]$/.exec(target);
        if (m && inodes.has(m[1])) {
          const command = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
          return { pid: Number(d), command };
        }
      }
    }
  } catch {
    // not Linux, or /proc unreadable: the message goes without the holder
  }
  return undefined;
}

/** A refusal to start an embedded service on a port another process holds. */
export class PortTakenError extends Error {
  constructor(
    readonly port: number,
    what: string,
    fix: string,
  ) {
    const holder = portHolder(port);
    const by = holder ? ` by pid ${holder.pid} (${holder.command.slice(0, 160)})` : ' by another process';
    super(`${what}: port ${port} on 127.0.0.1 is already in use${by}. ${fix}`);
    this.name = 'PortTakenError';
  }
}

/** Throws PortTakenError when `port` is in use. */
export async function assertPortFree(port: number, what: string, fix: string): Promise<void> {
  if (await portInUse(port)) throw new PortTakenError(port, what, fix);
}

/** Whether process `pid` is alive (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // a zombie (exited, not yet reaped by its parent) counts as gone
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: the signal said it is there
  }
}

/** Resolves when `pid` is gone (polled every `everyMs`). */
export function whenGone(pid: number, everyMs = 500): { promise: Promise<string>; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<string>((resolve) => {
    timer = setInterval(() => {
      if (!alive(pid)) {
        clearInterval(timer);
        resolve(`pid ${pid} is gone`);
      }
    }, everyMs);
    timer.unref();
  });
  return { promise, cancel: () => clearInterval(timer) };
}

/**
 * Claims `dataDir` for this process (DATA_DIR/talat.pid): refused while another live process
 * holds it; returns the release. A claim left by a process that is gone is taken over.
 */
export function claimDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = `${dataDir}/talat.pid`;
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw e;
      const pid = Number(fs.readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
        throw new Error(
          `DATA_DIR ${dataDir} is in use by another Talat (\`npm start\`, pid ${pid}; ${file}): stop it first, or give this one another DATA_DIR`,
        );
      fs.rmSync(file, { force: true }); // its process is gone
    }
  }
  return () => {
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file);
  };
}
