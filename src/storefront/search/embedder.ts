/**
 * Vector ranking behind one interface: an Embedder turns texts into unit vectors, and the search
 * ranks groups by cosine similarity to the query's vector. The default, HashedNgramEmbedder, works
 * offline: character n-grams and words hashed into fixed dimensions, weighted by inverse document
 * frequency; robust to typos, unsplit Thai and partial words. A model-based embedder fits the same
 * interface; why this one stays (a comparison with a small multilingual model): docs/architecture.md
 * "Why some code is shaped as it is".
 */
import { isThai, normalize, tokenize } from './text';

export interface Embedder {
  /** Identifies the model and its settings; stored with the index (a change rebuilds it). */
  readonly id: string;
  readonly dimensions: number;
  /** Unit-length vectors, one per text. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** An embedder that learns corpus statistics (e.g. IDF) before embedding. */
export interface FittableEmbedder extends Embedder {
  fit(corpus: string[]): Embedder;
}

/** FNV-1a over UTF-16 code units. */
function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Features of a text: words, and character n-grams of each word (Latin) or each Thai run. */
export function ngramFeatures(text: string): string[] {
  const feats: string[] = [];
  const norm = normalize(text);
  for (const word of tokenize(norm)) if (!isThai(word)) feats.push(`w:${word}`);
  for (const word of norm.split(/[^\p{L}\p{M}\p{N}]+/u)) {
    if (!word) continue;
    const thai = isThai(word);
    const padded = thai ? word : `<${word}>`;
    const sizes = thai ? [2, 3] : [3, 4];
    for (const n of sizes) for (let i = 0; i + n <= padded.length; i++) feats.push(`${n}:${padded.slice(i, i + n)}`);
    if (!thai && padded.length < 3) feats.push(`3:${padded}`);
  }
  return feats;
}

export class HashedNgramEmbedder implements FittableEmbedder {
  readonly id: string;
  constructor(
    readonly dimensions = 1024,
    private readonly idf?: Map<string, number>,
    private readonly defaultIdf = 1,
  ) {
    this.id = `hashed-ngram-v1-d${dimensions}`;
  }

  fit(corpus: string[]): HashedNgramEmbedder {
    const df = new Map<string, number>();
    for (const doc of corpus) for (const f of new Set(ngramFeatures(doc))) df.set(f, (df.get(f) ?? 0) + 1);
    const n = corpus.length;
    const idf = new Map<string, number>();
    for (const [f, d] of df) idf.set(f, Math.log((n + 1) / (d + 1)) + 1);
    return new HashedNgramEmbedder(this.dimensions, idf, Math.log(n + 1) + 1);
  }

  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    const tf = new Map<string, number>();
    for (const f of ngramFeatures(text)) tf.set(f, (tf.get(f) ?? 0) + 1);
    for (const [f, count] of tf) {
      const h = fnv1a(f);
      const w = (1 + Math.log(count)) * (this.idf?.get(f) ?? this.defaultIdf);
      v[h % this.dimensions] += h & 0x80000000 ? -w : w;
    }
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
    return v;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }
}

export const dot = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

export const createDefaultEmbedder = (): FittableEmbedder => new HashedNgramEmbedder();
