/**
 * The concept layer of the search: what a shopper's words stand for, from two data sources: the
 * catalog's category tree (each aisle and subcategory, by its English and Thai names and their
 * parts) and the lexicon, data/search/lexicon.json (synonyms, hypernyms, dish or occasion
 * intents, each naming its `terms` and the categories, words or phrases it resolves to, `core`
 * before `related`). A query that is one concept's term (after filler words and English stems)
 * gets that concept's groups first (core, then related, best sellers first); a query that only
 * contains one gets a smaller lift, unless intent terms cover most of it and the rest say for
 * whom or what kind ("a sick child", ลูกไม่สบาย): then they count as the whole query
 * (docs/search.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import stem from 'wink-porter2-stemmer';
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
  /** intents: groupId -> position of the first target naming it in its tier (the data's order) */
  order?: Map<string, number>;
}

export interface ConceptIndex {
  version: string;
  /** matching form of a term -> the concepts it names */
  terms: Map<string, Concept[]>;
  /** longest term, in characters of the matching form */
  maxTermLength: number;
  /** Latin words of the groups' names, brands and keywords (matching forms) */
  productWords: Set<string>;
  /** the groups' names and keywords, whole (matching forms) */
  productPhrases: Set<string>;
}

export function readLexicon(file = LEXICON_FILE): LexiconFile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as LexiconFile;
}

