/**
 * The concept layer of the search: what a shopper's words stand for, from two data sources: the
 * catalog's category tree (each aisle and subcategory, by its English and Thai names and their
 * parts) and the lexicon, data/search/lexicon.json (synonyms, hypernyms, dish or occasion
 * intents, each naming its `terms` and the categories, words or phrases it resolves to, `core`
 * before `related`). A query that is one concept's term gets that concept's groups first (core,
 * then related, best sellers first); a query that only contains one gets a smaller lift.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CatalogSnapshot, Group } from '../snapshot';
import { isThai, normalize } from './text';

export const LEXICON_FILE = path.resolve(__dirname, '..', '..', '..', 'data', 'search', 'lexicon.json');

export interface ConceptTargets {
  /** category ids (an aisle stands for all its subcategories) */
  categories?: string[];
  /** words or phrases found in a group's names or keywords (whole words in Latin script) */
  words?: string[];
  /** brands, as printed on the pack */
  brands?: string[];
  /** group ids, for what no word or category names */
  groups?: string[];
}

export interface LexiconEntry {
  id: string;
  type: 'synonym' | 'hypernym' | 'intent';
  /** what shoppers type, English and Thai */
  terms: string[];
  core: ConceptTargets;
  related?: ConceptTargets;
}

export interface LexiconFile {
  version: number;
  about?: string;
  concepts: LexiconEntry[];
}

export interface Concept {
  id: string;
  type: LexiconEntry['type'] | 'category' | 'brand';
  /** groupId -> 0 (core) or 1 (related) */
  members: Map<string, 0 | 1>;
}

export interface ConceptIndex {
  version: string;
  /** matching form of a term -> the concepts it names */
  terms: Map<string, Concept[]>;
  /** longest term, in characters of the matching form */
  maxTermLength: number;
}

export function readLexicon(file = LEXICON_FILE): LexiconFile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as LexiconFile;
}

/** English plural -> singular, for matching only (both sides go through it). */
function singular(word: string): string {
  if (word.length <= 3 || isThai(word)) return word;
  if (/(ss|us|is)$/.test(word)) return word;
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(ches|shes|xes|oes|sses)$/.test(word)) return word.slice(0, -2);
  if (/s$/.test(word)) return word.slice(0, -1);
  return word;
}

/** Words that carry no concept: "something for a hotpot tonight" -> "hotpot". */
const FILLER_EN = new Set(
  'a an the some something anything for to of with and or in on at my our your i we me us need want wants buy get make making cook cooking tonight today tomorrow idea ideas stuff things thing please what'.split(
    ' ',
  ),
);
const FILLER_TH_PREFIX = ['อยากกิน', 'อยากทำ', 'ของสำหรับ', 'วัตถุดิบ', 'สำหรับ', 'เมนู', 'ทำ', 'ซื้อ'];
const FILLER_TH_SUFFIX = ['คืนนี้', 'วันนี้', 'หน่อย', 'ดีๆ'];

/**
 * The matching form of a text: normalized, Latin words singular, Thai without spaces or filler
 * words. Latin words are kept with spaces so that a term matches whole words only.
 */
export function matchForm(text: string, dropFiller = false): string {
  const norm = normalize(text).replace(/[^\p{L}\p{M}\p{N}&\s]/gu, ' ');
  const words: string[] = [];
  for (const w of norm.split(/\s+/)) {
    if (!w) continue;
    if (isThai(w)) {
      let t = w;
      if (dropFiller) {
        for (const p of FILLER_TH_PREFIX) if (t.startsWith(p) && t.length > p.length + 1) t = t.slice(p.length);
        for (const s of FILLER_TH_SUFFIX) if (t.endsWith(s) && t.length > s.length + 1) t = t.slice(0, -s.length);
      }
      // Thai written with or without spaces: join a Thai word to the Thai word before it
      if (words.length && isThai(words[words.length - 1])) words[words.length - 1] += t;
      else words.push(t);
    } else if (!(dropFiller && FILLER_EN.has(w))) words.push(singular(w));
  }
  return words.join(' ');
}

/** Parts of a category name: "Shrimp & Prawn" -> shrimp, prawn; "เนื้อสไลซ์ ชาบู สุกี้ และปิ้งย่าง" -> ... */
export function nameParts(name: string): string[] {
  const whole = normalize(name);
  const parts = whole
    .split(/\s*(?:&|,|\band\b|\s+และ|^และ)\s*/u)
    .flatMap((p) => (isThai(p) ? p.split(/\s+/) : [p]))
    .map((p) => p.replace(/^และ/, '').trim())
    .filter((p) => p.length >= 2);
  return [...new Set([whole, ...parts])];
}

/** The normalized texts of a group that words are looked for in. */
function groupTexts(g: Group): string[] {
  return [g.nameEn, g.nameTh, ...g.keywords].map(normalize);
}

function containsWord(text: string, word: string): boolean {
  if (isThai(word)) return text.replace(/\s+/g, '').includes(word.replace(/\s+/g, ''));
  let from = 0;
  for (;;) {
    const i = text.indexOf(word, from);
    if (i < 0) return false;
    const before = i === 0 ? ' ' : text[i - 1];
    const after = i + word.length >= text.length ? ' ' : text[i + word.length];
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return true;
    from = i + 1;
  }
}

