/**
 * Hybrid product search: several rankers each order the product groups, and reciprocal rank
 * fusion merges them (score = sum of weight / (K + rank)): lexical (Postgres full text over the
 * pre-split Thai/English text), synonym, trigram (pg_trgm word similarity: typos, partial
 * words), vector (the Embedder) and exact (a barcode, product id or group id). Misspelt words are
 * corrected from the catalog's vocabulary (spelling.ts); a query that names a concept lifts its
 * groups (concepts.ts). A result is a product group with the variants matching the query's size
 * words (all when it names none), their prices and stock flags.
 */
import { satangToThb } from '../../domain/money';
import type { Db } from '../../db/knex';
import {
  activePromotions,
  type CatalogSnapshot,
  type InventorySnapshot,
  type PriceSnapshot,
  type Product,
} from '../snapshot';
import { imagePath } from '../views';
import { dot } from './embedder';
import { matchConcepts } from './concepts';
import type { SearchIndex } from './index';
import { isThai, normalize, tokenize } from './text';

export const RRF_K = 60;
export const RANKER_WEIGHTS = { exact: 10, lexical: 1, synonym: 0.5, trigram: 0.8, vector: 0.8 } as const;
export type Ranker = keyof typeof RANKER_WEIGHTS;
const LIST_DEPTH = 60;
/** at least 0.3: search_trigram() finds its candidates at that threshold */
const TRIGRAM_MIN = 0.3;
const VECTOR_MIN = 0.12;
/** ts_rank_cd weights for D, C, B, A */
const TS_WEIGHTS = '{0.1, 0.25, 0.5, 1.0}';

export interface SearchQuery {
  query: string;
  limit: number;
  /** stock flags for this branch (else: in stock at any branch) */
  branchId?: string;
}

export interface SearchContext {
  db: Db;
  index: SearchIndex;
  catalog: CatalogSnapshot;
  prices: PriceSnapshot;
  inventory: InventorySnapshot;
  now: Date;
}

const UNIT_ALIASES: Record<string, string> = {
  g: 'g',
  gr: 'g',
  gram: 'g',
  grams: 'g',
  กรัม: 'g',
  kg: 'kg',
  kgs: 'kg',
  กก: 'kg',
  กิโล: 'kg',
  กิโลกรัม: 'kg',
  ml: 'ml',
  มล: 'ml',
  มิลลิลิตร: 'ml',
  l: 'l',
  litre: 'l',
  liter: 'l',
  ลิตร: 'l',
  pc: 'pcs',
  pcs: 'pcs',
  piece: 'pcs',
  pieces: 'pcs',
  ชิ้น: 'pcs',
  ฟอง: 'pcs',
  ลูก: 'pcs',
  ตัว: 'pcs',
  pack: 'pack',
  packs: 'pack',
  แพ็ก: 'pack',
  แพ็ค: 'pack',
};

/** The size words of a query: numbers and units (500 g, 1 ลิตร, 6 x 180 ml). */
export function sizeTerms(tokens: string[]): { numbers: string[]; units: string[] } {
  return {
    numbers: tokens.filter((t) => /^\d+$/.test(t)).map((t) => String(Number(t))),
    units: tokens.map((t) => UNIT_ALIASES[t]).filter((u): u is string => !!u),
  };
}

function variantMatches(p: Product, size: { numbers: string[]; units: string[] }): boolean {
  const toks = tokenize(`${p.variant} ${p.nameEn}`);
  const numbers = new Set(toks.filter((t) => /^\d+$/.test(t)).map((t) => String(Number(t))));
  const units = new Set([...toks.map((t) => UNIT_ALIASES[t]).filter(Boolean), p.unit]);
  return size.numbers.every((n) => numbers.has(n)) && size.units.every((u) => units.has(u));
}

/** to_tsquery text: tokens ORed, the last one as a prefix when it is a Latin word of 3+ letters. */
function tsQueryText(tokens: string[], prefixLast: boolean): string {
  const uniq = [...new Set(tokens)];
  return uniq
    .map(
      (t, i) =>
        `'${t.replace(/'/g, '')}'${prefixLast && i === uniq.length - 1 && !isThai(t) && t.length >= 3 && !/^\d+$/.test(t) ? ':*' : ''}`,
    )
    .join(' | ');
}

export interface RankedLists {
  lists: Partial<Record<Ranker, string[]>>;
  tokens: string[];
  /** product ids typed as the query (by id or barcode) */
  named: Set<string>;
  /** groupId -> lift from the concepts the query names (added to the fused score) */
  lift: Map<string, number>;
  /** the query with misspelt words corrected, when any was */
  corrected?: string;
}

