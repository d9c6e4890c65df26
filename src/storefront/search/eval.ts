/**
 * Offline evaluation of the search against judged queries: nDCG@k (gain 2^grade - 1, log2
 * discount, normalised by the ideal order of the judged groups) and recall@k (share of the judged
 * groups found in the first k, out of at most k). Used by `npm run eval:search` and by the search-quality test.
 */
export interface Judgment {
  query: string;
  lang: 'en' | 'th';
  kind: string;
  /** groupId -> grade (1..3) */
  relevant: Record<string, number>;
}

export function ndcgAt(k: number, ranked: string[], relevant: Record<string, number>): number {
  const dcg = (grades: number[]) => grades.slice(0, k).reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(relevant).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((id) => relevant[id] ?? 0)) / ideal;
}

/** Share of the judged groups found in the first k, out of at most k (a query judging 37 groups can reach 1). */
export function recallAt(k: number, ranked: string[], relevant: Record<string, number>): number {
  const ids = Object.keys(relevant);
  if (ids.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return ids.filter((id) => top.has(id)).length / Math.min(k, ids.length);
}

export interface QueryScore {
  query: string;
  lang: string;
  kind: string;
  ndcg: number;
  recall: number;
  top: string[];
}

export interface EvalReport {
  k: number;
  queries: QueryScore[];
  ndcg: number;
  recall: number;
  /** means per language and per kind of query */
  groups: Record<string, { n: number; ndcg: number; recall: number }>;
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export async function evaluate(
  judgments: Judgment[],
  searchIds: (query: string) => Promise<string[]>,
  k = 10,
): Promise<EvalReport> {
  const queries: QueryScore[] = [];
  for (const j of judgments) {
    const ranked = await searchIds(j.query);
    queries.push({
      query: j.query,
      lang: j.lang,
      kind: j.kind,
      ndcg: ndcgAt(k, ranked, j.relevant),
      recall: recallAt(k, ranked, j.relevant),
      top: ranked.slice(0, k),
    });
  }
  const groups: EvalReport['groups'] = {};
  for (const key of [...new Set(queries.flatMap((q) => [`lang:${q.lang}`, `kind:${q.kind}`]))].sort()) {
    const qs = queries.filter((q) => `lang:${q.lang}` === key || `kind:${q.kind}` === key);
    groups[key] = { n: qs.length, ndcg: mean(qs.map((q) => q.ndcg)), recall: mean(qs.map((q) => q.recall)) };
  }
  return { k, queries, ndcg: mean(queries.map((q) => q.ndcg)), recall: mean(queries.map((q) => q.recall)), groups };
}
