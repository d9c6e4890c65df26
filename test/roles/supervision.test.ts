/**
 * Supervision of the embedded services (src/stack/supervisor.ts): `npm start` (src/main.ts)
 * refuses a Temporal port another process holds, and starts its dev server again after a
 * kill -9, after which /qrpayment works again; a supervised Postgres comes back after a kill -9
 * of its postmaster; the embedded Postgres asks TCP clients for its password.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { createApiKey } from '../../src/http/middleware/api-key';
import { passwordFileOf, superviseEmbeddedPostgres } from '../../src/stack/postgres';
import { alive } from '../../src/stack/supervisor';
import { freePort } from '../../src/stack/temporal';
import { testDatabaseUrl, uniq, waitFor, workerDb } from '../support/stack';
import { ROOT } from '../support/roles';

jest.setTimeout(240_000);

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

interface Main {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `npm start` (src/main.ts) with `env`; resolves at its banner or its exit (bounded). */
function startMain(env: Record<string, string>, waitMs = 150_000): Promise<Main> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const main = { child, output: () => out, exited };
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(main);
    }, waitMs);
    child.stdout!.on('data', () => {
      if (out.includes('Talat is running')) {
        clearTimeout(timer);
        resolve(main);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      resolve(main);
    });
  });
}

async function stopMain(m: Main): Promise<void> {
  if (m.child.exitCode !== null || m.child.signalCode !== null) return;
  m.child.kill('SIGTERM');
  const t = setTimeout(() => m.child.kill('SIGKILL'), 30_000);
  await m.exited;
  clearTimeout(t);
}

/** main.ts on this jest worker's database, with its own embedded Temporal. */
async function mainEnv(dataDir: string): Promise<Record<string, string>> {
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    DATA_DIR: dataDir,
    DATABASE_URL: testDatabaseUrl(`talat_test_w${process.env.JEST_WORKER_ID ?? '1'}`),
    TEMPORAL_ADDRESS: '',
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    // no object store: the asset publisher fails fast instead of uploading the catalog
    S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
    S3_ACCESS_KEY_ID: 'unused',
    S3_SECRET_ACCESS_KEY: 'unused-secret',
    SMTP_URL: 'smtp://127.0.0.1:9',
    SIMULATORS: 'off',
  };
}

const dirs: string[] = [];
const runDir = () => {
  const d = path.join(ROOT, '.data', uniq('supervision'));
  dirs.push(d);
  return d;
};

beforeAll(() => workerDb());
afterAll(async () => {
  await (await workerDb()).destroy();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  for (const d of dirs) fs.rmSync(passwordFileOf(path.join(d, 'pg')), { force: true });
});

it('npm start refuses a Temporal port another process holds, naming the port and TEMPORAL_ADDRESS', async () => {
  const foreign = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
  const port = (foreign.address() as net.AddressInfo).port;
  try {
    const m = await startMain({ ...(await mainEnv(runDir())), TEMPORAL_PORT: String(port) });
    expect(await m.exited).toBe(1);
    expect(m.output()).toContain(
      `talat: start-up failed: the embedded Temporal dev server cannot start: port ${port} on 127.0.0.1 is already in use by pid ${process.pid}`,
    );
    expect(m.output()).toContain(`set TEMPORAL_ADDRESS=127.0.0.1:${port} to use that server on purpose`);
    expect(m.output()).not.toContain('embedded dev server');
  } finally {
    await new Promise((r) => foreign.close(r));
  }
});

it('a second npm start on the same DATA_DIR is refused while the first runs', async () => {
  const dataDir = runDir();
  fs.mkdirSync(dataDir, { recursive: true });
  // a live process that holds the directory (this jest worker stands in for the first start)
  fs.writeFileSync(path.join(dataDir, 'talat.pid'), String(process.pid));
  const m = await startMain(await mainEnv(dataDir));
  expect(await m.exited).toBe(1);
  expect(m.output()).toContain(`DATA_DIR ${dataDir} is in use by another Talat (\`npm start\`, pid ${process.pid}`);
});

