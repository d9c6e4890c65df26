/**
 * The console's overview: payments and paid amount per hour for the last 24 h and the success
 * rate per method, drawn as server-rendered SVG (no script, no inline style), and the open
 * items. Read through the payment service's list (the session's own payments only).
 */
import type { Lang } from '../../checkout/page';
import type { PaymentList, PaymentListQuery } from '../../payments/schemas';
import { esc, text } from './views';

const HOUR = 3600_000;
/** At most this many payments are read for the charts (8 pages of 200); more is said on the page. */
export const OVERVIEW_MAX = 1600;

type Row = PaymentList['payments'][number];

function bars(values: number[], opts: { label: string; id: string; format: (n: number) => string }): string {
  const w = 480;
  const h = 120;
  const max = Math.max(1, ...values);
  const bw = w / values.length;
  const rects = values
    .map((v, i) => {
      const bh = Math.round((v / max) * (h - 20));
      return `<rect x="${(i * bw + 1).toFixed(1)}" y="${h - bh}" width="${(bw - 2).toFixed(1)}" height="${bh}" fill="#113566"><title>${esc(opts.format(v))}</title></rect>`;
    })
    .join('');
  return `<figure><svg id="${opts.id}" xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h + 16}" viewBox="0 0 ${w} ${h + 16}" role="img" aria-label="${esc(opts.label)}">
<line x1="0" y1="${h}" x2="${w}" y2="${h}" stroke="#4a4a4a"/>${rects}
<text x="0" y="${h + 14}" font-size="11" fill="#4a4a4a">-24 h</text><text x="${w - 30}" y="${h + 14}" font-size="11" fill="#4a4a4a">now</text>
<text x="${w - 4}" y="12" font-size="11" text-anchor="end" fill="#4a4a4a">max ${esc(opts.format(max))}</text></svg>
<figcaption>${esc(opts.label)}</figcaption></figure>`;
}

export async function overviewPage(d: {
  lang: Lang;
  now: number;
  listPayments: (q: PaymentListQuery) => Promise<PaymentList>;
  deadLetters: () => Promise<number | undefined>;
  latePayments: () => Promise<number>;
  /** unresolved reconciliation exceptions; undefined: the key may not read reconciliation */
  openExceptions: () => Promise<number | undefined>;
}): Promise<string> {
  const t = (k: Parameters<typeof text>[1]) => esc(text(d.lang, k));
  const since = d.now - 24 * HOUR;
  const rows: Row[] = [];
  let after: string | undefined;
  do {
    const page = await d.listPayments({
      created_gte: new Date(since).toISOString(),
      limit: 200,
      ...(after ? { starting_after: after } : {}),
    } as PaymentListQuery);
    rows.push(...page.payments);
    after = page.hasMore ? (page.nextCursor ?? undefined) : undefined;
  } while (after && rows.length < OVERVIEW_MAX);
  const count = Array<number>(24).fill(0);
  const paid = Array<number>(24).fill(0);
  const byMethod = new Map<string, { ok: number; all: number }>();
  for (const p of rows) {
    const slot = Math.min(23, Math.floor((Date.parse(p.createdAt) - since) / HOUR));
    if (slot < 0) continue;
    count[slot]++;
    const settled = p.status === 'paid' || p.status === 'refunded';
    if (settled) paid[slot] += p.amount;
    const m = byMethod.get(p.method) ?? { ok: 0, all: 0 };
    if (p.status !== 'pending') {
      m.all++;
      if (settled) m.ok++;
    }
    byMethod.set(p.method, m);
  }
  const rates = [...byMethod.entries()].sort();
  const rateSvg = `<figure><svg id="chart-success" xmlns="http://www.w3.org/2000/svg" width="480" height="${24 * Math.max(1, rates.length) + 8}" role="img" aria-label="${t('successRate')}">
${rates
  .map(([m, r], i) => {
    const pct = r.all ? r.ok / r.all : 0;
    return `<text x="0" y="${i * 24 + 16}" font-size="12" fill="#1a1a1a">${esc(m)}</text><rect x="70" y="${i * 24 + 4}" width="${Math.round(pct * 340)}" height="16" fill="#0b6b2e"/><text x="${80 + Math.round(pct * 340)}" y="${i * 24 + 16}" font-size="12" fill="#1a1a1a">${Math.round(pct * 100)}% (${r.ok}/${r.all})</text>`;
  })
  .join('')}</svg><figcaption>${t('successRate')}</figcaption></figure>`;
  const dead = await d.deadLetters();
  const late = await d.latePayments();
  const exceptions = await d.openExceptions();
  return `<div class="charts">
${bars(count, { id: 'chart-count', label: `${text(d.lang, 'paidPerHour')} (n)`, format: (n) => String(n) })}
${bars(paid, { id: 'chart-paid', label: `${text(d.lang, 'paidPerHour')} (THB)`, format: (n) => n.toFixed(2) })}
${rateSvg}
</div>
${rows.length >= OVERVIEW_MAX ? `<p class="muted">${OVERVIEW_MAX}+</p>` : ''}
<h2>${t('openItems')}</h2>
<ul id="open-items">
${dead === undefined ? '' : `<li><a href="/console/webhooks">${t('deadLetters')}</a>: <span id="open-dead">${dead}</span></li>`}
<li>${t('latePayments')} (review): <span id="open-late">${late}</span></li>
${exceptions === undefined ? '' : `<li><a href="/console/reconciliation">${t('openExceptions')}</a>: <span id="open-exceptions">${exceptions}</span></li>`}
</ul>`;
}
