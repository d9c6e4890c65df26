/**
 * The search index of the catalog: one document per product group in Postgres
 * (search_documents: a weighted tsvector over pre-split text, the text for trigram matching,
 * and the group's vector), plus what the queries need in memory (the Thai lexicon, the keyword
 * synonyms and the vectors). It is derived from the catalog: when the catalog version moves on,
 * the next search rebuilds it (one builder at a time, under an advisory lock).
 */
import type { Db } from '../../db/knex';
import type { Logger } from '../../logger';
import { aisleOf, type CatalogSnapshot, type Group } from '../snapshot';
import { buildConcepts, readLexicon, type ConceptIndex, type LexiconFile } from './concepts';
import type { Embedder, FittableEmbedder } from './embedder';
import { Speller } from './spelling';
import { Lexicon, normalize, tokenize } from './text';

export interface SearchIndex {
  catalogVersion: number;
  lexicon: Lexicon;
  /** normalized keyword -> the other keywords of the groups that carry it */
  synonyms: Map<string, string[]>;
  embedder: Embedder;
  vectors: { groupId: string; vector: Float32Array }[];
  /** categories, brands and the lexicon's synonyms, hypernyms and intents */
  concepts: ConceptIndex;
  /** spelling correction from the catalog's vocabulary */
  speller: Speller;
  /** best sellers (the `best-seller` collection) */
  bestSellers: Set<string>;
}

const LOCK_KEY = 0x5f_7a_1a_7; // pg_advisory_xact_lock key of the index builder

/** Thai words of the catalog: keywords and category names, split at spaces. */
export function buildLexicon(s: CatalogSnapshot): Lexicon {
  const lexicon = new Lexicon();
  for (const g of s.groups.values()) for (const k of g.keywords) for (const w of k.split(/\s+/)) lexicon.add(w);
  for (const c of s.categories.values()) for (const w of c.nameTh.split(/[\s,]+/)) lexicon.add(w);
  return lexicon;
}

/**
 * Synonyms from the data: shoppers' keywords that stand on the same group are taken as
 * synonyms of each other (น้ำดำ ~ coke ~ cola), most frequent companions first, at most 12.
 */
export function buildSynonyms(s: CatalogSnapshot): Map<string, string[]> {
  const companions = new Map<string, Map<string, number>>();
  for (const g of s.groups.values()) {
    const kws = [...new Set(g.keywords.map(normalize))];
    for (const k of kws) {
      let m = companions.get(k);
      if (!m) companions.set(k, (m = new Map()));
      for (const other of kws) if (other !== k) m.set(other, (m.get(other) ?? 0) + 1);
    }
  }
  const out = new Map<string, string[]>();
  for (const [k, m] of companions) {
    out.set(
      k,
      [...m.entries()]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, 12)
        .map(([w]) => w),
    );
  }
  return out;
}

/** The text fields of a group by weight (A names and brand, B keywords, C categories, D the rest). */
export function documentFields(s: CatalogSnapshot, g: Group) {
  const sub = s.categories.get(g.categoryId);
  const aisle = aisleOf(s, g.categoryId);
  const collections = s.collections.filter((c) => g.collections.includes(c.slug));
  const variants = s.productsOf.get(g.groupId) ?? [];
  return {
    A: [g.nameEn, g.nameTh, g.brand].join(' \n '),
    B: g.keywords.join(' \n '),
    C: [sub, aisle, ...collections].flatMap((c) => (c ? [c.nameEn, c.nameTh] : [])).join(' \n '),
    D: [g.descriptionEn, g.descriptionTh, ...variants.map((v) => v.variant)].join(' \n '),
  };
}

/** What the vector of a group is computed from. */
export function vectorText(s: CatalogSnapshot, g: Group): string {
  const f = documentFields(s, g);
  return [f.A, f.A, f.B, f.C, f.D].join(' \n ');
}

export const trigramText = (g: Group): string => normalize([g.nameEn, g.nameTh, g.brand, ...g.keywords].join(' '));

/** Everything the speller may correct a query word to. */
export function vocabulary(s: CatalogSnapshot, lexicon: LexiconFile): string[] {
  const out: string[] = [];
  for (const g of s.groupList) out.push(g.nameEn, g.nameTh, g.brand, ...g.keywords);
  for (const c of s.categories.values()) out.push(c.nameEn, c.nameTh);
  for (const e of lexicon.concepts) out.push(...e.terms);
  return out;
}

export async function ensureSearchIndex(
  db: Db,
  s: CatalogSnapshot,
  base: Embedder | FittableEmbedder,
  logger: Logger,
  lexiconFile: LexiconFile = readLexicon(),
): Promise<SearchIndex> {
  const lexicon = buildLexicon(s);
  const synonyms = buildSynonyms(s);
  const texts = s.groupList.map((g) => vectorText(s, g));
  const embedder = 'fit' in base ? base.fit(texts) : base;
  const current = (state?: { catalog_version: string; embedder: string }) =>
    !!state && Number(state.catalog_version) === s.version && state.embedder === embedder.id;

  if (!current(await db('search_index_state').first())) {
    await db.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(?)', [LOCK_KEY]);
      if (current(await trx('search_index_state').first())) return; // another builder was first
      const started = Date.now();
      const vectors = await embedder.embed(texts);
      const tokens = (text: string) => tokenize(text, lexicon, { withIcu: true }).join(' ');
      const rows = s.groupList.map((g, i) => {
        const f = documentFields(s, g);
        return {
          group_id: g.groupId,
          lex: trx.raw(
            "setweight(to_tsvector('english', ?), 'A') || setweight(to_tsvector('english', ?), 'B') || setweight(to_tsvector('english', ?), 'C') || setweight(to_tsvector('english', ?), 'D')",
            [tokens(f.A), tokens(f.B), tokens(f.C), tokens(f.D)],
          ),
          trgm_text: trigramText(g),
          embedding: Array.from(vectors[i]),
        };
      });
      await trx('search_documents').del();
      await trx.batchInsert('search_documents', rows, 100);
      await trx('search_index_state')
        .insert({ id: true, catalog_version: s.version, embedder: embedder.id, built_at: trx.fn.now() })
        .onConflict('id')
        .merge();
      logger.info(
        { groups: rows.length, catalogVersion: s.version, embedder: embedder.id, ms: Date.now() - started },
        'search index built',
      );
    });
  }
  const stored = await db('search_documents').select<{ group_id: string; embedding: number[] }[]>(
    'group_id',
    'embedding',
  );
  return {
    catalogVersion: s.version,
    lexicon,
    synonyms,
    embedder,
    vectors: stored.map((r) => ({ groupId: r.group_id, vector: Float32Array.from(r.embedding) })),
    concepts: buildConcepts(s, lexiconFile),
    speller: new Speller(vocabulary(s, lexiconFile)),
    bestSellers: new Set(s.groupList.filter((g) => g.collections.includes('best-seller')).map((g) => g.groupId)),
  };
}
