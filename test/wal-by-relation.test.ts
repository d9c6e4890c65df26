/**
 * `bench/cluster.ts --wal` (bench/wal-by-relation.ts): a WAL range is counted to the tables and
 * indexes that wrote it, per paid payment, on a real Postgres.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { lsnBytes, walByRelation } from '../bench/wal-by-relation';
import { startEmbeddedPostgres } from '../src/stack/postgres';
import { freePort } from '../src/stack/temporal';

const dir = path.join(__dirname, '..', '.data', `test-walrel-${process.pid}`);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

it('counts a range of WAL to the table and to its indexes, per payment', async () => {
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort(), database: 'walrel' });
  const c = new Client({ connectionString: pg.url });
  try {
    await c.connect();
    await c.query('CREATE TABLE wide (id int PRIMARY KEY, a text, b text)');
    await c.query('CREATE INDEX wide_a ON wide (a)');
    await c.query('CREATE INDEX wide_b ON wide (b)');
    await c.query('CHECKPOINT');
    const from = (await c.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l as string;
    await c.query("INSERT INTO wide SELECT g, 'a' || g, repeat('b', 200) || g FROM generate_series(1, 400) g");
    await c.query('CREATE TABLE small (id int)');
    const to = (await c.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l as string;

    const lines = await walByRelation(pg.adminUrl, from, to, 4);
    expect(lines[0]).toMatch(
      /^ {6}WAL records per paid payment: [\d.]+ KiB in [\d.]+ records \(full-page images \d+ %\); by relation:$/,
    );
    const kib = (name: string) => {
      const line = lines.find((l) => l.startsWith(`        ${name}: `));
      return line ? Number(/: ([\d.]+) KiB/.exec(line)![1]) : undefined;
    };
    // 400 rows over 4 "payments": the heap's 100 rows each and the three indexes' entries
    expect(kib('walrel.wide')).toBeGreaterThan(20);
    expect(kib('walrel.wide indexes')).toBeGreaterThan(kib('walrel.wide')! / 2);
    // CREATE TABLE touches catalog pages first since the CHECKPOINT: they are full-page images
    expect(lines.some((l) => /walrel\.pg_\w+ indexes: .*\(full-page images (9\d|100) %\)$/.test(l))).toBe(true);
    expect(lines.find((l) => l.includes('walrel.wide indexes'))).toMatch(/\(full-page images [0-5] %\)$/);
    // the records' lengths add up to the range, less page headers and alignment
    const total = Number(/: ([\d.]+) KiB/.exec(lines[0])![1]) * 4 * 1024;
    const range = lsnBytes(to) - lsnBytes(from);
    expect(total / range).toBeGreaterThan(0.9);
    expect(total / range).toBeLessThanOrEqual(1);
  } finally {
    await c.end();
    await pg.stop();
  }
}, 60_000);