/** Lifts of the concept layer (see the top of this file). */
export const CONCEPT_LIFT = {
  /** the query is the concept's name: core groups, related groups */
  whole: { core: 1, related: 0.5 },
  /** a brand named alone: its groups lead the text matches without burying them */
  brand: 0.03,
  /** the query contains the concept's name: times the share of the query it covers */
  partial: { core: 0.004, related: 0.002 },
  /** best sellers among a named concept's groups */
  bestSeller: 0.05,
  /** a whole intent: less for each target before the one naming the group (the data's order) */
  order: 0.02,
} as const;

function conceptLift(index: SearchIndex, query: string, corrected?: string): Map<string, number> {
  const lift = new Map<string, number>();
  let matches = matchConcepts(index.concepts, query);
  if (!matches.some((m) => m.whole) && corrected) {
    const better = matchConcepts(index.concepts, corrected);
    if (better.some((m) => m.whole) || !matches.length) matches = better;
  }
  for (const m of matches) {
    for (const [groupId, tier] of m.concept.members) {
      let v: number;
      if (m.whole && m.concept.type === 'brand')
        v = CONCEPT_LIFT.brand + (index.bestSellers.has(groupId) ? CONCEPT_LIFT.bestSeller / 3 : 0);
      else if (m.whole)
        v =
          (tier === 0 ? CONCEPT_LIFT.whole.core : CONCEPT_LIFT.whole.related) * m.coverage +
          (index.bestSellers.has(groupId) ? CONCEPT_LIFT.bestSeller : 0) -
          CONCEPT_LIFT.order * Math.min(10, m.concept.order?.get(groupId) ?? 0);
      else v = (tier === 0 ? CONCEPT_LIFT.partial.core : CONCEPT_LIFT.partial.related) * m.coverage;
      lift.set(groupId, Math.max(lift.get(groupId) ?? 0, v));
    }
  }
  return lift;
}

/** The ordered group ids of each ranker. */
export async function rank(ctx: SearchContext, query: string): Promise<RankedLists> {
  const { index, catalog } = ctx;
  const q = normalize(query);
  const corrected = index.speller.correctQuery(q);
  const tokens = [...new Set(tokenize(q, index.lexicon))];
  // corrected words rank beside the words as typed
  const correctedTokens = corrected ? tokenize(corrected, index.lexicon).filter((t) => !tokens.includes(t)) : [];
  const lists: Partial<Record<Ranker, string[]>> = {};

  // exact identifiers: group ids, and the variants named by product id or barcode
  const exact: string[] = [];
  const named = new Set<string>();
  for (const t of q.split(/\s+/)) {
    const id = t.toUpperCase();
    if (catalog.groups.has(id)) exact.push(id);
    if (catalog.products.has(id)) named.add(id);
    if (/^\d{8,14}$/.test(t)) for (const p of catalog.products.values()) if (p.barcode === t) named.add(p.productId);
  }
  for (const productId of named) exact.push(catalog.products.get(productId)!.groupId);
  if (exact.length) lists.exact = [...new Set(exact)];

  // keyword synonyms (the whole query and each word, looked up among the data's keywords),
  // and the plain Intl.Segmenter split of lexicon words (นมจืด -> นม จืด)
  const synonymTokens = new Set<string>(
    tokenize(q, index.lexicon, { withIcu: true }).filter((t) => !tokens.includes(t)),
  );
  for (const key of new Set([q, ...tokens])) {
    for (const syn of index.synonyms.get(key) ?? [])
      for (const t of tokenize(syn, index.lexicon)) if (!tokens.includes(t)) synonymTokens.add(t);
  }

  const main = tsQueryText([...tokens, ...correctedTokens], !correctedTokens.length && !/\s$/.test(query));
  const syn = tsQueryText([...synonymTokens], false);
  const sql = `
    WITH q AS (SELECT to_tsquery('english', :main) AS main, to_tsquery('english', :syn) AS syn),
    lexical AS (
      SELECT d.group_id, ts_rank_cd(CAST(:w AS float4[]), d.lex, q.main, 1) AS r FROM search_documents d, q
      WHERE :hasMain AND d.lex @@ q.main ORDER BY r DESC, d.group_id LIMIT :depth),
    synonym AS (
      SELECT d.group_id, ts_rank_cd(CAST(:w AS float4[]), d.lex, q.syn, 1) AS r FROM search_documents d, q
      WHERE :hasSyn AND d.lex @@ q.syn ORDER BY r DESC, d.group_id LIMIT :depth),
    trigram AS (
      SELECT group_id, r FROM search_trigram(:raw, :trgmMin, :depth))
    SELECT 'lexical' AS list, group_id, r FROM lexical
    UNION ALL SELECT 'synonym', group_id, r FROM synonym
    UNION ALL SELECT 'trigram', group_id, r FROM trigram`;
  const { rows } = await ctx.db.raw<{ rows: { list: Ranker; group_id: string; r: number }[] }>(sql, {
    main,
    syn,
    hasMain: main !== '',
    hasSyn: syn !== '',
    w: TS_WEIGHTS,
    raw: q,
    trgmMin: TRIGRAM_MIN,
    depth: LIST_DEPTH,
  });
  for (const r of rows) (lists[r.list] ??= []).push(r.group_id);

  const [qv] = await index.embedder.embed([corrected ?? q]);
  const scored = index.vectors
    .map((d) => ({ groupId: d.groupId, s: dot(qv, d.vector) }))
    .filter((d) => d.s >= VECTOR_MIN);
  scored.sort((a, b) => b.s - a.s || a.groupId.localeCompare(b.groupId));
  if (scored.length) lists.vector = scored.slice(0, LIST_DEPTH).map((d) => d.groupId);

  return { lists, tokens, named, lift: conceptLift(index, q, corrected), ...(corrected ? { corrected } : {}) };
}

