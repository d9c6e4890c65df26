/**
 * The small server-rendered pages that share the hosted checkout's look (its stylesheet and icon)
 * and have no script: the payment link's and the substitution approval's. One shell, one escaper,
 * one set of response headers (a strict CSP whose forms post only to this origin).
 */
import type { Context } from 'koa';

type Lang = 'th' | 'en';

export const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The page around `facts` and `body` (already escaped HTML), with the link to the other language. */
export function smallPage(d: {
  lang: Lang;
  title: string;
  merchantName: string;
  state: string;
  otherLangLabel: string;
  facts: string;
  body: string;
}): string {
  const other: Lang = d.lang === 'th' ? 'en' : 'th';
  return `<!doctype html>
<html lang="${d.lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(d.title)} · ${escapeHtml(d.merchantName)}</title>
<link rel="icon" href="/checkout/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/checkout/assets/checkout.css">
</head><body>
<main class="checkout" data-status="${d.state}">
<nav class="lang"><a href="?lang=${other}" hreflang="${other}" lang="${other}">${escapeHtml(d.otherLangLabel)}</a></nav>
<h1>${escapeHtml(d.title)}</h1>
${d.facts}
${d.body}
</main>
</body></html>
`;
}

const CSP =
  "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** Answers `html` in `lang` with `status` and the small pages' headers. */
export function sendSmallPage(ctx: Context, status: number, lang: Lang, html: string): void {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Vary', 'Accept-Language');
  ctx.set('Content-Language', lang);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}
