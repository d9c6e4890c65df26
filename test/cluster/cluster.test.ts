/**
 * The production topology, run (docs/cluster.md): `npm run cluster` as the docs print it (the
 * banner, a payment through the balancer found by its search attribute and in Temporal Web,
 * decoded by the codec Temporal Web calls, Ctrl-C, a second run on the same data), then the fault and upgrade run (`bench/chaos.ts --cluster`) and the bulkheads
 * (`bench/bulkhead.ts --cluster`). One file, so the three clusters never run at once on 2 cores.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { clusterPorts } from '../../bench/cluster-support';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { createApiKey } from '../../src/http/middleware/api-key';
import { portOpen, startCluster, temporalPorts } from '../../src/app/cluster';
import { connectClient } from '../../src/temporal/client';
import { freePort } from '../../src/stack/temporal';

const ROOT = path.resolve(__dirname, '..', '..');
jest.setTimeout(600_000);

interface Run {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

/** Spawns `npm run <script>` (or node `args`) with `env`, its output kept. */
function start(cmd: string, args: string[], env: Record<string, string>): Run {
  // npm in a process group of its own, so that Ctrl-C reaches it as from a terminal
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: cmd === 'npm',
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-30_000)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

async function until(run: Run, text: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!run.out().includes(text)) {
    if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}:\n${run.out()}\n${run.err()}`);
    if (Date.now() > deadline) throw new Error(`no "${text}" within ${ms} ms:\n${run.out()}\n${run.err()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * Ctrl-C: SIGINT to npm's process group, as a terminal sends it; whether the cluster said it
 * stopped (npm itself ends by the signal, as with `npm start`).
 */
async function interrupt(run: Run): Promise<boolean> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return false;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-run.child.pid!, s);
    } catch {
      // the group is gone already
    }
  };
  signal('SIGINT');
  const kill = setTimeout(() => signal('SIGKILL'), 90_000);
  await run.exited;
  clearTimeout(kill);
  return /\] stopped$/m.test(run.err());
}

/** GET `url` as JSON, asserting a 200 (the body in the failure). */
async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const text = await res.text();
  expect({ url, status: res.status, text: res.status === 200 ? '' : text }).toEqual({ url, status: 200, text: '' });
  return JSON.parse(text) as T;
}

/** The last line `<PREFIX> {json}` of a run's output. */
function resultOf<T>(out: string, prefix: string): T | undefined {
  const line = out
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(`${prefix} `));
  return line ? (JSON.parse(line.slice(prefix.length + 1)) as T) : undefined;
}

