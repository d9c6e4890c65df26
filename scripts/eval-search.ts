/**
 * `npm run eval:search`: the storefront search on the judged queries of
 * test/storefront/search-judgments.json; prints nDCG@10 and recall@10, overall, per language and
 * per kind of query, and the same for each ranker alone (what each one brings to the fusion).
 * Runs on DATABASE_URL or the embedded Postgres (migrated and seeded like `npm start`).
 * Options: --verbose (each query with its top 10), --json (the whole report as JSON).
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { withDb } from '../src/cli/context';
import { isCatalogEmpty, seedCatalog } from '../src/db/seed';
import { createDefaultEmbedder } from '../src/storefront/search/embedder';
import { evaluate, type EvalReport, type Judgment } from '../src/storefront/search/eval';
import { ensureSearchIndex } from '../src/storefront/search/index';
import { fuse, rank, RANKER_WEIGHTS, type Ranker } from '../src/storefront/search/search';
import { loadCatalog, loadInventory, loadPrices } from '../src/storefront/snapshot';
import { readVersions } from '../src/storefront/versions';

const JUDGMENTS = path.resolve(__dirname, '..', 'test', 'storefront', 'search-judgments.json');
const args = new Set(process.argv.slice(2));
const pct = (x: number) => x.toFixed(3);

void withDb(async (db) => {
  if (await isCatalogEmpty(db)) await seedCatalog(db);
  const judgments = (JSON.parse(fs.readFileSync(JUDGMENTS, 'utf8')) as { queries: Judgment[] }).queries;
  const v = await readVersions(db);
  const catalog = await loadCatalog(db, v.catalog);
  const index = await ensureSearchIndex(db, catalog, createDefaultEmbedder(), pino({ level: 'warn' }));
  const ctx = { db, index, catalog, prices: await loadPrices(db, v.prices), inventory: await loadInventory(db, v.inventory), now: new Date() };

  const run = (weights: Record<Ranker, number>) => evaluate(judgments, async (q) => fuse((await rank(ctx, q)).lists, weights).map((r) => r.groupId));
  const fused = await run(RANKER_WEIGHTS);
  if (args.has('--json')) {
    process.stdout.write(`${JSON.stringify(fused, null, 2)}\n`);
    return;
  }
  if (args.has('--verbose')) {
    for (const q of fused.queries) {
      const j = judgments.find((x) => x.query === q.query)!;
      process.stdout.write(`${pct(q.ndcg)} ${pct(q.recall)}  ${q.query}  [${q.top.map((id) => (j.relevant[id] ? `${id}:${j.relevant[id]}` : id)).join(' ')}]\n`);
    }
    process.stdout.write('\n');
  }
  const line = (name: string, r: EvalReport) => `${name.padEnd(22)} nDCG@10 ${pct(r.ndcg)}  recall@10 ${pct(r.recall)}\n`;
  process.stdout.write(`Search evaluation: ${judgments.length} judged queries, catalog version ${v.catalog}, embedder ${index.embedder.id}\n\n`);
  process.stdout.write(line('hybrid (RRF)', fused));
  for (const [key, g] of Object.entries(fused.groups)) process.stdout.write(`  ${`${key} (${g.n})`.padEnd(20)} nDCG@10 ${pct(g.ndcg)}  recall@10 ${pct(g.recall)}\n`);
  process.stdout.write('\nEach ranker alone:\n');
  for (const ranker of Object.keys(RANKER_WEIGHTS) as Ranker[]) {
    if (ranker === 'exact') continue;
    const only = Object.fromEntries(Object.keys(RANKER_WEIGHTS).map((r) => [r, r === ranker ? 1 : 0])) as Record<Ranker, number>;
    process.stdout.write(line(`  ${ranker}`, await run(only)));
  }
}).catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
