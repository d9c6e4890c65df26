/**
 * Spelling correction from the catalog's own vocabulary: a query word that is no word of the
 * catalog (names, brands, keywords, category names, lexicon terms) and is one edit away from one
 * (two for words of 8 letters or more; an edit is an insertion, a deletion, a substitution or a
 * swap of two neighbours) gets that word beside it: "srhimp" -> shrimp, "chedar" -> cheddar.
 * Thai is written without spaces, so a Thai run is compared whole with the catalog's Thai words
 * and phrases: "ยาสีฟน" -> ยาสีฟัน, "มะม่าง" -> มะม่วง.
 */
import { isThai, normalize } from './text';

/** Optimal string alignment distance (Damerau-Levenshtein without repeated edits), capped: returns max + 1 past max. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = new Array<number>(n + 1);
    cur[0] = i;
    let rowMin = cur[0];
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[n];
}

/** English words of queries that are no misspellings of the catalog's words. */
const COMMON = new Set(
  'some something anything with that this these those from need want make making cook cooking tonight today tomorrow idea ideas stuff things thing please what which where have good best cheap fresh'.split(
    ' ',
  ),
);

export class Speller {
  /** word -> how many catalog texts use it */
  private readonly words = new Map<string, number>();
  private readonly byLength = new Map<number, string[]>();

  constructor(texts: Iterable<string>) {
    for (const text of texts) {
      const norm = normalize(text);
      const seen = new Set<string>();
      for (const w of norm.split(/[^\p{L}\p{M}\p{N}]+/u))
        if (w && !isThai(w) && w.length >= 3 && !/\d/.test(w)) seen.add(w);
      // Thai: every space-separated run of a text, and the text without spaces
      for (const run of norm.split(/\s+/)) if (isThai(run) && /^[\u0E00-\u0E7F]+$/.test(run)) seen.add(run);
      const joined = norm.replace(/\s+/g, '');
      if (/^[\u0E00-\u0E7F]+$/.test(joined)) seen.add(joined);
      for (const w of seen) this.words.set(w, (this.words.get(w) ?? 0) + 1);
    }
    for (const w of this.words.keys()) {
      const list = this.byLength.get(w.length) ?? [];
      list.push(w);
      this.byLength.set(w.length, list);
    }
  }

  has(word: string): boolean {
    return this.words.has(word);
  }

  /** The catalog word nearest to `word`, when `word` is none and one is near enough. */
  correct(word: string): string | undefined {
    const thai = isThai(word);
    if (this.words.has(word) || COMMON.has(word) || /\d/.test(word) || word.length < (thai ? 3 : 4)) return undefined;
    const max = word.length >= 8 ? 2 : 1;
    let best: string | undefined;
    let bestD = max + 1;
    let bestF = 0;
    for (let len = word.length - max; len <= word.length + max; len++) {
      for (const w of this.byLength.get(len) ?? []) {
        // a misspelling keeps its first or second letter (srhimp, avocdo, ยาสีฟน): the rest are not compared
        if (w[0] !== word[0] && w[1] !== word[1] && w[0] !== word[1]) continue;
        if (isThai(w) !== thai) continue;
        const d = editDistance(word, w, Math.min(max, bestD));
        const f = this.words.get(w)!;
        if (d < bestD || (d === bestD && f > bestF)) {
          best = w;
          bestD = d;
          bestF = f;
        }
      }
    }
    return bestD <= max ? best : undefined;
  }

  /** The query with its misspelt words corrected (Thai runs whole), or undefined when none is. */
  correctQuery(query: string): string | undefined {
    const norm = normalize(query);
    let changed = false;
    const out = norm.replace(/[\u0E00-\u0E7F]+|\p{Script=Latin}+/gu, (w) => {
      const c = this.correct(w);
      if (c) changed = true;
      return c ?? w;
    });
    return changed ? out : undefined;
  }
}
