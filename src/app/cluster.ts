/**
 * The production topology on one machine, as processes (`npm run cluster`, docs/cluster.md):
 * Postgres (databases talat, temporal, temporal_visibility; Temporal's schemas set up and
 * upgraded by its schema tool), the Temporal server's four services as separate processes on one
 * configuration file (ops/temporal/temporal.yaml, also docker-compose.yml's), the namespace and
 * Talat's search attributes through the frontend's APIs, gateways behind HAProxy (health checks on
 * /readyz), workers and Temporal Web (the UI server, codec at the balancer's /codec). Every process is supervised (started again when it exits on its own), so
 * the fault tests kill -9 any of them and wait for it to come back.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { Client } from 'pg';
import { msToTs } from '@temporalio/common/lib/time';
import { createDb, migrateLatest } from '../db/knex';
import { ensureSearchAttributesOn, temporalTlsOptions, type TemporalTlsFiles } from '../temporal/client';
import { clientInterceptors } from '../temporal/closed-channel';
import { bundleWorkflows } from './worker';
import { createDatabaseIfMissing, superviseEmbeddedPostgres, type EmbeddedPostgres } from '../stack/postgres';
import { assertPortFree, supervise, type Supervised } from '../stack/supervisor';
import { stopChild } from '../stack/temporal';

export const TEMPORAL_SERVER_VERSION = 'v1.32.0';
/** Temporal Web: the UI server's version, the one the pinned CLI ships (scripts/provision-cluster.sh) */
export const TEMPORAL_UI_VERSION = 'v2.54.1';
export const TEMPORAL_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];
// the repository (from src/stack, or from dist/src/stack in a build)
const ROOT = [path.resolve(__dirname, '..', '..'), path.resolve(__dirname, '..', '..', '..')].find((d) =>
  fs.existsSync(path.join(d, 'ops', 'temporal', 'temporal.yaml')),
)!;
export const TEMPORAL_CONFIG = path.join(ROOT, 'ops', 'temporal', 'temporal.yaml');
export const TEMPORAL_DYNAMIC_CONFIG = path.join(ROOT, 'ops', 'temporal', 'temporal-dynamic.yaml');
/** Temporal's visibility indexes on search attributes made partial (docs/cluster.md, "The visibility indexes") */
export const VISIBILITY_INDEXES_SQL = path.join(ROOT, 'ops', 'temporal', 'visibility-indexes.sql');

const cacheBase = () => process.env.TALAT_CACHE ?? path.join(os.homedir(), '.cache', 'talat');
/** Where scripts/provision-cluster.sh builds the pinned server, its schema tool and schemas. */
export function serverCache(): string {
  return path.join(cacheBase(), `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}
/** Where it builds Temporal Web's server (bin/server). */
export function uiCache(): string {
  return path.join(cacheBase(), `temporal-ui-${TEMPORAL_UI_VERSION}`);
}

/** Ports of a cluster: Temporal's from one base (frontend base, history +1, matching +2, worker +6). */
export interface ClusterPorts {
  postgres: number;
  temporalBase: number;
  balancer: number;
  gateways: number[];
  workers: number[];
  /** Temporal Web's HTTP port (omitted: Temporal Web is not run) */
  ui?: number;
}

/** The gRPC, membership and metrics ports of a Temporal service, and the frontend's HTTP port. */
export function temporalPorts(base: number, service: TemporalService) {
  const offset = { frontend: 0, history: 1, matching: 2, worker: 6 }[service];
  return { grpc: base + offset, membership: base + 20 + offset, metrics: base + 30 + offset, http: base + 10 };
}

export interface ClusterOptions {
  dataDir: string;
  ports: ClusterPorts;
  namespace: string;
  retentionDays: number;
  historyShards: number;
  /** the environment of every gateway and worker (DATABASE_URL, TEMPORAL_ADDRESS are added) */
  roleEnv: Record<string, string>;
  /** WORKER_QUEUES of each worker (default: all queues on every worker) */
  workerQueues?: (string | undefined)[];
  /** a prebuilt workflow bundle for the workers (else bundled once into dataDir) */
  workflowBundle?: string;
  /** mTLS on the frontend: certificates made once under dataDir/tls, the roles connect with theirs */
  mtls?: boolean;
  log: (msg: string) => void;
}

export interface ClusterProcess {
  name: string;
  supervisor: Supervised;
  /** environment overrides for the next start (the roll of a worker to another build) */
  env: Record<string, string>;
}

export interface Cluster {
  pg: EmbeddedPostgres;
  /** the client certificate, key, CA and server name of the frontend's mTLS (when on) */
  tls?: TemporalTlsFiles;
  databaseUrl: string;
  temporalAddress: string;
  balancerUrl: string;
  gatewayUrls: string[];
  workerUrls: string[];
  temporal: Record<TemporalService, ClusterProcess>;
  gateways: ClusterProcess[];
  workers: ClusterProcess[];
  balancer: ClusterProcess;
  /** Temporal Web (when ports.ui is set) */
  ui?: ClusterProcess;
  uiUrl?: string;
  postgres: Supervised;
  bundlePath: string;
  /** where each part is, for the banner */
  describe(): string[];
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A child process as a supervised instance: its end, and a SIGTERM (SIGKILL after `graceMs`). */
function running(child: ChildProcess, graceMs: number) {
  const exited = new Promise<string>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(`exit code ${child.exitCode}`);
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`));
  });
  return { pid: child.pid, exited, stop: () => stopChild(child, graceMs) };
}

