/**
 * `startEmbeddedPostgres({ statStatements: true })` (the benchmarks' Postgres, bench:anchor)
 * preloads pg_stat_statements when the Postgres package ships it, so each statement's calls and
 * time can be read; without the option nothing is preloaded.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { findPostgresBin, startEmbeddedPostgres } from '../src/stack/postgres';
import { freePort } from '../src/stack/temporal';

const shipped = fs.existsSync(path.join(findPostgresBin(), '..', 'lib', 'pg_stat_statements.so'));
const dir = path.join(__dirname, '..', '.data', `test-pgss-${process.pid}`);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function preloaded(statStatements: boolean): Promise<{ libs: string; calls?: number }> {
  const pg = await startEmbeddedPostgres({
    dataDir: path.join(dir, 'pg'),
    port: await freePort(),
    database: 'pgss',
    statStatements,
  });
  const c = new Client({ connectionString: pg.url });
  try {
    await c.connect();
    const libs = String((await c.query('SHOW shared_preload_libraries')).rows[0].shared_preload_libraries);
    if (!libs.includes('pg_stat_statements')) return { libs };
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await c.query('SELECT pg_stat_statements_reset()');
    for (let i = 0; i < 3; i++) await c.query('SELECT $1::int + 1 AS n', [i]);
    const r = await c.query("SELECT calls FROM pg_stat_statements WHERE query LIKE 'SELECT $1::int + $2 AS n'");
    return { libs, calls: Number(r.rows[0]?.calls) };
  } finally {
    await c.end();
    await pg.stop();
  }
}

(shipped ? it : it.skip)(
  'preloads pg_stat_statements with the option, and counts each statement',
  async () => {
    expect(await preloaded(true)).toEqual({ libs: 'pg_stat_statements', calls: 3 });
  },
  60_000,
);

it('preloads nothing without the option', async () => {
  expect((await preloaded(false)).libs).toBe('');
}, 60_000);