/** Weighted reciprocal rank fusion. */
export function fuse(
  lists: Partial<Record<Ranker, string[]>>,
  weights: Record<Ranker, number> = RANKER_WEIGHTS,
): { groupId: string; score: number; matchedBy: (Ranker | 'concept')[] }[] {
  const acc = new Map<string, { score: number; matchedBy: (Ranker | 'concept')[] }>();
  for (const [ranker, ids] of Object.entries(lists) as [Ranker, string[]][]) {
    if (!weights[ranker]) continue;
    ids.forEach((id, i) => {
      const e = acc.get(id) ?? { score: 0, matchedBy: [] };
      e.score += weights[ranker] / (RRF_K + i + 1);
      e.matchedBy.push(ranker);
      acc.set(id, e);
    });
  }
  return [...acc.entries()]
    .map(([groupId, e]) => ({ groupId, ...e }))
    .sort((a, b) => b.score - a.score || a.groupId.localeCompare(b.groupId));
}

/** The fused order with the concept layer's lifts added. */
export function order(ranked: Pick<RankedLists, 'lists' | 'lift'>, weights: Record<Ranker, number> = RANKER_WEIGHTS) {
  const fused = fuse(ranked.lists, weights);
  if (!ranked.lift.size) return fused;
  const byId = new Map(fused.map((r) => [r.groupId, r]));
  for (const [groupId, lift] of ranked.lift) {
    const r = byId.get(groupId);
    if (r) {
      r.score += lift;
      r.matchedBy.push('concept');
    } else byId.set(groupId, { groupId, score: lift, matchedBy: ['concept'] });
  }
  return [...byId.values()].sort((a, b) => b.score - a.score || a.groupId.localeCompare(b.groupId));
}

/** Shape the results of a query; `ranked` is rank()'s answer for it (which may come from a cache). */
export function search(ctx: Omit<SearchContext, 'db' | 'index'>, q: SearchQuery, ranked: RankedLists) {
  const { catalog, prices, inventory, now } = ctx;
  const { tokens, named } = ranked;
  const fused = order(ranked).filter((r) => catalog.groups.has(r.groupId));
  const size = sizeTerms(tokens);
  const branchStock = q.branchId ? inventory.byBranch.get(q.branchId) : undefined;
  const inStock = (productId: string) =>
    branchStock ? (branchStock.get(productId) ?? 0) > 0 : inventory.inStockSomewhere.has(productId);
  const promotions = activePromotions(catalog, now);
  const onPromotion = (p: Product) =>
    promotions.some((x) => x.groupIds.includes(p.groupId) && (!x.productIds || x.productIds.includes(p.productId)));

  const results = fused.slice(0, q.limit).map(({ groupId, score, matchedBy }) => {
    const g = catalog.groups.get(groupId)!;
    const all = catalog.productsOf.get(groupId) ?? [];
    const byName = all.filter((p) => named.has(p.productId));
    const sized = size.numbers.length || size.units.length ? all.filter((p) => variantMatches(p, size)) : [];
    const variants = byName.length ? byName : sized.length ? sized : all;
    const shaped = variants.map((p) => {
      const satang = prices.satang.get(p.productId);
      return {
        productId: p.productId,
        variant: p.variant,
        nameEn: p.nameEn,
        nameTh: p.nameTh,
        price: satang === undefined ? null : satangToThb(satang),
        inStock: inStock(p.productId),
        onPromotion: onPromotion(p),
      };
    });
    const priced = shaped.map((v) => v.price).filter((p): p is number => p !== null);
    return {
      groupId,
      nameEn: g.nameEn,
      nameTh: g.nameTh,
      brand: g.brand,
      categoryId: g.categoryId,
      image: imagePath(groupId, variants[0]?.productId ?? `${groupId}-1`),
      score: Math.round(score * 1e6) / 1e6,
      matchedBy,
      priceFrom: priced.length ? Math.min(...priced) : null,
      inStock: shaped.some((v) => v.inStock),
      onPromotion: shaped.some((v) => v.onPromotion),
      variantCount: all.length,
      variants: shaped,
    };
  });
  return { query: q.query, branchId: q.branchId ?? null, total: fused.length, results };
}