it('kill -9 of the embedded Temporal dev server: it is started again, and /qrpayment works again', async () => {
  const db = await workerDb();
  const { key } = await createApiKey(db, { name: 'supervision', scopes: ['payments:write'], mode: 'sandbox' });
  const dataDir = runDir();
  const env = await mainEnv(dataDir);
  const m = await startMain(env);
  try {
    expect(m.output()).toContain('Talat is running');
    expect(m.output()).toContain('(embedded dev server, supervised)');
    const base = `http://127.0.0.1:${env.PORT}`;
    const pay = () =>
      fetch(`${base}/qrpayment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ orderId: uniq('SUP'), userId: 'u-1', amount: 100, customerId: 'c-1' }),
        signal: AbortSignal.timeout(15_000),
      }).then(
        (r) => r.status,
        () => 0,
      );
    expect(await pay()).toBe(200);

    const pidFile = path.join(dataDir, 'temporal.db.pid');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => !alive(pid), 10_000, 'the dev server gone');
    await waitFor(async () => m.output().includes('the Temporal dev server exited unexpectedly'), 10_000, 'logged');
    await waitFor(async () => m.output().includes('the Temporal dev server restarted'), 90_000, 'restarted').catch(
      (e) => {
        throw new Error(`${(e as Error).message}:\n${m.output()}`);
      },
    );
    expect(Number(fs.readFileSync(pidFile, 'utf8'))).not.toBe(pid);
    // bounded: the client reconnects, and the worker polls the new server
    await waitFor(async () => (await pay()) === 200, 60_000, '/qrpayment answering 200 again');
  } finally {
    await stopMain(m);
    // whatever happened above, no dev server of this test outlives it
    const pidFile = path.join(dataDir, 'temporal.db.pid');
    const left = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8')) : 0;
    if (left && alive(left)) process.kill(left, 'SIGKILL');
    expect(left).toBe(0); // main.ts stopped the restarted one (and removed its pid file)
  }
});

describe('the embedded Postgres', () => {
  it('asks TCP clients for its password (scram-sha-256)', async () => {
    const admin = new URL(process.env.TALAT_TEST_PG_ADMIN_URL!);
    if (process.env.DATABASE_URL) return; // the tests run on an external Postgres
    expect(admin.password).not.toBe('');
    const withPassword = new Client({ connectionString: admin.toString() });
    await withPassword.connect();
    await withPassword.end();
    for (const password of ['', 'wrong']) {
      const url = new URL(admin.toString());
      url.password = password;
      const c = new Client({ connectionString: url.toString(), password: password || undefined });
      await expect(c.connect()).rejects.toThrow(/password/);
      await c.end().catch(() => undefined);
    }
  });

  it('kill -9 of the supervised postmaster: it is started again on the same port and data', async () => {
    const dataDir = path.join(runDir(), 'pg');
    const { pg, supervisor } = await superviseEmbeddedPostgres(
      { dataDir, port: await freePort(), database: 'talat_sup' },
      quiet,
    );
    try {
      expect(fs.statSync(passwordFileOf(dataDir)).mode & 0o777).toBe(0o600);
      const query = async () => {
        const c = new Client({ connectionString: pg.url, connectionTimeoutMillis: 2000 });
        try {
          await c.connect();
          return (await c.query('select 42 as n')).rows[0].n as number;
        } catch {
          return undefined;
        } finally {
          await c.end().catch(() => undefined);
        }
      };
      expect(await query()).toBe(42);
      const restarted = supervisor.nextStart();
      process.kill(pg.pid, 'SIGKILL');
      await Promise.race([
        restarted,
        new Promise((_, reject) => setTimeout(() => reject(new Error('no restart within 60 s')), 60_000)),
      ]);
      expect(supervisor.restarts()).toBe(1);
      expect(supervisor.pid()).not.toBe(pg.pid);
      expect(await waitFor(query, 20_000, 'a query on the restarted cluster')).toBe(42);
    } finally {
      await supervisor.stop();
    }
  });
});
