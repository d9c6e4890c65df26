/**
 * Where a run's WAL went, by relation: pg_waldump over the run's LSN range, each record's bytes
 * counted to the relation of its first block (a table, its indexes together, its TOAST; records
 * with no block, such as commits, by resource manager), with the full-page images' share. For
 * `npx tsx bench/cluster.ts --wal` (docs/cluster.md).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { Client as PgClient } from 'pg';
import { findPostgresBin } from '../src/stack/postgres';

interface Tally {
  bytes: number;
  fpi: number;
  records: number;
}

// "rmgr: Heap len (rec/tot): 54/ 174, tx: ..., desc: INSERT ..., blkref #0: rel 1663/16384/16390 blk 0 FPW"
const LINE = /^rmgr: (\S+)\s+len \(rec\/tot\):\s*(\d+)\/\s*(\d+),/;
const BLOCK = /blkref #\d+: rel \d+\/(\d+)\/(\d+)/;

/** a WAL position ("16/B374D848", as pg_current_wal_lsn() prints it) in bytes */
export function lsnBytes(lsn: string): number {
  const [hi, lo] = lsn.split('/').map((h) => parseInt(h, 16));
  return hi * 2 ** 32 + lo;
}

/** relation names by "database oid/filenode", for the databases the server holds */
async function relationNames(adminUrl: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const admin = new PgClient({ connectionString: adminUrl });
  await admin.connect();
  try {
    const dbs = await admin.query<{ oid: string; datname: string }>(
      "SELECT oid::text, datname FROM pg_database WHERE datname NOT IN ('template0', 'template1')",
    );
    for (const { oid, datname } of dbs.rows) {
      const c = new PgClient({ connectionString: adminUrl.replace(/\/[^/?]+(\?|$)/, `/${datname}$1`) });
      await c.connect();
      try {
        const rels = await c.query<{ oid: string; f: string; name: string; tbl: string | null }>(
          `SELECT c.oid::text, pg_relation_filenode(c.oid)::text AS f, c.relname AS name, t.relname AS tbl
             FROM pg_class c LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid
            WHERE pg_relation_filenode(c.oid) IS NOT NULL`,
        );
        const byOid = new Map(rels.rows.map((r) => [r.oid, r.name]));
        for (const r of rels.rows) {
          // an index counts to its table's indexes; a TOAST table to the table whose values it holds
          const base = r.tbl ?? r.name;
          const toast = /^pg_toast_(\d+)/.exec(base);
          const name = toast && byOid.has(toast[1]) ? `${byOid.get(toast[1])} (toast)` : base;
          names.set(`${oid}/${r.f}`, `${datname}.${name}${r.tbl ? ' indexes' : ''}`);
        }
      } finally {
        await c.end();
      }
    }
    return names;
  } finally {
    await admin.end();
  }
}

/** lines "relation: KiB per paid payment (full-page images %)", the `top` largest, and the totals */
export async function walByRelation(
  adminUrl: string,
  from: string,
  to: string,
  paid: number,
  top = 10,
): Promise<string[]> {
  const admin = new PgClient({ connectionString: adminUrl });
  await admin.connect();
  const dir = (await admin.query<{ data_directory: string }>('SHOW data_directory')).rows[0].data_directory;
  await admin.end();
  const names = await relationNames(adminUrl);
  const tallies = new Map<string, Tally>();
  const total: Tally = { bytes: 0, fpi: 0, records: 0 };
  const child = spawn(
    path.join(findPostgresBin(), 'pg_waldump'),
    ['-p', path.join(dir, 'pg_wal'), '-s', from, '-e', to],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  for await (const line of readline.createInterface({ input: child.stdout })) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [rec, tot] = [Number(m[2]), Number(m[3])];
    const b = BLOCK.exec(line);
    const key = b ? (names.get(`${b[1]}/${b[2]}`) ?? `relation ${b[1]}/${b[2]}`) : `(${m[1]}, no block)`;
    const t = tallies.get(key) ?? { bytes: 0, fpi: 0, records: 0 };
    for (const x of [t, total]) {
      x.bytes += tot;
      x.fpi += tot - rec;
      x.records += 1;
    }
    tallies.set(key, t);
  }
  await new Promise((r) => child.once('close', r));
  const per = (n: number) => n / Math.max(1, paid);
  const kib = (t: Tally) =>
    `${(per(t.bytes) / 1024).toFixed(2)} KiB in ${per(t.records).toFixed(1)} records (full-page images ${((100 * t.fpi) / Math.max(1, t.bytes)).toFixed(0)} %)`;
  return [
    `      WAL records per paid payment: ${kib(total)}; by relation:`,
    ...[...tallies]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, top)
      .map(([k, t]) => `        ${k}: ${kib(t)}`),
  ];
}
