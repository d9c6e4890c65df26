/**
 * `npm run eval:search`: the storefront search on the judged sets of test/storefront/ (SETS below:
 * two mixed sets and three sets of intent queries, two held-out and dev); prints nDCG@10 and recall@10
 * for each set, overall, per kind of query and per language, and the same for each ranker alone
 * (what each one brings to the fusion). docs/search.md says how each set was written.
 * Runs on DATABASE_URL or the embedded Postgres (migrated and seeded like `npm start`).
 * Options: --verbose (each query with its top 10), --json (the whole reports as JSON),
 * --set 1|2|heldout|heldout2|dev (one set only), --no-rankers (skip the per-ranker lines), --latency.
 */
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { withDb } from '../src/cli/context';
import { isCatalogEmpty, seedCatalog } from '../src/db/seed';
import { createDefaultEmbedder } from '../src/storefront/search/embedder';
import { evaluate, type EvalReport, type Judgment } from '../src/storefront/search/eval';
import { ensureSearchIndex } from '../src/storefront/search/index';
import { fuse, order, rank, RANKER_WEIGHTS, type Ranker } from '../src/storefront/search/search';
import { loadCatalog, loadInventory, loadPrices } from '../src/storefront/snapshot';
import { readVersions } from '../src/storefront/versions';

const SETS = [
  { name: 'set 1 (search-judgments.json, written with the search in view)', file: 'search-judgments.json', key: '1' },
  { name: 'set 2 (search-judgments-2.json, written before tuning)', file: 'search-judgments-2.json', key: '2' },
  {
    name: 'intent held-out (search-intent-heldout.json, written before tuning, never tuned on)',
    file: 'search-intent-heldout.json',
    key: 'heldout',
  },
  {
    name: 'intent held-out 2 (search-intent-heldout-2.json, written before the second round, never tuned on)',
    file: 'search-intent-heldout-2.json',
    key: 'heldout2',
  },
  { name: 'intent dev (search-intent-dev.json, tuned on)', file: 'search-intent-dev.json', key: 'dev' },
];
const argv = process.argv.slice(2);
const args = new Set(argv);
const only = argv.includes('--set') ? argv[argv.indexOf('--set') + 1] : undefined;
const pct = (x: number) => x.toFixed(3);
const out = (s: string) => process.stdout.write(s);

void withDb(async (db) => {
  if (await isCatalogEmpty(db)) await seedCatalog(db);
  const v = await readVersions(db);
  const catalog = await loadCatalog(db, v.catalog);
  const index = await ensureSearchIndex(db, catalog, createDefaultEmbedder(), pino({ level: 'warn' }));
  const ctx = {
    db,
    index,
    catalog,
    prices: await loadPrices(db, v.prices),
    inventory: await loadInventory(db, v.inventory),
    now: new Date(),
  };
  const reports: Record<string, EvalReport> = {};
  const timings: number[] = [];

  for (const set of SETS.filter((s) => !only || s.key === only)) {
    const file = path.resolve(__dirname, '..', 'test', 'storefront', set.file);
    const judgments = (JSON.parse(fs.readFileSync(file, 'utf8')) as { queries: Judgment[] }).queries;
    const run = (weights: Record<Ranker, number>) =>
      evaluate(judgments, async (q) => {
        const t0 = performance.now();
        const ranked = await rank(ctx, q);
        const ids = (weights === RANKER_WEIGHTS ? order(ranked, weights) : fuse(ranked.lists, weights)).map(
          (r) => r.groupId,
        );
        timings.push(performance.now() - t0);
        return ids;
      });
    const fused = await run(RANKER_WEIGHTS);
    reports[set.key] = fused;
    if (args.has('--json')) continue;
    out(
      `\n== ${set.name}: ${judgments.length} judged queries, catalog version ${v.catalog}, embedder ${index.embedder.id}\n`,
    );
    if (args.has('--verbose')) {
      for (const q of fused.queries) {
        const j = judgments.find((x) => x.query === q.query)!;
        out(
          `${pct(q.ndcg)} ${pct(q.recall)}  ${q.kind.padEnd(14)} ${q.query}  [${q.top.map((id) => (j.relevant[id] ? `${id}:${j.relevant[id]}` : id)).join(' ')}]\n`,
        );
      }
      out('\n');
    }
    const line = (name: string, r: { ndcg: number; recall: number }) =>
      `${name.padEnd(26)} nDCG@10 ${pct(r.ndcg)}  recall@10 ${pct(r.recall)}\n`;
    out(line('hybrid (RRF)', fused));
    for (const [key, g] of Object.entries(fused.groups)) out(line(`  ${key} (${g.n})`, g));
    if (args.has('--no-rankers')) continue;
    out('Each ranker alone:\n');
    for (const ranker of Object.keys(RANKER_WEIGHTS) as Ranker[]) {
      if (ranker === 'exact') continue;
      const alone = Object.fromEntries(Object.keys(RANKER_WEIGHTS).map((r) => [r, r === ranker ? 1 : 0])) as Record<
        Ranker,
        number
      >;
      out(line(`  ${ranker}`, await run(alone)));
    }
  }
  if (args.has('--json')) out(`${JSON.stringify(reports, null, 2)}\n`);
  if (args.has('--latency')) {
    const sorted = [...timings].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))].toFixed(1);
    out(`\nrank() latency over ${sorted.length} queries (in process): p50 ${at(50)} ms, p95 ${at(95)} ms\n`);
  }
}).catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