/** Spawns `cmd`, its output appended to `logFile`; resolves once `ready()` holds (or rejects when it exits first). */
async function spawnLogged(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
  ready: (out: string) => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<ChildProcess> {
  // a process group of its own, as `npm start` runs its dev server: a terminal's Ctrl-C reaches the
  // cluster's own process alone, which stops every part in its turn
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  const keep = (d: Buffer) => {
    fs.appendFileSync(logFile, d);
    out = (out + d.toString()).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `${path.basename(cmd)} ${args.slice(-2).join(' ')} exited (${child.exitCode ?? child.signalCode}):\n${out.slice(-3000)}`,
      );
    if (await ready(out)) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `${path.basename(cmd)} ${args.slice(-2).join(' ')} not ready within ${timeoutMs} ms:\n${out.slice(-3000)}`,
      );
    }
    await sleep(250);
  }
}

export const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.setTimeout(1000, () => (s.destroy(), resolve(false)));
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/** The schema tool (sql) on `database`: set up when new, then upgraded to the module's latest version. */
async function setUpSchema(
  pg: EmbeddedPostgres,
  password: string,
  database: string,
  schemaDir: string,
  log: (m: string) => void,
) {
  await createDatabaseIfMissing(pg.adminUrl, database);
  const tool = path.join(serverCache(), 'bin', 'sql');
  const base = [
    '--plugin',
    'postgres12',
    '--ep',
    '127.0.0.1',
    '-p',
    String(pg.port),
    '-u',
    'postgres',
    '--db',
    database,
  ];
  const run = (args: string[]) => {
    const r = spawnSync(tool, [...base, ...args], {
      encoding: 'utf8',
      env: { ...process.env, SQL_PASSWORD: password },
    });
    if (r.status !== 0) throw new Error(`${tool} ${args.join(' ')} on ${database} failed: ${r.stdout}${r.stderr}`);
  };
  const c = new Client({ connectionString: pg.adminUrl.replace(/\/postgres$/, `/${database}`) });
  await c.connect();
  const has = await c.query("SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_version'");
  await c.end();
  if (!has.rowCount) {
    log(`setting up Temporal's schema in ${database}`);
    run(['setup-schema', '-v', '0.0']);
  }
  run(['update-schema', '-d', schemaDir]);
}

/** One SQL file (a single statement or several, no parameters) on `url`'s database. */
async function runSqlFile(url: string, file: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(fs.readFileSync(file, 'utf8'));
  } finally {
    await c.end();
  }
}

export const TLS_SERVER_NAME = 'temporal-frontend.cluster.local';

/**
 * A CA, the frontend's certificate (127.0.0.1 and TLS_SERVER_NAME) and a client certificate, made
 * once with openssl under `dir` (kept: a second run reuses them). For the cluster's own use.
 */
