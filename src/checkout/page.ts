/**
 * The hosted checkout page's HTML, in Thai or English: server-rendered with the payment's state
 * at load time (a final state reads right without JavaScript), its live part in
 * assets/checkout.js, which reads the JSON block this page carries (no inline script: strict CSP).
 */
import { type Lang } from './index';

export { chooseLang, LANGS, type Lang } from './index';

const STRINGS = {
  en: {
    title: 'Pay with PromptPay',
    payTo: 'Pay to',
    amount: 'Amount',
    orderNumber: 'Order reference',
    reference: 'Payment reference',
    expiresIn: 'Expires in',
    scan: 'Scan this QR code with any Thai banking app, or save it and open it in the app.',
    qrAlt: 'PromptPay QR code: {amount} to {merchant}',
    pending: 'Waiting for your payment…',
    paid: 'Payment received. Thank you!',
    failed: 'The payment did not go through.',
    expired: 'This QR code has expired. No payment was taken.',
    refunded: 'This payment was refunded.',
    reconnecting: 'Connection lost, reconnecting…',
    returnToShop: 'Return to the shop',
    returning: 'Returning to the shop in {s} s…',
    otherLang: 'ภาษาไทย',
    noscript: 'This page updates by itself with JavaScript on; without it, reload the page to see the status.',
    linkInvalid: 'This payment link is not valid.',
    linkExpired: 'This payment link has expired.',
    linkHelp: 'Please go back to the shop and start the payment again.',
    topUpFor: 'Top-up for order {order}: {reasons}',
    topUpForAny: 'Top-up for order {order}',
    and: ' and ',
    out_of_stock: 'out-of-stock items',
    substitution: 'substitutions',
    weight: 'weights',
    other: 'other changes',
  },
  th: {
    title: 'ชำระเงินด้วยพร้อมเพย์',
    payTo: 'ชำระให้',
    amount: 'ยอดชำระ',
    orderNumber: 'เลขอ้างอิงคำสั่งซื้อ',
    reference: 'เลขอ้างอิงการชำระเงิน',
    expiresIn: 'หมดอายุใน',
    scan: 'สแกน QR นี้ด้วยแอปธนาคารใดก็ได้ หรือบันทึกภาพแล้วเปิดในแอป',
    qrAlt: 'QR พร้อมเพย์: {amount} ให้ {merchant}',
    pending: 'กำลังรอการชำระเงิน…',
    paid: 'ได้รับการชำระเงินแล้ว ขอบคุณ',
    failed: 'การชำระเงินไม่สำเร็จ',
    expired: 'QR นี้หมดอายุแล้ว ไม่มีการตัดเงิน',
    refunded: 'รายการนี้ได้คืนเงินแล้ว',
    reconnecting: 'การเชื่อมต่อขาดหาย กำลังเชื่อมต่อใหม่…',
    returnToShop: 'กลับไปที่ร้านค้า',
    returning: 'กำลังกลับไปที่ร้านค้าใน {s} วินาที…',
    otherLang: 'English',
    noscript: 'หน้านี้อัปเดตเองเมื่อเปิด JavaScript หากปิดอยู่ โปรดโหลดหน้าใหม่เพื่อดูสถานะ',
    linkInvalid: 'ลิงก์ชำระเงินนี้ไม่ถูกต้อง',
    linkExpired: 'ลิงก์ชำระเงินนี้หมดอายุแล้ว',
    linkHelp: 'โปรดกลับไปที่ร้านค้าแล้วเริ่มชำระเงินใหม่',
    topUpFor: 'ชำระส่วนเพิ่มของคำสั่งซื้อ {order}: {reasons}',
    topUpForAny: 'ชำระส่วนเพิ่มของคำสั่งซื้อ {order}',
    and: ' และ ',
    out_of_stock: 'สินค้าหมด',
    substitution: 'สินค้าทดแทน',
    weight: 'น้ำหนักสินค้า',
    other: 'การเปลี่ยนแปลงอื่น',
  },
} as const;
type Key = keyof (typeof STRINGS)['en'];

const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const fill = (s: string, v: Record<string, string>): string => s.replace(/\{(\w+)\}/g, (_, k: string) => v[k] ?? '');

export const FINAL = new Set(['paid', 'failed', 'expired', 'refunded']);

export interface PageData {
  lang: Lang;
  token: string;
  status: string;
  amountSatang: number;
  merchantName: string;
  /** the shop's order number (orderId) */
  orderId: string;
  /** the payment's reference in the QR (tag 62), what a bank app shows */
  reference: string;
  /** ms left until the payment expires, as the server sees it */
  remainingMs: number;
  returnUrl: string | null;
  /** a top-up of an order (the orders slice's, in the payment's details): what it is for */
  purpose?: { orderId: string; reasons: string[] };
}

