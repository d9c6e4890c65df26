/** data/search/lexicon.json: well formed, and every entry and every target resolves to products of the catalog. */
import {
  buildConcepts,
  matchConcepts,
  readLexicon,
  resolveTargets,
  type LexiconEntry,
} from '../../src/storefront/search/concepts';
import { Speller, editDistance } from '../../src/storefront/search/spelling';
import { loadCatalog, type CatalogSnapshot } from '../../src/storefront/snapshot';
import { readVersions } from '../../src/storefront/versions';
import { createTestStack, type TestStack } from '../support/stack';

const lexicon = readLexicon();
let stack: TestStack;
let s: CatalogSnapshot;
beforeAll(async () => {
  stack = await createTestStack({ worker: false });
  s = await loadCatalog(stack.db, (await readVersions(stack.db)).catalog);
});
afterAll(() => stack.close());

describe('the lexicon file', () => {
  it('is versioned, with unique ids, a known type and terms for every entry', () => {
    expect(Number.isInteger(lexicon.version) && lexicon.version >= 1).toBe(true);
    const ids = lexicon.concepts.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of lexicon.concepts) {
      expect(['synonym', 'hypernym', 'intent']).toContain(e.type);
      expect(e.terms.length).toBeGreaterThan(0);
    }
  });

  it('has terms in English and in Thai', () => {
    const terms = lexicon.concepts.flatMap((e) => e.terms);
    expect(terms.filter((t) => /[\u0E00-\u0E7F]/.test(t)).length).toBeGreaterThan(50);
    expect(terms.filter((t) => /^[a-z0-9 '&-]+$/i.test(t)).length).toBeGreaterThan(50);
  });
});

describe('every entry resolves to products', () => {
  it.each(lexicon.concepts.map((e) => [e.id, e] as [string, LexiconEntry]))('%s', (_id, e) => {
    expect(resolveTargets(s, e.core).size).toBeGreaterThan(0);
    // and so does every single target, so that a misspelt word or category id shows up here
    for (const part of [e.core, e.related ?? {}]) {
      for (const c of part.categories ?? [])
        expect([c, resolveTargets(s, { categories: [c] }).size]).toEqual([c, expect.any(Number)]);
      for (const c of part.categories ?? []) expect(resolveTargets(s, { categories: [c] }).size).toBeGreaterThan(0);
      for (const w of part.words ?? []) expect([w, resolveTargets(s, { words: [w] }).size > 0]).toEqual([w, true]);
      for (const b of part.brands ?? []) expect([b, resolveTargets(s, { brands: [b] }).size > 0]).toEqual([b, true]);
      for (const g of part.groups ?? []) expect(s.groups.has(g)).toBe(true);
    }
  });
});

describe('matching queries to concepts', () => {
  const concepts = () => buildConcepts(s, lexicon);
  const ids = (q: string) => matchConcepts(concepts(), q).map((m) => `${m.whole ? 'whole' : 'part'}:${m.concept.id}`);

  it('a category by name, in either language, singular or plural, Thai with or without spaces', () => {
    expect(ids('Seafood')).toEqual(['whole:category:cat-seafood']);
    expect(ids('อาหารทะเล')).toEqual(['whole:category:cat-seafood']);
    expect(ids('อาหาร ทะเล')).toEqual(['whole:category:cat-seafood']);
    expect(ids('shrimps')).toEqual(['whole:shrimp']);
    expect(ids('wagyu')).toEqual(['whole:category:cat-beef-wagyu']);
  });

  it('lexicon entries before the catalog names of the same words; filler words do not count', () => {
    expect(ids('vegetables')).toEqual(['whole:vegetables']);
    expect(ids('something for a hotpot tonight')).toEqual(['whole:hotpot']);
    expect(ids('อยากกินชาบูคืนนี้')).toEqual(['whole:hotpot']);
    expect(ids('meiji')).toEqual(['whole:brand:meiji']);
  });

  it('a query that contains a concept matches it in part, longest terms first', () => {
    expect(ids('frozen shrimp dumplings')).toEqual(expect.arrayContaining(['part:frozen', 'part:shrimp']));
    expect(ids('quokkaberry')).toEqual([]);
  });

  it('a need or an occasion with words for whom or what kind counts as the whole query, in English and Thai', () => {
    expect(ids('what to get for a sick kid')).toEqual(['whole:sick']);
    expect(ids('ลูกเป็นไข้')).toEqual(['whole:sick']);
    expect(ids('flu season')).toEqual(['whole:cold-flu']);
    expect(ids('หน้าหนาว กันหวัด')).toEqual(['whole:cold-flu']);
    expect(ids('camping trip food')).toEqual(['whole:camping']);
    expect(ids('ไปแคมป์')).toEqual(['whole:camping']);
  });

  it('English words match by their stem, Thai needs with or without their verb, particles aside', () => {
    expect(ids('losing weight')).toEqual(['whole:clean-eating']); // the data has "lose weight"
    expect(ids('lactose intolerant')).toEqual(['whole:lactose']); // and "lactose intolerance"
    expect(ids('เพิ่มกล้าม')).toEqual(['whole:muscle']); // the data has สร้างกล้าม
    expect(ids('ดับร้อน')).toEqual(['whole:hot-day']); // and แก้ร้อน
    expect(ids('ท้องร่วง กินอะไรดีค่ะ')).toEqual(['whole:upset-stomach']);
    expect(ids('wine and cheese night')).toEqual(['whole:wine-night']); // "and" is a filler word
    expect(ids('ทำขนมไทยเอง')).toEqual(['whole:thai-desserts']); // ทำ is a filler word, and part of the term
    expect(ids('pad thai').some((x) => x.startsWith('whole:pad-thai'))).toBe(false); // "make pad thai" less "make" is a product
  });

  it('an intent beside a product: the product stays, their common groups count as one whole concept', () => {
    const m = matchConcepts(concepts(), 'green curry with chicken');
    const both = m.find((x) => x.concept.id === 'green-curry&category:cat-chicken')!;
    expect(both.whole).toBe(true);
    expect([...both.concept.members.keys()]).toContain('G360870'); // chicken thigh
    expect(both.concept.members.has('G350579')).toBe(false); // chicken breast: no green curry cut
  });

  it('a query that asks for a product does not turn into an intent', () => {
    expect(ids('tom yum paste')).toEqual(['part:tom-yum']); // "paste" is a product word
    expect(ids('ขนมหมา').some((x) => x.startsWith('whole:'))).toBe(false); // a keyword of the dog treats
    expect(ids('sick')).toEqual(['whole:sick']);
  });

  it('a whole intent orders its groups as the data lists its targets', () => {
    const sick = matchConcepts(concepts(), 'sick')[0].concept;
    const entry = lexicon.concepts.find((e) => e.id === 'sick')!;
    expect(entry.core.words?.[0]).toBe('electrolyte');
    expect(sick.order?.get('G869862')).toBe(0); // Sponsor electrolyte drink
    expect(sick.order?.get('G385056')).toBe(1); // essence of chicken
  });

  it('every concept of the lexicon holds its core groups before its related ones', () => {
    const c = concepts();
    const hotpot = matchConcepts(c, 'hotpot')[0].concept;
    expect(hotpot.members.get('G195396')).toBe(0); // wagyu shabu slices
    expect(hotpot.members.get('G124117')).toBe(1); // napa cabbage
  });
});

describe('spelling correction from the catalog vocabulary', () => {
  it('edit distance counts a swap of neighbours as one edit', () => {
    expect(editDistance('srhimp', 'shrimp', 2)).toBe(1);
    expect(editDistance('chedar', 'cheddar', 2)).toBe(1);
    expect(editDistance('abc', 'xyz', 1)).toBe(2);
  });

  it('corrects Latin words and Thai runs, and leaves known or far words alone', () => {
    const speller = new Speller(['Shrimp', 'Cheddar cheese', 'ยาสีฟัน', 'มะม่วง']);
    expect(speller.correctQuery('srhimp')).toBe('shrimp');
    expect(speller.correctQuery('chedar cheese')).toBe('cheddar cheese');
    expect(speller.correctQuery('ยาสีฟน')).toBe('ยาสีฟัน');
    expect(speller.correctQuery('shrimp')).toBeUndefined();
    expect(speller.correctQuery('quokkaberry')).toBeUndefined();
  });
});