/** English word -> its Porter2 stem ("losing" -> "lose", "intolerant" and "intolerance" alike), for matching only (both sides go through it). */
function stemmed(word: string): string {
  return word.length <= 3 || !/^[a-z]+$/.test(word) ? word : stem(word);
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
 * Context words: beside an intent term they say for whom, when or what kind of thing, not what
 * (matching forms: English stems). Only the intent rule of matchConcepts() reads them.
 */
const CONTEXT_EN = new Set(
  'food snack drink ingredient essential supply stuff idea menu kit remedy cure treat home house family friend guest child children kid baby son daughter mum mom dad parent meal dinner supper evening night day time week weekend month season old trip quick easy simple little new good best first rich nutrition grocery help support boost relief care after eat ready prepare hungry'
    .split(' ')
    .map(stemmed),
);
const CONTEXT_TH = [
  'มื้อเย็น',
  'มื้อกลางวัน',
  'ง่ายๆ',
  'ที่บ้าน',
  'บ้าน',
  'เลี้ยง',
  'อาหาร',
  'ของกิน',
  'มื้อ',
  'ของ',
  'ลูก',
  'เด็ก',
  'ให้',
  'ไป',
  'กิน',
  'มาก',
  'ทำ',
  'ซื้อ',
  'ที่',
  // particles and question tails: กินอะไรดี, ได้บ้าง, ค่ะ
  'อะไรดี',
  'อะไร',
  'ได้บ้าง',
  'ยังไงดี',
  'ยังไง',
  'ค่ะ',
  'ครับ',
  'หน่อย',
  'เอง',
  'ช่วง',
  'สำหรับ',
  'คนเป็น',
  'อยาก',
  'ทาน',
  'หิว',
  'วัตถุดิบ',
  'เมนู',
  'คืนนี้',
  'วันนี้',
  'ดีๆ',
];
/**
 * Thai verbs of a need (ลดน้ำหนัก, แก้หวัด, บำรุงกระดูก): beside a need they are context words,
 * and a lexicon term made of one and a need also stands without it (สร้างกล้าม -> กล้าม, so
 * เพิ่มกล้าม finds it).
 */
const NEED_VERBS_TH = ['ป้องกัน', 'บำรุง', 'เสริม', 'เพิ่ม', 'สร้าง', 'แก้', 'ลด', 'ดับ', 'กัน', 'คุม', 'ต้าน'];
CONTEXT_TH.push(...NEED_VERBS_TH);
/** Share of a query (context words aside) that intent terms must cover to count as the whole query. */
export const INTENT_COVERAGE = 0.5;

/**
 * The matching form of a text: normalized, Latin words stemmed, Thai without spaces or filler
 * words. Latin words are kept with spaces so that a term matches whole words only.
 */
export function matchForm(text: string, dropFiller: boolean | 'latin' = false): string {
  const norm = normalize(text).replace(/[^\p{L}\p{M}\p{N}&\s]/gu, ' ');
  const words: string[] = [];
  for (const w of norm.split(/\s+/)) {
    if (!w) continue;
    if (isThai(w)) {
      let t = w;
      if (dropFiller === true) {
        for (const p of FILLER_TH_PREFIX) if (t.startsWith(p) && t.length > p.length + 1) t = t.slice(p.length);
        for (const s of FILLER_TH_SUFFIX) if (t.endsWith(s) && t.length > s.length + 1) t = t.slice(0, -s.length);
      }
      // Thai written with or without spaces: join a Thai word to the Thai word before it
      if (words.length && isThai(words[words.length - 1])) words[words.length - 1] += t;
      else words.push(t);
    } else if (!(dropFiller && FILLER_EN.has(w))) words.push(stemmed(w));
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

/** Position of the first target of its tier that names each member (categories, words, brands, groups in turn). */
function targetOrder(
  s: CatalogSnapshot,
  members: Map<string, 0 | 1>,
  core: ConceptTargets,
  related: ConceptTargets | undefined,
): Map<string, number> {
  const order = new Map<string, number>();
  for (const [tier, t] of [core, related ?? {}].entries()) {
    const single: ConceptTargets[] = [
      ...(t.categories ?? []).map((c) => ({ categories: [c] })),
      ...(t.words ?? []).map((w) => ({ words: [w] })),
      ...(t.brands ?? []).map((b) => ({ brands: [b] })),
      ...(t.groups ?? []).map((g) => ({ groups: [g] })),
    ];
    single.forEach((target, i) => {
      for (const id of resolveTargets(s, target)) if (members.get(id) === tier && !order.has(id)) order.set(id, i);
    });
  }
  return order;
}

/** Concepts of the category tree and of the lexicon, by the matching forms of their terms. */
export function buildConcepts(s: CatalogSnapshot, lexicon: LexiconFile = readLexicon()): ConceptIndex {
  const productWords = new Set<string>();
  const productPhrases = new Set<string>();
  for (const g of s.groupList)
    for (const text of [g.nameEn, g.nameTh, g.brand, ...g.keywords]) {
      const form = matchForm(text);
      productPhrases.add(form);
      for (const w of form.split(' ')) if (w && !isThai(w)) productWords.add(w);
    }
  const terms = new Map<string, Concept[]>();
  const addTerm = (term: string, c: Concept) => {
    // a Latin term is found without its filler words too ("wine and cheese night"), unless that names a product
    const bare = isThai(term) ? '' : matchForm(term, true);
    const keys = new Set([matchForm(term), productPhrases.has(bare) ? '' : bare]);
    for (const key of keys) {
      if (key.length < 2) continue;
      const list = terms.get(key) ?? [];
      if (!list.includes(c)) list.push(c);
      terms.set(key, list);
    }
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
  const needs: [string, Concept][] = [];
  for (const e of lexicon.concepts) {
    const members = new Map<string, 0 | 1>();
    for (const id of resolveTargets(s, e.related)) members.set(id, 1);
    for (const id of resolveTargets(s, e.core)) members.set(id, 0);
    const concept: Concept = { id: e.id, type: e.type, members };
    if (e.type === 'intent') concept.order = targetOrder(s, members, e.core, e.related);
    for (const t of e.terms) {
      addTerm(t, concept);
      const verb = isThai(t) ? NEED_VERBS_TH.find((v) => t.startsWith(v) && t.length - v.length >= 3) : undefined;
      if (verb) needs.push([t.slice(verb.length), concept]);
    }
  }
  // a need without its verb, unless it is a term of its own
  for (const [need, concept] of needs) if (!terms.has(matchForm(need))) addTerm(need, concept);
  let maxTermLength = 0;
  for (const k of terms.keys()) maxTermLength = Math.max(maxTermLength, k.length);
  return { version: `lexicon-v${lexicon.version}`, terms, maxTermLength, productWords, productPhrases };
}

/** The lexicon's concepts of a term when it has any (they are curated), else the catalog's. */
function curated(concepts: Concept[]): Concept[] {
  const lexicon = concepts.filter((c) => c.type !== 'category' && c.type !== 'brand');
  return lexicon.length ? lexicon : concepts;
}

export interface ConceptMatch {
  concept: Concept;
  term: string;
  /** the term is the whole query (after filler words), or an intent covering it (INTENT_COVERAGE) */
  whole: boolean;
  /** share of the query's characters the term covers; for a whole intent, its share of the intents named */
  coverage: number;
}

const isIntent = (concepts: Concept[]) => curated(concepts).some((c) => c.type === 'intent');
const letterCount = (s: string) => s.replace(/\s+/g, '').length;

/** Letters of the query outside the terms found that are no context words (Infinity: a product word among them). */
function restLetters(index: ConceptIndex, q: string, taken: { start: number; end: number }[]): number {
  const rest = q.split('');
  for (const t of taken) for (let i = t.start; i < t.end; i++) rest[i] = ' ';
  let n = 0;
  for (const w of rest.join('').split(/\s+/)) {
    if (!w) continue;
    if (!isThai(w)) {
      if (CONTEXT_EN.has(w)) continue;
      if (index.productWords.has(w)) return Infinity; // "tom yum paste" asks for a product
      n += w.length;
    } else {
      let t = w;
      for (const c of CONTEXT_TH) t = t.split(c).join('');
      n += t.length;
    }
  }
  return n;
}

/**
 * An intent with a product ("green curry with chicken", "sushi rice"): the groups of the intent
 * that the product's concept holds too, as one whole concept.
 */
function intersections(out: ConceptMatch[], others: string[]): ConceptMatch[] {
  const extra: ConceptMatch[] = [];
  for (const i of out.filter((m) => m.concept.type === 'intent'))
    for (const o of out.filter((m) => m.concept.type !== 'intent' && others.includes(m.term))) {
      const members = new Map<string, 0 | 1>();
      for (const id of i.concept.members.keys()) if (o.concept.members.has(id)) members.set(id, 0);
      if (members.size)
        extra.push({
          concept: { id: `${i.concept.id}&${o.concept.id}`, type: 'intent', members },
          term: `${i.term} ${o.term}`,
          whole: true,
          coverage: 1,
        });
    }
  return extra;
}

/**
 * A query naming a need or an occasion: when intent terms cover at least INTENT_COVERAGE of it,
 * no other concept is named and no other word is a product's, its intents count as whole, each
 * lifted by its share of the intent letters.
 */
function wholeIntents(
  index: ConceptIndex,
  q: string,
  out: ConceptMatch[],
  taken: { start: number; end: number; term: string }[],
): ConceptMatch[] {
  let intent = 0;
  const others: string[] = [];
  for (const t of taken) {
    if (isIntent(index.terms.get(t.term)!)) intent += letterCount(t.term);
    else if (!CONTEXT_EN.has(t.term) && !CONTEXT_TH.includes(t.term)) others.push(t.term);
  }
  if (!intent) return out;
  const rest = restLetters(index, q, taken);
  if (others.length) {
    if (rest === Infinity) return out;
    // the intent counts as whole for its share of the named letters, its groups that the product's
    // concept holds too come first
    const named = intent + others.reduce((n, t) => n + letterCount(t), 0);
    const intents = out
      .filter((m) => m.concept.type === 'intent')
      .map((m) => ({ ...m, whole: true, coverage: letterCount(m.term) / named }));
    return [...out.filter((m) => m.concept.type !== 'intent'), ...intents, ...intersections(out, others)];
  }
  if (intent / (intent + rest) < INTENT_COVERAGE) return out;
  const letters = new Map<string, number>();
  for (const m of out)
    if (m.concept.type === 'intent') letters.set(m.concept.id, (letters.get(m.concept.id) ?? 0) + letterCount(m.term));
  return out
    .filter((m, i) => m.concept.type === 'intent' && out.findIndex((x) => x.concept === m.concept) === i)
    .map((m) => ({ ...m, whole: true, coverage: letters.get(m.concept.id)! / intent }));
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
  return findConcepts(index, matchForm(query, 'latin'), exact, q);
}

/**
 * Terms inside a query, in its form without English filler words: Thai filler words stay, as
 * context words, so that a term starting with one is found (ทำขนมไทย in ทำขนมไทยเอง).
 */
function findConcepts(index: ConceptIndex, q: string, exact: string, dropped: string): ConceptMatch[] {
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
  const taken: { start: number; end: number; term: string }[] = [];
  const out: ConceptMatch[] = [];
  const letters = q.replace(/\s+/g, '').length;
  for (const f of found) {
    if (taken.some((t) => f.start < t.end && t.start < f.end)) continue;
    taken.push(f);
    const coverage = f.term.replace(/\s+/g, '').length / letters;
    for (const concept of curated(index.terms.get(f.term)!))
      out.push({ concept, term: f.term, whole: false, coverage });
  }
  // a query that is a product's name or keyword asks for that product
  return index.productPhrases.has(exact) || index.productPhrases.has(dropped)
    ? out
    : wholeIntents(index, q, out, taken);
}