const REASONS = ['out_of_stock', 'substitution', 'weight', 'other'] as const;
/** "Top-up for order ORD-1: substitutions and weights", in the page's language. */
export function purposeText(lang: Lang, p: { orderId: string; reasons: string[] }): string {
  const t = STRINGS[lang];
  const names = REASONS.filter((r) => p.reasons.includes(r)).map((r) => t[r]);
  if (names.length === 0) return fill(t.topUpForAny, { order: p.orderId });
  const reasons = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')}${t.and}${names[names.length - 1]}`;
  return fill(t.topUpFor, { order: p.orderId, reasons });
}

const baht = (satang: number, lang: Lang): string =>
  new Intl.NumberFormat(lang === 'th' ? 'th-TH' : 'en-GB', { style: 'currency', currency: 'THB' }).format(satang / 100);

const shell = (lang: Lang, title: string, body: string): string => `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)}</title>
<link rel="icon" href="/checkout/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/checkout/assets/checkout.css">
<script src="/checkout/assets/checkout.js" defer></script>
</head><body>
${body}
</body></html>
`;

export function checkoutPage(d: PageData): string {
  const t = STRINGS[d.lang];
  const other: Lang = d.lang === 'th' ? 'en' : 'th';
  const amount = baht(d.amountSatang, d.lang);
  const final = FINAL.has(d.status);
  const clock = (ms: number) => {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  };
  // what checkout.js needs: the other status texts and where to listen (no inline script runs)
  const data = {
    events: `/checkout/${d.token}/events`,
    status: d.status,
    remainingMs: d.remainingMs,
    returnUrl: d.returnUrl,
    text: Object.fromEntries(
      (['pending', 'paid', 'failed', 'expired', 'refunded', 'reconnecting', 'returning'] as Key[]).map((k) => [
        k,
        t[k],
      ]),
    ),
  };
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const ret = d.returnUrl ? `<a id="return" class="button" href="${esc(d.returnUrl)}">${esc(t.returnToShop)}</a>` : '';
  return shell(
    d.lang,
    `${t.title} · ${d.merchantName}`,
    `<main class="checkout" data-status="${esc(d.status)}">
<nav class="lang"><a href="?lang=${other}" hreflang="${other}" lang="${other}">${esc(t.otherLang)}</a></nav>
<header class="mark"><img src="/checkout/assets/thai-qr-payment.svg" width="240" height="48" alt="Thai QR Payment · PromptPay"></header>
<h1>${esc(t.title)}</h1>
${
  d.purpose
    ? `<p id="purpose" class="purpose">${esc(purposeText(d.lang, d.purpose))}</p>
`
    : ''
}<dl class="facts">
<div><dt>${esc(t.payTo)}</dt><dd id="merchant">${esc(d.merchantName)}</dd></div>
<div class="amount"><dt>${esc(t.amount)}</dt><dd id="amount">${esc(amount)}</dd></div>
</dl>
<figure class="qr"${final ? ' hidden' : ''}>
<img id="qr" src="/checkout/${esc(d.token)}/qr.png" width="212" height="212" alt="${esc(fill(t.qrAlt, { amount, merchant: d.merchantName }))}">
<figcaption>${esc(t.scan)}</figcaption>
</figure>
<dl class="facts small">
<div><dt>${esc(t.orderNumber)}</dt><dd id="order">${esc(d.orderId)}</dd></div>
<div><dt>${esc(t.reference)}</dt><dd id="reference">${esc(d.reference)}</dd></div>
<div class="expiry"${final ? ' hidden' : ''}><dt>${esc(t.expiresIn)}</dt><dd><span id="countdown" role="timer" aria-live="off">${clock(d.remainingMs)}</span></dd></div>
</dl>
<p id="status" class="status" role="status" aria-live="polite" aria-atomic="true">${esc(t[d.status as Key] ?? d.status)}</p>
<p id="next" class="next"${final ? '' : ' hidden'}>${ret}</p>
<noscript><p class="small">${esc(t.noscript)}</p></noscript>
<script type="application/json" id="checkout-data">${json}</script>
</main>`,
  );
}

/** The page of a link that is not (or no longer) valid. */
export function linkErrorPage(lang: Lang, reason: 'invalid' | 'expired'): string {
  const t = STRINGS[lang];
  const msg = reason === 'expired' ? t.linkExpired : t.linkInvalid;
  return shell(
    lang,
    msg,
    `<main class="checkout" data-status="error"><h1>${esc(msg)}</h1><p>${esc(t.linkHelp)}</p></main>`,
  );
}