/** The groups a lexicon target resolves to. */
export function resolveTargets(s: CatalogSnapshot, t: ConceptTargets | undefined): Set<string> {
  const out = new Set<string>();
  if (!t) return out;
  const cats = new Set(t.categories ?? []);
  const brands = new Set((t.brands ?? []).map(normalize));
  const words = (t.words ?? []).map(normalize);
  for (const g of s.groupList) {
    const sub = s.categories.get(g.categoryId);
    if (cats.has(g.categoryId) || (sub?.parentId && cats.has(sub.parentId)) || brands.has(normalize(g.brand)))
      out.add(g.groupId);
    else if (words.length) {
      const texts = groupTexts(g);
      if (words.some((w) => texts.some((x) => containsWord(x, w)))) out.add(g.groupId);
    }
  }
  for (const id of t.groups ?? []) if (s.groups.has(id)) out.add(id);
  return out;
}

/** Concepts of the category tree and of the lexicon, by the matching forms of their terms. */
export function buildConcepts(s: CatalogSnapshot, lexicon: LexiconFile = readLexicon()): ConceptIndex {
  const terms = new Map<string, Concept[]>();
  const addTerm = (term: string, c: Concept) => {
    const key = matchForm(term);
    if (key.length < 2) return;
    const list = terms.get(key) ?? [];
    if (!list.includes(c)) list.push(c);
    terms.set(key, list);
  };
  const categoryIds = [...s.categories.values()].filter((c) => c.kind !== 'collection');
  for (const c of categoryIds) {
    const members = new Map<string, 0 | 1>([...resolveTargets(s, { categories: [c.id] })].map((id) => [id, 0]));
    if (!members.size) continue;
    const concept: Concept = { id: `category:${c.id}`, type: 'category', members };
    for (const name of [c.nameEn, c.nameTh]) for (const p of nameParts(name)) addTerm(p, concept);
  }
  const brands = new Map<string, Concept>();
  for (const g of s.groupList) {
    const key = normalize(g.brand);
    let c = brands.get(key);
    if (!c) brands.set(key, (c = { id: `brand:${key}`, type: 'brand', members: new Map() }));
    c.members.set(g.groupId, 0);
  }
  for (const [name, c] of brands) addTerm(name, c);
  for (const e of lexicon.concepts) {
    const members = new Map<string, 0 | 1>();
    for (const id of resolveTargets(s, e.related)) members.set(id, 1);
    for (const id of resolveTargets(s, e.core)) members.set(id, 0);
    const concept: Concept = { id: e.id, type: e.type, members };
    for (const t of e.terms) addTerm(t, concept);
  }
  let maxTermLength = 0;
  for (const k of terms.keys()) maxTermLength = Math.max(maxTermLength, k.length);
  return { version: `lexicon-v${lexicon.version}`, terms, maxTermLength };
}

/** The lexicon's concepts of a term when it has any (they are curated), else the catalog's. */
function curated(concepts: Concept[]): Concept[] {
  const lexicon = concepts.filter((c) => c.type !== 'category' && c.type !== 'brand');
  return lexicon.length ? lexicon : concepts;
}

export interface ConceptMatch {
  concept: Concept;
  term: string;
  /** the term is the whole query (after filler words) */
  whole: boolean;
  /** share of the query's characters the term covers */
  coverage: number;
}

/**
 * The concepts a query names: the whole query as a term, else the longest terms found in it
 * (whole words in Latin script, anywhere in Thai), not overlapping.
 */
export function matchConcepts(index: ConceptIndex, query: string): ConceptMatch[] {
  const q = matchForm(query, true);
  if (!q) return [];
  const exact = matchForm(query);
  const whole = index.terms.get(exact) ?? index.terms.get(q);
  if (whole) return curated(whole).map((concept) => ({ concept, term: q, whole: true, coverage: 1 }));
  const found: { start: number; end: number; term: string }[] = [];
  for (let start = 0; start < q.length; start++) {
    if (start > 0 && !isThai(q[start]) && /[\p{L}\p{N}]/u.test(q[start - 1])) continue; // Latin: word starts only
    for (let end = Math.min(q.length, start + index.maxTermLength); end >= start + 2; end--) {
      const term = q.slice(start, end);
      if (!index.terms.has(term)) continue;
      if (!isThai(q[end - 1]) && end < q.length && /[\p{L}\p{N}]/u.test(q[end])) continue; // Latin: word ends only
      found.push({ start, end, term });
      break;
    }
  }
  found.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const taken: { start: number; end: number }[] = [];
  const out: ConceptMatch[] = [];
  const letters = q.replace(/\s+/g, '').length;
  for (const f of found) {
    if (taken.some((t) => f.start < t.end && t.start < f.end)) continue;
    taken.push(f);
    const coverage = f.term.replace(/\s+/g, '').length / letters;
    for (const concept of curated(index.terms.get(f.term)!))
      out.push({ concept, term: f.term, whole: false, coverage });
  }
  return out;
}
