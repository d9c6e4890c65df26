/**
 * Start-up: a role (and `npm start`) that cannot reach Postgres or Temporal, or whose start-up
 * outlives STARTUP_TIMEOUT_S, exits non-zero with a message that names what it could not reach; migrations started by several processes at
 * once are applied once, and every starter succeeds.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { createDb, migrateLatest, migrationSource } from '../../src/db/knex';
import { createDatabaseIfMissing } from '../../src/stack/postgres';
import { freePort } from '../../src/stack/temporal';
import { testDatabaseUrl, uniq, workerDb } from '../support/stack';
import { roleEnv, ROOT, startRole } from '../support/roles';

jest.setTimeout(300_000);

/** Runs `node --import tsx <file>` (or, for `npm:<args>`, `npm <args>` as a user types it) with `env` to its exit. */
function run(
  file: string,
  env: Record<string, string>,
  timeoutMs = 180_000,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const [cmd, args] = file.startsWith('npm:')
      ? ['npm', file.slice(4).split(' ')]
      : [process.execPath, ['--import', 'tsx', path.join(ROOT, file)]];
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

describe('a start-up failure exits non-zero with a clear message', () => {
  // this jest worker's database, so only the service under test is unreachable
  beforeAll(() => workerDb());
  afterAll(async () => (await workerDb()).destroy());
  it('the gateway with an unreachable Postgres', async () => {
    const port = await freePort();
    const r = await run(
      'src/roles/gateway.ts',
      roleEnv('unused', {
        DATABASE_URL: `postgres://talat:s3cret@127.0.0.1:${port}/talat`,
        PORT: String(await freePort()),
      }),
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `talat gateway: start-up failed: Postgres at postgres://talat@127.0.0.1:${port}/talat is unreachable`,
    );
    expect(r.out).not.toContain('s3cret');
  });

  it('the worker with an unreachable Temporal', async () => {
    const port = await freePort();
    const r = await run(
      'src/roles/worker.ts',
      roleEnv('unused', { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, WORKER_HTTP_PORT: String(await freePort()) }),
    );
    expect(r.code).toBe(1);
    expect(r.out).toContain(`talat worker: start-up failed: Temporal at 127.0.0.1:${port} is unreachable`);
  });

  it('a worker whose Temporal accepts and never answers exits at STARTUP_TIMEOUT_S, naming the step', async () => {
    // a black hole: the TCP connection is accepted, no byte ever comes back
    const held: net.Socket[] = [];
    const hole = net.createServer((s) => held.push(s));
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    const port = (hole.address() as net.AddressInfo).port;
    try {
      const started = Date.now();
      const r = await run(
        'src/roles/worker.ts',
        roleEnv('unused', {
          TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
          WORKER_HTTP_PORT: String(await freePort()),
          STARTUP_TIMEOUT_S: '3',
        }),
        60_000,
      );
      expect(r.code).toBe(1);
      expect(r.out).toContain(
        'talat worker: start-up failed: the start-up did not finish within STARTUP_TIMEOUT_S (3 s): it was connecting to Temporal',
      );
      expect(Date.now() - started).toBeLessThan(30_000);
    } finally {
      held.forEach((s) => s.destroy());
      hole.close();
    }
  });

  it('a role in production without DATABASE_URL and TEMPORAL_ADDRESS says what it needs (exit 78)', async () => {
    const secrets: Record<string, string> = {
      STOREFRONT_KEY_SECRET: 'x'.repeat(32),
      IDENTITY_SECRET: 'y'.repeat(32),
      RESULT_SIGNING_KEY: 'r'.repeat(32),
      WEBHOOK_SECRET_KEY: 'a'.repeat(64),
      TEMPORAL_CODEC_KEYS: 'k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
    };
    for (const p of ['CARD', 'CARDNET', 'BANKAPP', 'QR', 'WALLET'])
      Object.assign(secrets, {
        [`PROVIDER_SECRET_${p}`]: `${p}-secret-0123456789`,
        [`PROVIDER_IPS_${p}`]: '10.0.0.0/8',
      });
    const r = await run('src/roles/gateway.ts', {
      ...roleEnv('unused', {
        NODE_ENV: 'production',
        DATABASE_URL: '',
        TEMPORAL_ADDRESS: '',
        PORT: String(await freePort()),
        ...secrets,
      }),
    });
    expect(r.code).toBe(78);
    expect(r.out).toContain('DATABASE_URL: required in production');
    expect(r.out).toContain('TEMPORAL_ADDRESS: required in production');
  });

  it('npm start (src/main.ts) with an unreachable Postgres', async () => {
    const r = await run('src/main.ts', {
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/talat`,
      TEMPORAL_ADDRESS: process.env.TALAT_TEST_TEMPORAL_ADDRESS!,
      SMTP_URL: 'smtp://127.0.0.1:1',
      PORT: String(await freePort()),
      SIMULATORS: 'off',
    });
    expect(r.code).toBe(1);
    expect(r.out).toContain('talat: start-up failed');
  });
});

it('with DATABASE_URL and TEMPORAL_ADDRESS unset, a role uses the embedded services of a running `npm start` (PG_PORT, TEMPORAL_PORT)', async () => {
  const admin = new URL(process.env.TALAT_TEST_PG_ADMIN_URL!);
  const temporal = process.env.TALAT_TEST_TEMPORAL_ADDRESS!;
  if (process.env.DATABASE_URL || process.env.TEMPORAL_ADDRESS) return; // the tests run on external services, not embedded ones
  // what `npm start` exposes: database `talat` as user postgres on PG_PORT, the dev server on TEMPORAL_PORT
  await createDatabaseIfMissing(admin.toString(), 'talat');
  // the embedded cluster asks for its password: DATA_DIR/pg.password, or PGPASSWORD when there is none
  const dataDir = path.join(ROOT, '.data', uniq('no-pg-password'));
  const gateway = await startRole(
    'gateway',
    roleEnv('unused', {
      DATABASE_URL: '',
      TEMPORAL_ADDRESS: '',
      DATA_DIR: dataDir,
      PGPASSWORD: decodeURIComponent(admin.password),
      PG_PORT: admin.port,
      TEMPORAL_PORT: temporal.split(':')[1],
    }),
  );
  try {
    expect(gateway.output()).toContain(`temporal       ${temporal} (the embedded one of \`npm start\`)`);
    expect(gateway.output()).toContain(
      `postgres       postgres://postgres@127.0.0.1:${admin.port}/talat (the embedded one of \`npm start\`)`,
    );
    expect((await fetch(`${gateway.base}/readyz`)).status).toBe(200);
  } finally {
    expect(await gateway.stop()).toBe(0);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

describe('migrations started by several processes at once', () => {
  const name = `talat_test_mig_${uniq('m').slice(2).replace(/-/g, '_')}`;
  let url: string;
  let url2: string;
  beforeAll(async () => {
    await createDatabaseIfMissing(process.env.TALAT_TEST_PG_ADMIN_URL!, name);
    await createDatabaseIfMissing(process.env.TALAT_TEST_PG_ADMIN_URL!, `${name}_p`);
    url = testDatabaseUrl(name);
    url2 = testDatabaseUrl(`${name}_p`);
  });
  afterAll(async () => {
    const admin = new Client({ connectionString: process.env.TALAT_TEST_PG_ADMIN_URL });
    await admin.connect();
    for (const db of [name, `${name}_p`]) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });

  it('three pools migrating a fresh database together: each succeeds, every migration applied once', async () => {
    const dbs = [0, 1, 2].map(() => createDb(url, { poolMax: 2 }));
    try {
      const results = await Promise.all(dbs.map((db) => migrateLatest(db)));
      const all = await migrationSource.getMigrations([]);
      expect(results.flat().sort()).toEqual(all.map((f) => migrationSource.getMigrationName(f)).sort());
      expect(results.filter((r) => r.length > 0)).toHaveLength(1);
      expect(await dbs[0]('knex_migrations').count('* as n').first()).toEqual({ n: String(all.length) });
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
    }
  });

  it('two `npm run migrate` processes on a fresh database at once: both exit 0, one applies', async () => {
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: url2 };
    const [x, y] = await Promise.all([run('npm:run migrate', env), run('npm:run migrate', env)]);
    expect({ codes: [x.code, y.code], out: `${x.out}${y.out}` }).toEqual({
      codes: [0, 0],
      out: expect.stringContaining('database is up to date'),
    });
    expect(`${x.out}${y.out}`).toContain('applied: ');
  });

  it('`npm run migrate -- --seed-if-empty` seeds once; `npm run seed` reloads', async () => {
    const env = { NODE_ENV: 'test', LOG_LEVEL: 'silent', DATABASE_URL: url2 };
    const first = await run('npm:run migrate -- --seed-if-empty', env);
    expect(first).toEqual({ code: 0, out: expect.stringContaining('seeded the catalog: ') });
    const again = await run('npm:run migrate -- --seed-if-empty', env);
    expect(again.code).toBe(0);
    expect(again.out).not.toContain('seeded');
    const seed = await run('npm:run seed', env);
    expect(seed).toEqual({ code: 0, out: expect.stringMatching(/catalog loaded: \d+ /) });
  });
});