describe('the cluster', () => {
  const dataDir = path.join(ROOT, '.data', `cluster-test-${process.pid}`);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('`npm run cluster` brings the topology up, pays through the balancer, stops on Ctrl-C and reuses its data', async () => {
    const ports = await clusterPorts(2, 2);
    let uiPort = await freePort();
    while ([ports.postgres, ports.balancer, ...ports.gateways, ...ports.workers].includes(uiPort))
      uiPort = await freePort();
    const ui = `http://127.0.0.1:${uiPort}`;
    const env = {
      DATA_DIR: dataDir,
      CLUSTER_PG_PORT: String(ports.postgres),
      CLUSTER_TEMPORAL_PORT_BASE: String(ports.temporalBase),
      CLUSTER_BALANCER_PORT: String(ports.balancer),
      CLUSTER_GATEWAY_PORTS: ports.gateways.join(','),
      CLUSTER_WORKER_PORTS: ports.workers.join(','),
      CLUSTER_UI_PORT: String(uiPort),
      CLUSTER_WORKFLOW_BUNDLE: process.env.TALAT_TEST_WORKFLOW_BUNDLE!,
      SIMULATORS: 'off',
    };
    const first = start('npm', ['run', 'cluster'], env);
    try {
      await until(first, 'Talat cluster is running:', 300_000);
      const banner = first.out();
      const frontend = temporalPorts(ports.temporalBase, 'frontend').grpc;
      for (const part of [
        `balancer           http://127.0.0.1:${ports.balancer}`,
        `gateway 1          http://127.0.0.1:${ports.gateways[0]}`,
        `gateway 2          http://127.0.0.1:${ports.gateways[1]}`,
        `worker 2           http://127.0.0.1:${ports.workers[1]}/readyz`,
        `temporal frontend  127.0.0.1:${frontend}`,
        'temporal history',
        'temporal matching',
        'temporal worker',
        `postgres           postgres://postgres:***@127.0.0.1:${ports.postgres}/talat`,
        `temporal web       ${ui}  (UI server v2.54.1`,
      ])
        expect(banner).toContain(part);
      for (const url of [`http://127.0.0.1:${ports.balancer}`, ...ports.gateways.map((p) => `http://127.0.0.1:${p}`)])
        expect((await fetch(`${url}/readyz`)).status).toBe(200);

      // an API key as docs/cluster.md prints the command (with this run's data directory and port)
      const apikey = start(
        'sh',
        [
          '-c',
          `DATABASE_URL=postgres://postgres:$(cat ${dataDir}/pg.password)@127.0.0.1:${ports.postgres}/talat npm run apikey -- create --name shop --scopes payments:write,payments:read --sandbox`,
        ],
        {},
      );
      expect(await apikey.exited).toBe(0);
      // its output may arrive just after its exit
      for (let i = 0; i < 50 && !/safely:\n\S+\n/.test(apikey.out()); i++) await new Promise((r) => setTimeout(r, 100));
      const key = apikey.out().trim().split('\n').pop()!;
      expect(key).toMatch(/^\S{20,}$/);
      // a payment through the balancer, on the cluster's Postgres and Temporal
      const orderId = `CLUSTER-${process.pid}`;
      const res = await fetch(`http://127.0.0.1:${ports.balancer}/qrpayment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ orderId, userId: 'u-cluster', amount: 12.5, customerId: 'c-cluster' }),
      });
      expect(res.status).toBe(200);
      const { paymentId } = ((await res.json()) as { body: { paymentId: string } }).body;
      // found by Talat's search attribute on the cluster's SQL visibility
      const client = await connectClient(`127.0.0.1:${frontend}`, 'default', {
        codecKeys: loadConfig({}).temporal.codecKeys,
      });
      try {
        let count = 0;
        for (let i = 0; i < 30 && count === 0; i++) {
          count = (await client.workflow.count(`OrderId = "${orderId}"`)).count;
          if (!count) await new Promise((r) => setTimeout(r, 500));
        }
        expect(count).toBe(1);
      } finally {
        await client.connection.close();
      }
      // its visibility indexes on search attributes are partial (ops/temporal/visibility-indexes.sql),
      // and a query on an attribute still finds its index
      const password = fs.readFileSync(path.join(dataDir, 'pg.password'), 'utf8').trim();
      const vis = new PgClient({
        connectionString: `postgres://postgres:${password}@127.0.0.1:${ports.postgres}/temporal_visibility`,
      });
      await vis.connect();
      try {
        const { rows } = await vis.query<{ whole: number; partial: number }>(
          `SELECT count(*) FILTER (WHERE i.indpred IS NULL)::int AS whole, count(*) FILTER (WHERE i.indpred IS NOT NULL)::int AS partial
             FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[1]
            WHERE i.indrelid = 'executions_visibility'::regclass AND a.attgenerated = 's'`,
        );
        expect(rows[0].whole).toBe(0);
        expect(rows[0].partial).toBeGreaterThan(50);
        await vis.query('SET enable_seqscan = off');
        const plan = await vis.query(
          'EXPLAIN SELECT run_id FROM executions_visibility WHERE namespace_id = $1 AND keyword01 = $2',
          ['n', orderId],
        );
        expect(plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')).toMatch(/by_keyword_01/);
      } finally {
        await vis.end();
      }

      // Temporal Web: its page, and its API (which proxies the frontend's) sees the payment
      const page = await fetch(`${ui}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toMatch(/<html/i);
      const settings = await getJson<{ Codec: { Endpoint: string } }>(`${ui}/api/v1/settings`);
      expect(settings.Codec.Endpoint).toBe(`http://127.0.0.1:${ports.balancer}/codec`);
      const workflowId = `payment-${paymentId}`;
      const listed = await getJson<{ executions?: { execution: { workflowId: string } }[] }>(
        `${ui}/api/v1/namespaces/default/workflows?query=${encodeURIComponent(`OrderId = "${orderId}"`)}`,
      );
      expect(listed.executions?.map((e) => e.execution.workflowId)).toEqual([workflowId]);
      // what the browser then does with the payment's input: ciphertext from Temporal Web's API,
      // clear text from the codec endpoint of its settings, called from Temporal Web's origin
      type Payload = { metadata: Record<string, string>; data: string };
      const history = await getJson<{
        history: { events: { workflowExecutionStartedEventAttributes?: { input: { payloads: Payload[] } } }[] };
      }>(`${ui}/api/v1/namespaces/default/workflows/${workflowId}/history`);
      const input = history.history.events[0].workflowExecutionStartedEventAttributes!.input.payloads;
      expect(Buffer.from(input[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
      const decoded = await fetch(`${settings.Codec.Endpoint}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: ui },
        body: JSON.stringify({ payloads: input }),
      });
      expect(decoded.status).toBe(200);
      expect(decoded.headers.get('access-control-allow-origin')).toBe(ui);
      const clear = ((await decoded.json()) as { payloads: Payload[] }).payloads;
      expect(Buffer.from(clear[0].data, 'base64').toString()).toContain(orderId);
    } catch (e) {
      await interrupt(first);
      throw e;
    }
    expect(await interrupt(first)).toBe(true);
    // Ctrl-C stopped every part: nothing listens on their ports any more
    for (const p of [
      ports.balancer,
      uiPort,
      ...ports.gateways,
      temporalPorts(ports.temporalBase, 'history').grpc,
      ports.postgres,
    ])
      expect({ port: p, open: await portOpen(p) }).toEqual({ port: p, open: false });

    // the second run reuses the data: no new schema, no new namespace, the payment still there
    const second = start('npm', ['run', 'cluster'], env);
    try {
      await until(second, 'Talat cluster is running:', 300_000);
      expect(second.err()).not.toMatch(/setting up Temporal's schema|registering the namespace/);
      expect(first.err()).toMatch(/registering the namespace default/);
    } catch (e) {
      await interrupt(second);
      throw e;
    }
    expect(await interrupt(second)).toBe(true);
  });

  it('faults and a rolling upgrade with payments in flight: 0 lost, 0 applied twice, old histories replay', async () => {
    const run = start(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/chaos.ts',
        '--cluster',
        ...['--duration', '45', '--rate', '2', '--kill-every', '7', '--qr-expiry', '15', '--seed', '11'],
      ],
      { CHAOS_WORKFLOW_BUNDLE: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
    );
    const term = setTimeout(() => run.child.kill('SIGTERM'), 420_000);
    const code = await run.exited;
    clearTimeout(term);
    const r = resultOf<{
      created: number;
      orders: number;
      lost: number;
      appliedTwice: number;
      badSignatures: number;
      kills: Record<string, number>;
      replayed: number;
      replayFailures: number;
      onNextBuild: number;
    }>(run.out(), 'CHAOS_RESULT');
    if (!r) throw new Error(`no result (exit ${code}):\n${run.out()}\n${run.err()}`);
    const context = `${run.out()}\n${run.err().slice(-5000)}`;
    expect({ lost: r.lost, appliedTwice: r.appliedTwice, badSignatures: r.badSignatures, context }).toEqual({
      lost: 0,
      appliedTwice: 0,
      badSignatures: 0,
      context,
    });
    expect(r.created).toBe(r.orders);
    for (const kind of ['history', 'worker', 'gateway', 'roll'])
      expect({ kind, n: r.kills[kind] }).toEqual({ kind, n: expect.any(Number) });
    for (const kind of ['history', 'worker', 'gateway', 'roll']) expect(r.kills[kind]).toBeGreaterThanOrEqual(1);
    expect(r.replayed).toBeGreaterThan(0);
    expect(r.replayFailures).toBe(0);
    // and the roll did change the build: payments started after it ran the patched workflow
    expect(r.onNextBuild).toBeGreaterThan(0);
    expect(code).toBe(0);
  });

  // 60 payments of a merchant whose endpoint hangs: 240 attempts of 5 s each on the webhooks worker.
  // A larger storm's expiries (150 at once) are a burst on the payments queue itself (docs/cluster.md).
  it('bulkheads: a retry storm on the webhooks worker keeps payments schedule-to-start p99 under one hanging attempt', async () => {
    const run = start(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/bulkhead.ts',
        '--cluster',
        ...['--storm', '60', '--rate', '5', '--seconds', '25', '--expiry', '8'],
      ],
      { BULKHEAD_WORKFLOW_BUNDLE: process.env.TALAT_TEST_WORKFLOW_BUNDLE! },
    );
    const term = setTimeout(() => run.child.kill('SIGTERM'), 420_000);
    const code = await run.exited;
    clearTimeout(term);
    const r = resultOf<{ steadyP99: number; steadyTasks: number; steadyErrors: number; storm: string }>(
      run.out(),
      'BULKHEAD_RESULT',
    );
    if (!r) throw new Error(`no result (exit ${code}):\n${run.out()}\n${run.err()}`);
    const context = run.out();
    expect({ steadyErrors: r.steadyErrors, context }).toEqual({ steadyErrors: 0, context });
    // a delayed-start QR payment runs its one task when its result comes (the sandbox provider's
    // callback): 125 offered, those paid by the time of the measure are measured (87 in one run)
    expect(r.steadyTasks).toBeGreaterThan(50);
    // the storm really ran: its webhooks attempted (a storm that never happened proves nothing)
    expect(r.storm).toMatch(/[1-9]\d* attempts/);
    expect({ steadyP99: r.steadyP99, context }).toEqual({ steadyP99: expect.any(Number), context });
    // a bound from the mechanism, not a timing: a retry that reached the payments worker would hold
    // a slot for a hanging attempt's whole timeout (one process for every queue: p50 24 s). The
    // 1 s goal is the benchmark's (docs/cluster.md), not a timed test on two shared cores.
    expect(r.steadyP99).toBeLessThan(loadConfig({}).webhooks.timeoutMs);
    expect(code).toBe(0);
  });

  it('mTLS: with the frontend requiring client certificates, the roles connect with TEMPORAL_TLS_* and run a payment; no certificate, no call', async () => {
    const cluster = await startCluster({
      dataDir: path.join(dataDir, 'mtls'),
      ports: { ...(await clusterPorts(1, 1)), ui: await freePort() },
      namespace: 'default',
      retentionDays: 1,
      historyShards: 4,
      roleEnv: { NODE_ENV: 'test', LOG_LEVEL: 'warn', SIMULATORS: 'off' },
      workflowBundle: process.env.TALAT_TEST_WORKFLOW_BUNDLE!,
      mtls: true,
      log: () => undefined,
    });
    // the roles' codec keys: generated once in their data directory
    const codecKeys = loadConfig({ DATA_DIR: path.join(dataDir, 'mtls') }).temporal.codecKeys;
    try {
      const db = createDb(cluster.databaseUrl, { poolMax: 1 });
      const { key } = await createApiKey(db, { name: 'mtls-test', scopes: ['payments:write'], mode: 'sandbox' });
      await db.destroy();
      const orderId = `MTLS-${process.pid}`;
      const res = await fetch(`${cluster.balancerUrl}/qrpayment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ orderId, userId: 'u-mtls', amount: 12.5, customerId: 'c-mtls' }),
      });
      expect(res.status).toBe(200);
      const { paymentId } = ((await res.json()) as { body: { paymentId: string } }).body;
      const client = await connectClient(cluster.temporalAddress, 'default', { codecKeys, tls: cluster.tls });
      try {
        // the worker (with its certificate) ran the payment's first step: it is pending, recorded
        const handle = client.workflow.getHandle(`payment-${paymentId}`);
        expect((await handle.describe()).status.name).toBe('RUNNING');
      } finally {
        await client.connection.close();
      }
      // Temporal Web reaches the frontend with the cluster's client certificate
      const listed = await getJson<{ executions?: { execution: { workflowId: string } }[] }>(
        `${cluster.uiUrl}/api/v1/namespaces/default/workflows?query=${encodeURIComponent(`OrderId = "${orderId}"`)}`,
      );
      expect(listed.executions?.map((e) => e.execution.workflowId)).toEqual([`payment-${paymentId}`]);
      // without a client certificate (plain TCP, or TLS trusting the CA but showing none) the frontend refuses
      const call = (tls?: typeof cluster.tls) =>
        connectClient(cluster.temporalAddress, 'default', { codecKeys, tls }).then(async (c) => {
          try {
            return await c.workflowService.getSystemInfo({});
          } finally {
            await c.connection.close();
          }
        });
      await expect(call()).rejects.toThrow();
      await expect(call({ caPath: cluster.tls!.caPath, serverName: cluster.tls!.serverName })).rejects.toThrow();
      await expect(call(cluster.tls)).resolves.toBeDefined();
    } finally {
      await cluster.stop();
    }
  });
});
