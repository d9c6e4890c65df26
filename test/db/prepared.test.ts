/**
 * prepared(): a hot statement as a named prepared statement, answering as db.raw does: the same
 * rows, knex's query events, in a transaction on its connection, and a plan whose result columns
 * changed under it (a migration while the process runs) prepared afresh rather than failing.
 */
import { createDb, type Db } from '../../src/db/knex';
import { prepared } from '../../src/db/prepared';
import { statementsOf, uniq } from '../support/stack';
import { useTestStack } from '../support/servers';

const stack = useTestStack({ worker: false });
let db: Db;
let table: string;

beforeAll(async () => {
  // a pool of one connection: every call below meets the statement that connection prepared
  db = createDb((stack.db.client as { config: { connection: string } }).config.connection, { poolMax: 1 });
  table = `prep_${uniq('t').replace(/-/g, '_')}`;
  await db.raw(`CREATE TABLE ${table} (id text PRIMARY KEY, n int NOT NULL)`);
});
afterAll(async () => {
  await db.raw(`DROP TABLE IF EXISTS ${table}`);
  await db.destroy();
});

it('answers as db.raw does, with "?" bindings, and is parsed once per connection', async () => {
  const sql = `INSERT INTO ${table} (id, n) VALUES (?, ?) RETURNING id, n`;
  expect((await prepared(db, sql, ['a', 1])).rows).toEqual([{ id: 'a', n: 1 }]);
  expect((await prepared(db, sql, ['b', 2])).rows).toEqual((await db.raw(`SELECT 'b' AS id, 2 AS n`)).rows);
  const { rows } = await db.raw<{ rows: { name: string; statement: string }[] }>(
    'SELECT name, statement FROM pg_prepared_statements',
  );
  expect(rows.filter((r) => r.statement.includes(table))).toHaveLength(1);
  expect(rows.find((r) => r.statement.includes(table))!.statement).toContain('VALUES ($1, $2)');
});

it("emits knex's query events (what the budget test and the benchmarks count)", async () => {
  const { sql } = await statementsOf(db, () => prepared(db, `SELECT n FROM ${table} WHERE id = ?`, ['a']));
  expect(sql).toEqual([`SELECT n FROM ${table} WHERE id = ?`]);
  const errors: unknown[] = [];
  db.on('query-error', (e) => errors.push(e));
  await expect(prepared(db, `INSERT INTO ${table} (id, n) VALUES (?, ?)`, ['a', 9])).rejects.toMatchObject({
    code: '23505',
  });
  expect(errors).toHaveLength(1);
});

it("runs on a transaction's own connection: rolled back with it", async () => {
  await db
    .transaction(async (trx) => {
      await prepared(trx, `INSERT INTO ${table} (id, n) VALUES (?, ?)`, ['in-trx', 3]);
      expect((await prepared(trx, `SELECT n FROM ${table} WHERE id = ?`, ['in-trx'])).rows).toEqual([{ n: 3 }]);
      throw new Error('roll back');
    })
    .catch(() => undefined);
  expect((await prepared(db, `SELECT n FROM ${table} WHERE id = ?`, ['in-trx'])).rows).toEqual([]);
});

it('a column added under a prepared SELECT * is prepared afresh, not an error', async () => {
  const sql = `SELECT * FROM ${table} WHERE id = ?`;
  expect((await prepared(db, sql, ['a'])).rows).toEqual([{ id: 'a', n: 1 }]);
  await stack.db.raw(`ALTER TABLE ${table} ADD COLUMN note text NOT NULL DEFAULT 'x'`);
  // Postgres refuses the old plan ("cached plan must not change result type"); prepared() renames it
  expect((await prepared(db, sql, ['a'])).rows).toEqual([{ id: 'a', n: 1, note: 'x' }]);
  expect((await prepared(db, sql, ['b'])).rows).toEqual([{ id: 'b', n: 2, note: 'x' }]);
});

it("Talat's pooled connections plan prepared statements generically (planned once, not at each call)", async () => {
  expect((await db.raw('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'force_generic_plan' }]);
  expect((await stack.db.raw('SHOW plan_cache_mode')).rows).toEqual([{ plan_cache_mode: 'force_generic_plan' }]);
});