function makeCertificates(dir: string): { server: { cert: string; key: string }; client: TemporalTlsFiles } {
  const f = (name: string) => path.join(dir, name);
  if (!fs.existsSync(f('client.pem'))) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const run = (args: string[]) => {
      const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr}`);
    };
    // arguments without spaces, so each command is one line to read
    const openssl = (line: string) => run(line.split(' '));
    openssl('req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 825 -subj /CN=talat-cluster-ca');
    for (const [name, cn, ext] of [
      ['server', TLS_SERVER_NAME, `subjectAltName=DNS:${TLS_SERVER_NAME},IP:127.0.0.1\nextendedKeyUsage=serverAuth`],
      ['client', 'talat', 'extendedKeyUsage=clientAuth'],
    ]) {
      fs.writeFileSync(f(`${name}.ext`), `${ext}\n`);
      openssl(`req -newkey rsa:2048 -nodes -keyout ${name}.key -out ${name}.csr -subj /CN=${cn}`);
      openssl(
        `x509 -req -in ${name}.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out ${name}.pem -days 825 -extfile ${name}.ext`,
      );
    }
  }
  return {
    server: { cert: f('server.pem'), key: f('server.key') },
    client: { certPath: f('client.pem'), keyPath: f('client.key'), caPath: f('ca.pem'), serverName: TLS_SERVER_NAME },
  };
}

/** The frontend's connection once it answers; the namespace (with its retention) and search attributes registered. */
async function registerNamespace(address: string, opts: ClusterOptions, tls?: TemporalTlsFiles): Promise<void> {
  const deadline = Date.now() + 120_000;
  let last: unknown;
  while (Date.now() < deadline) {
    let connection: Connection | undefined;
    try {
      const tlsOptions = temporalTlsOptions(tls);
      connection = await Connection.connect({
        address,
        connectTimeout: 2000,
        interceptors: clientInterceptors(),
        ...(tlsOptions ? { tls: tlsOptions } : {}),
      });
      const ws = connection.workflowService;
      try {
        await ws.describeNamespace({ namespace: opts.namespace });
      } catch (e) {
        if ((e as { code?: number }).code !== 5 /* NOT_FOUND */) throw e;
        opts.log(`registering the namespace ${opts.namespace} (retention ${opts.retentionDays} days)`);
        await ws.registerNamespace({
          namespace: opts.namespace,
          workflowExecutionRetentionPeriod: msToTs(opts.retentionDays * 86_400_000),
        });
      }
      await ensureSearchAttributesOn(connection, opts.namespace);
      // the namespace is usable once the frontend's namespace cache has it (refreshed every 10 s)
      await ws.countWorkflowExecutions({ namespace: opts.namespace, query: '' });
      return;
    } catch (e) {
      last = e;
      await sleep(1000);
    } finally {
      await connection?.close().catch(() => undefined);
    }
  }
  throw new Error(`the namespace ${opts.namespace} could not be registered: ${(last as Error)?.message}`);
}

function haproxyConfig(opts: ClusterOptions, pidFile: string): string {
  const servers = opts.ports.gateways.map((p, i) => `  server gateway${i + 1} 127.0.0.1:${p} check`).join('\n');
  return `# Written by Talat (src/app/cluster.ts) at every start of \`npm run cluster\`.
global
  maxconn 4096
  pidfile ${pidFile}
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  # a request that could not reach a gateway (connection refused) goes to another one
  retries 2
  option redispatch 1
  retry-on conn-failure
frontend talat
  bind 127.0.0.1:${opts.ports.balancer}
  default_backend gateways
backend gateways
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
${servers}
`;
}

/**
 * Temporal Web's configuration (the keys of the UI server's server/config/config.go): the
 * frontend, with the cluster's client certificate under mTLS, and the codec at the balancer.
 */
function uiConfig(opts: ClusterOptions, frontend: string, codec: string, tls?: TemporalTlsFiles): string {
  const q = (v: string) => JSON.stringify(v);
  const lines = [
    '# Written by Talat (src/app/cluster.ts) at every start of `npm run cluster`.',
    `temporalGrpcAddress: ${q(frontend)}`,
    'host: 127.0.0.1',
    `port: ${opts.ports.ui}`,
    'enableUi: true',
    `defaultNamespace: ${q(opts.namespace)}`,
    'disableNewsFetch: true',
    'hideLogs: true',
    'codec:',
    `  endpoint: ${q(codec)}`,
    'cors:',
    // served over plain HTTP on loopback: the CSRF cookie of its write actions cannot be "Secure"
    '  cookieInsecure: true',
  ];
  if (tls)
    lines.push(
      'tls:',
      `  caFile: ${q(tls.caPath!)}`,
      `  certFile: ${q(tls.certPath!)}`,
      `  keyFile: ${q(tls.keyPath!)}`,
      `  serverName: ${q(tls.serverName!)}`,
      '  enableHostVerification: true',
    );
  return `${lines.join('\n')}\n`;
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const { log, ports } = opts;
  const dataDir = path.resolve(opts.dataDir);
  const logs = path.join(dataDir, 'logs');
  fs.mkdirSync(logs, { recursive: true });
  const cache = serverCache();
  const server = path.join(cache, 'bin', 'server');
  if (!fs.existsSync(server))
    throw new Error(`the Temporal server is not built: run \`bash scripts/provision-cluster.sh\` (expected ${server})`);
  const supLog = { info: log, warn: log, error: log };
  const stops: (() => Promise<unknown>)[] = [];
  /** One part as a supervised process (output in logs/<log>), started again when it exits, stopped with the rest. */
  const startPart = async (
    name: string,
    label: string,
    spawnArgs: { cmd: string; args: string[]; env: Record<string, string>; log: string },
    ready: (out: string) => boolean | Promise<boolean>,
    timing: { startMs: number; graceMs: number },
  ): Promise<ClusterProcess> => {
    const proc: ClusterProcess = { name, env: {}, supervisor: undefined as unknown as Supervised };
    const { cmd, args, env, log: file } = spawnArgs;
    proc.supervisor = await supervise(
      label,
      async () =>
        running(
          await spawnLogged(cmd, args, { ...env, ...proc.env }, path.join(logs, file), ready, timing.startMs),
          timing.graceMs,
        ),
      supLog,
    );
    stops.push(() => proc.supervisor.stop());
    return proc;
  };
  const stopAll = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((e) => log(`stopping: ${(e as Error).message}`));
  };

  try {
    for (const s of TEMPORAL_SERVICES) {
      const p = temporalPorts(ports.temporalBase, s);
      for (const port of [p.grpc, p.membership, p.metrics, ...(s === 'frontend' ? [p.http] : [])])
        await assertPortFree(port, `the Temporal ${s} service cannot start`, 'Choose other ports (docs/cluster.md).');
    }
    const uiServer = path.join(uiCache(), 'bin', 'server');
    if (ports.ui !== undefined && !fs.existsSync(uiServer))
      throw new Error(`Temporal Web is not built: run \`bash scripts/provision-cluster.sh\` (expected ${uiServer})`);
    for (const port of [ports.balancer, ...ports.gateways, ...ports.workers, ...(ports.ui ? [ports.ui] : [])])
      await assertPortFree(port, 'the cluster cannot start', 'Choose other ports (docs/cluster.md).');

    const { pg, supervisor: postgres } = await superviseEmbeddedPostgres(
      { dataDir: path.join(dataDir, 'pg'), port: ports.postgres, database: 'talat' },
      supLog,
    );
    stops.push(() => postgres.stop());
    const password = decodeURIComponent(new URL(pg.url).password);
    const schemas = path.join(cache, 'schema', 'postgresql', 'v12');
    await setUpSchema(pg, password, 'temporal', path.join(schemas, 'temporal', 'versioned'), log);
    await setUpSchema(pg, password, 'temporal_visibility', path.join(schemas, 'visibility', 'versioned'), log);
    await runSqlFile(pg.adminUrl.replace(/\/postgres$/, '/temporal_visibility'), VISIBILITY_INDEXES_SQL);
    const db = createDb(pg.url, { poolMax: 2 });
    try {
      await migrateLatest(db);
    } finally {
      await db.destroy();
    }

    // the Temporal services: one configuration file, one process each
    const frontend = temporalPorts(ports.temporalBase, 'frontend');
    const temporalAddress = `127.0.0.1:${frontend.grpc}`;
    const temporalEnv: Record<string, string> = {
      TEMPORAL_PG_HOST: '127.0.0.1',
      TEMPORAL_PG_PORT: String(pg.port),
      TEMPORAL_PG_USER: 'postgres',
      TEMPORAL_PG_PASSWORD: password,
      TEMPORAL_NUM_HISTORY_SHARDS: String(opts.historyShards),
      TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
      BIND_ON_IP: '127.0.0.1',
      TEMPORAL_FRONTEND_ADDRESS: temporalAddress,
      TEMPORAL_DYNAMIC_CONFIG: TEMPORAL_DYNAMIC_CONFIG,
      TEMPORAL_LOG_LEVEL: process.env.TEMPORAL_LOG_LEVEL ?? 'warn',
    };
    for (const s of TEMPORAL_SERVICES) {
      const p = temporalPorts(ports.temporalBase, s);
      const up = s.toUpperCase();
      temporalEnv[`TEMPORAL_${up}_PORT`] = String(p.grpc);
      temporalEnv[`TEMPORAL_${up}_MEMBERSHIP_PORT`] = String(p.membership);
    }
    temporalEnv.TEMPORAL_FRONTEND_HTTP_PORT = String(frontend.http);
    const certs = opts.mtls ? makeCertificates(path.join(dataDir, 'tls')) : undefined;
    if (certs)
      Object.assign(temporalEnv, {
        TEMPORAL_TLS_SERVER_CERT: certs.server.cert,
        TEMPORAL_TLS_SERVER_KEY: certs.server.key,
        TEMPORAL_TLS_CA: certs.client.caPath!,
        TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
        TEMPORAL_TLS_WORKER_CERT: certs.client.certPath!,
        TEMPORAL_TLS_WORKER_KEY: certs.client.keyPath!,
      });
    const temporal = {} as Record<TemporalService, ClusterProcess>;
    const startService = async (s: TemporalService) => {
      const p = temporalPorts(ports.temporalBase, s);
      temporal[s] = await startPart(
        `temporal ${s}`,
        `the Temporal ${s} service`,
        {
          cmd: server,
          args: ['--config-file', TEMPORAL_CONFIG, '--allow-no-auth', 'start', '--service', s],
          env: { ...temporalEnv, TEMPORAL_METRICS_PORT: String(p.metrics) },
          log: `temporal-${s}.log`,
        },
        () => portOpen(p.grpc),
        { startMs: 120_000, graceMs: 10_000 },
      );
    };
    // history first: on a new database the first service to start writes the cluster's metadata,
    // and services starting together race for it (the losers exit)
    await startService('history');
    await Promise.all(TEMPORAL_SERVICES.filter((s) => s !== 'history').map(startService));
    await registerNamespace(temporalAddress, opts, certs?.client);

    // the workflow code, bundled once for every worker
    let bundlePath = opts.workflowBundle ?? '';
    if (!bundlePath) {
      log('bundling the workflows once for the workers');
      bundlePath = path.join(dataDir, 'workflow-bundle.js');
      fs.writeFileSync(bundlePath, await bundleWorkflows());
    }

    const uiUrl = ports.ui !== undefined ? `http://127.0.0.1:${ports.ui}` : undefined;
    const roleEnv: Record<string, string> = {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      // Temporal Web calls the gateways' /codec from the browser, from its own origin
      ...(ports.ui !== undefined ? { TEMPORAL_WEB_ORIGIN: `${uiUrl},http://localhost:${ports.ui}` } : {}),
      ...opts.roleEnv,
      DATABASE_URL: pg.url,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_NAMESPACE: opts.namespace,
      WORKFLOW_BUNDLE_PATH: bundlePath,
      ...(certs
        ? {
            TEMPORAL_TLS_CERT: certs.client.certPath!,
            TEMPORAL_TLS_KEY: certs.client.keyPath!,
            TEMPORAL_TLS_CA: certs.client.caPath!,
            TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
          }
        : {}),
    };
    const startRole = (kind: 'gateway' | 'worker', i: number, port: number): Promise<ClusterProcess> => {
      const queues = kind === 'worker' ? opts.workerQueues?.[i] : undefined;
      return startPart(
        `${kind} ${i + 1}`,
        `${kind} ${i + 1}`,
        {
          cmd: process.execPath,
          args: [path.join(ROOT, 'scripts', 'run.cjs'), `roles/${kind}`],
          env: {
            ...roleEnv,
            ...(kind === 'gateway' ? { PORT: String(port) } : { WORKER_HTTP_PORT: String(port) }),
            ...(queues ? { WORKER_QUEUES: queues } : {}),
          },
          log: `${kind}-${i + 1}.log`,
        },
        (out) => out.includes(`Talat ${kind} is running`),
        { startMs: 180_000, graceMs: 15_000 },
      );
    };
    const workers = await Promise.all(ports.workers.map((p, i) => startRole('worker', i, p)));
    const gateways = await Promise.all(ports.gateways.map((p, i) => startRole('gateway', i, p)));

    const haproxy = ['/usr/sbin/haproxy', '/usr/bin/haproxy'].find((f) => fs.existsSync(f)) ?? 'haproxy';
    const cfg = path.join(dataDir, 'haproxy.cfg');
    fs.writeFileSync(cfg, haproxyConfig(opts, path.join(dataDir, 'haproxy.pid')));
    const balancer = await startPart(
      'balancer',
      'the balancer (HAProxy)',
      { cmd: haproxy, args: ['-db', '-f', cfg], env: {}, log: 'haproxy.log' },
      () => portOpen(ports.balancer),
      { startMs: 30_000, graceMs: 5_000 },
    );
    const balancerUrl = `http://127.0.0.1:${ports.balancer}`;

    let ui: ClusterProcess | undefined;
    if (ports.ui !== undefined) {
      // its --root: config/development.yaml, written at every start
      const uiRoot = path.join(dataDir, 'temporal-web');
      fs.mkdirSync(path.join(uiRoot, 'config'), { recursive: true });
      fs.writeFileSync(
        path.join(uiRoot, 'config', 'development.yaml'),
        uiConfig(opts, temporalAddress, `${balancerUrl}/codec`, certs?.client),
      );
      ui = await startPart(
        'temporal web',
        'Temporal Web',
        { cmd: uiServer, args: ['--root', uiRoot, '--env', 'development', 'start'], env: {}, log: 'temporal-web.log' },
        () => portOpen(ports.ui!),
        { startMs: 60_000, graceMs: 5_000 },
      );
    }

    const gatewayUrls = ports.gateways.map((p) => `http://127.0.0.1:${p}`);
    const workerUrls = ports.workers.map((p) => `http://127.0.0.1:${p}`);
    return {
      pg,
      ui,
      uiUrl,
      tls: certs?.client,
      databaseUrl: pg.url,
      temporalAddress,
      balancerUrl,
      gatewayUrls,
      workerUrls,
      temporal,
      gateways,
      workers,
      balancer,
      postgres,
      bundlePath,
      describe: () => {
        const pid = (p: ClusterProcess | Supervised) => ('supervisor' in p ? p.supervisor : p).pid() ?? '?';
        const redacted = pg.url.replace(/:[^:@/]+@/, ':***@');
        return [
          `  balancer           ${balancerUrl}  (HAProxy, pid ${pid(balancer)}; health checks GET /readyz every 1 s; config ${cfg})`,
          ...gateways.map(
            (g, i) => `  gateway ${i + 1}          ${gatewayUrls[i]}  (pid ${pid(g)}; /healthz /readyz /docs)`,
          ),
          ...workers.map(
            (w, i) =>
              `  worker ${i + 1}           ${workerUrls[i]}/readyz  (pid ${pid(w)}; task queues ${opts.workerQueues?.[i] ?? 'payments,webhooks,background'})`,
          ),
          ...TEMPORAL_SERVICES.map((s) => {
            const p = temporalPorts(ports.temporalBase, s);
            const extra =
              s === 'frontend'
                ? `, HTTP API http://127.0.0.1:${p.http}${certs ? `; mTLS: client certificates of ${certs.client.caPath}` : ''}`
                : '';
            return `  temporal ${s.padEnd(9)} 127.0.0.1:${p.grpc}${extra}  (pid ${pid(temporal[s])}; metrics http://127.0.0.1:${p.metrics}/metrics)`;
          }),
          `  namespace          ${opts.namespace} (retention ${opts.retentionDays} days, ${opts.historyShards} history shards, search attributes OrderId PaymentMethod PaymentStatus)`,
          `  postgres           ${redacted}  (pid ${postgres.pid() ?? '?'}; databases talat, temporal, temporal_visibility)`,
          ui
            ? `  temporal web       ${uiUrl}  (UI server ${TEMPORAL_UI_VERSION}, pid ${pid(ui)}; frontend ${temporalAddress}${certs ? ' over mTLS' : ''}; codec ${balancerUrl}/codec)`
            : '  temporal web       not run (no port given)',
          `  logs               ${logs}`,
        ];
      },
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}
