/**
 * Text handling shared by the search index and the search queries: the same functions run at
 * index time and at query time, so both sides see the same tokens.
 *
 * Thai is written without spaces between words. Words are split with Intl.Segmenter (ICU's
 * Thai dictionary), helped by a lexicon of words taken from the catalog itself (the shoppers'
 * keywords and the category names): the longest lexicon word is taken first, Intl.Segmenter
 * splits what is left. ICU alone cuts loanwords into pieces (ไอติม -> ไอ|ติ|ม); the lexicon keeps
 * the words shoppers type whole. Latin text is split on non-letters and at letter/digit
 * boundaries (500g -> 500 g).
 */

const THAI_RUN = /[\u0E00-\u0E7F]+/g;
const HAS_THAI = /[\u0E00-\u0E7F]/;
const segmenter = new Intl.Segmenter('th', { granularity: 'word' });

/** NFKC, lower case, no zero-width characters, Thai sara am in one code point. */
export function normalize(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u200b-\u200d\ufeff]/g, '')
    .replace(/\u0e4d\u0e32/g, '\u0e33') // nikhahit + sara aa, as some keyboards type sara am
    .replace(/\s+/g, ' ')
    .trim();
}

export const isThai = (token: string): boolean => HAS_THAI.test(token);

/** Latin/digit tokens of a text without Thai: letters and digits, split at letter/digit edges. */
function latinTokens(text: string): string[] {
  const out: string[] = [];
  for (const word of text.split(/[^\p{L}\p{N}]+/u)) {
    if (!word) continue;
    for (const part of word.split(/(?<=\p{N})(?=\p{L})|(?<=\p{L})(?=\p{N})/u)) if (part) out.push(part);
  }
  return out;
}

/** ICU word segments of a Thai run (word-like only). */
export function icuSegments(run: string): string[] {
  const out: string[] = [];
  for (const s of segmenter.segment(run)) if (s.isWordLike) out.push(s.segment);
  return out;
}

/** Thai words of the catalog, for longest-match splitting. */
export class Lexicon {
  private readonly words = new Set<string>();
  private maxLen = 0;

  add(word: string): void {
    const w = normalize(word);
    if (w.length < 2 || w.length > 24 || /[^\u0E00-\u0E7F]/.test(w)) return;
    this.words.add(w);
    this.maxLen = Math.max(this.maxLen, w.length);
  }

  get size(): number {
    return this.words.size;
  }

  /** Longest lexicon words left to right; the gaps between them go to Intl.Segmenter. */
  segment(run: string): string[] {
    const out: string[] = [];
    let gap = '';
    let i = 0;
    while (i < run.length) {
      let found = '';
      for (let len = Math.min(this.maxLen, run.length - i); len >= 2; len--) {
        const cand = run.slice(i, i + len);
        if (this.words.has(cand)) {
          found = cand;
          break;
        }
      }
      if (found) {
        if (gap) out.push(...icuSegments(gap));
        gap = '';
        out.push(found);
        i += found.length;
      } else {
        gap += run[i];
        i++;
      }
    }
    if (gap) out.push(...icuSegments(gap));
    return out;
  }
}

const keep = (t: string) => !(isThai(t) && t.length < 2);

/**
 * Tokens of a text. Thai runs are split lexicon-first; with `withIcu`, the plain Intl.Segmenter
 * split of each run is added too (the index stores both, so a query split either way matches).
 */
export function tokenize(text: string, lexicon?: Lexicon, opts: { withIcu?: boolean } = {}): string[] {
  const norm = normalize(text);
  const out: string[] = [];
  let last = 0;
  for (const m of norm.matchAll(THAI_RUN)) {
    out.push(...latinTokens(norm.slice(last, m.index)));
    const run = m[0];
    const lex = lexicon ? lexicon.segment(run) : icuSegments(run);
    out.push(...lex);
    if (opts.withIcu && lexicon) for (const t of icuSegments(run)) if (!lex.includes(t)) out.push(t);
    last = m.index! + run.length;
  }
  out.push(...latinTokens(norm.slice(last)));
  return out.filter(keep);
}
