/**
 * `npm run bench:storefront`: requests per second and latency (p50, p99) of the storefront's
 * catalog tree, product list and search, on this machine.
 *
 * Bounded and local: the gateway listens on 127.0.0.1 on a free port, autocannon runs each
 * scenario for BENCH_DURATION_S seconds (default 10, at most 60) with BENCH_CONNECTIONS
 * connections (default 10, at most 64), after warm-up requests (the search index is built then).
 * Search runs twice: with queries it has not seen (every group's English and Thai name: the
 * database ranks each one) and with the judged queries again (rankings from the cache).
 * Postgres: DATABASE_URL, or the embedded one of `npm start` (migrated and seeded when empty).
 * The access log is off; no Temporal server is needed (the storefront does not use it).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import autocannon from 'autocannon';
import pino from 'pino';
import { loadConfig } from '../src/config';
import { createDb, migrateLatest } from '../src/db/knex';
import { isCatalogEmpty, seedCatalog } from '../src/db/seed';
import { createApp } from '../src/app/app';
import { startEmbeddedPostgres } from '../src/stack/postgres';

const bounded = (name: string, fallback: number, max: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`${name} must be a whole number from 1 to ${max}`);
  return v;
};

async function main() {
  const duration = bounded('BENCH_DURATION_S', 10, 60);
  const connections = bounded('BENCH_CONNECTIONS', 10, 64);
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });

  let url = config.database.url;
  let stopPg: (() => Promise<void>) | undefined;
  if (!url) {
    const pg = await startEmbeddedPostgres({
      dataDir: path.join(config.dataDir, 'pg'),
      port: config.database.embeddedPort,
      database: 'talat',
    });
    url = pg.url;
    if (pg.startedByUs) stopPg = () => pg.stop();
  }
  const db = createDb(url, { poolMax: 10 });
  const connection = Connection.lazy({ address: '127.0.0.1:1' }); // never dialled: no storefront route uses Temporal
  const server = http.createServer(
    createApp({
      config,
      db,
      temporal: { client: new Client({ connection }), taskQueue: 'bench' },
      logger: pino({ level: 'silent' }),
    }).callback(),
  );
  try {
    await migrateLatest(db);
    if (await isCatalogEmpty(db)) await seedCatalog(db);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

    const searchRequest = (query: string) => ({
      method: 'GET' as const,
      path: `/api/search2/semantic_search?query=${encodeURIComponent(query)}&limit=20`,
    });
    const judged = JSON.parse(
      fs.readFileSync(path.resolve(__dirname, '..', 'test', 'storefront', 'search-judgments.json'), 'utf8'),
    ) as { queries: { query: string }[] };
    const repeated = judged.queries.map((q) => searchRequest(q.query));
    // distinct queries (every group's English and Thai name, interleaved): each is new to the ranking cache
    const groups = fs
      .readFileSync(path.resolve(__dirname, '..', 'data', 'catalog', 'groups.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { nameEn: string; nameTh: string });
    const distinct = groups.flatMap((g) => [searchRequest(g.nameEn.toLowerCase()), searchRequest(g.nameTh)]);
    const scenarios: {
      name: string;
      path: string;
      headers?: Record<string, string>;
      requests?: { method: 'GET'; path: string }[];
      warm?: boolean;
    }[] = [
      { name: 'catalog tree', path: '/api/v2/catalog-tree/catalog-tree' },
      {
        name: 'product list (gzip)',
        path: '/api/product/productlist/onlineData',
        headers: { 'accept-encoding': 'gzip' },
      },
      { name: 'product list (identity)', path: '/api/product/productlist/onlineData' },
      { name: `search, ${distinct.length} distinct queries`, path: distinct[0].path, requests: distinct, warm: false },
      { name: `search, ${repeated.length} judged queries again`, path: repeated[0].path, requests: repeated },
    ];

    for (const s of scenarios)
      for (const r of s.warm === false ? [] : (s.requests ?? [{ path: s.path }])) {
        const res = await fetch(base + r.path, { headers: s.headers });
        if (res.status !== 200) throw new Error(`warm-up ${r.path}: HTTP ${res.status}`);
        await res.arrayBuffer();
      }

    const cpus = (await import('node:os')).cpus();
    process.stdout.write(
      `Storefront benchmark: ${connections} connections, ${duration} s per scenario, loopback, ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}\n\n`,
    );
    process.stdout.write(
      `${'scenario'.padEnd(34)}${'req/s'.padStart(10)}${'p50 ms'.padStart(10)}${'p97.5 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'non-2xx'.padStart(10)}${'errors'.padStart(8)}\n`,
    );
    for (const s of scenarios) {
      const r = await autocannon({
        url: base + s.path,
        connections,
        duration,
        headers: s.headers,
        requests: s.requests,
      });
      process.stdout.write(
        `${s.name.padEnd(34)}${r.requests.average.toFixed(0).padStart(10)}${String(r.latency.p50).padStart(10)}${String(r.latency.p97_5).padStart(10)}${String(r.latency.p99).padStart(10)}${String(r.non2xx).padStart(10)}${String(r.errors).padStart(8)}\n`,
      );
    }
  } finally {
    await new Promise((r) => server.close(r));
    // requests cut off when a scenario ends may still be waiting on the database: let them finish
    const pool = (db.client as { pool?: { numUsed(): number; numPendingAcquires(): number } }).pool;
    for (let i = 0; i < 100 && pool && pool.numUsed() + pool.numPendingAcquires() > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    await connection.close().catch(() => undefined);
    await db.destroy();
    await stopPg?.();
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
