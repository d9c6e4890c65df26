/**
 * The checkout slice's face: the page languages and how a request chooses one, shared by the
 * pages other slices serve (the payment link page, the console). Pure.
 */
export type Lang = 'th' | 'en';
export const LANGS: readonly Lang[] = ['th', 'en'];

/** `?lang=` when it names one, else the first of th/en in Accept-Language by weight, else English. */
export function chooseLang(query: unknown, acceptLanguage: string): Lang {
  if (query === 'th' || query === 'en') return query;
  let best: { lang: Lang; q: number } | undefined;
  for (const part of acceptLanguage.split(',')) {
    const [tag, ...params] = part.trim().toLowerCase().split(';');
    const lang = tag.split('-')[0];
    if (lang !== 'th' && lang !== 'en') continue;
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp ? Number(qp.slice(2)) : 1;
    if (q > 0 && (!best || q > best.q)) best = { lang, q };
  }
  return best?.lang ?? 'en';
}
