/**
 * The payment link's page in Thai or English: what the payer pays for, the amount, and one
 * button (a form POST: no script on this page) that makes the payment and goes on to the hosted
 * checkout. The checkout page's stylesheet and icon are reused (same origin).
 */
import type { Lang } from '../checkout';
import { escapeHtml as esc, smallPage } from '../http/small-page';

const STRINGS = {
  en: {
    title: 'Payment link',
    payTo: 'Pay to',
    for: 'For',
    amount: 'Amount',
    pay: 'Pay with PromptPay',
    otherLang: 'ภาษาไทย',
    paid: 'This link has already been paid. Thank you!',
    expired: 'This payment link has expired.',
    deactivated: 'This payment link is no longer active.',
    owner: 'This payment link cannot take payments now.',
    invalid: 'This payment link is not valid.',
    help: 'Please ask the shop for a new link.',
  },
  th: {
    title: 'ลิงก์ชำระเงิน',
    payTo: 'ชำระให้',
    for: 'รายการ',
    amount: 'ยอดชำระ',
    pay: 'ชำระด้วยพร้อมเพย์',
    otherLang: 'English',
    paid: 'ลิงก์นี้ชำระเงินแล้ว ขอบคุณ',
    expired: 'ลิงก์ชำระเงินนี้หมดอายุแล้ว',
    deactivated: 'ลิงก์ชำระเงินนี้ถูกปิดใช้งานแล้ว',
    owner: 'ลิงก์ชำระเงินนี้รับชำระไม่ได้ในขณะนี้',
    invalid: 'ลิงก์ชำระเงินนี้ไม่ถูกต้อง',
    help: 'โปรดขอลิงก์ใหม่จากร้านค้า',
  },
} as const;

export type LinkPageState = 'active' | 'paid' | 'expired' | 'deactivated' | 'owner' | 'invalid';

const baht = (satang: number, lang: Lang): string =>
  new Intl.NumberFormat(lang === 'th' ? 'th-TH' : 'en-GB', { style: 'currency', currency: 'THB' }).format(satang / 100);

export function linkPage(d: {
  lang: Lang;
  state: LinkPageState;
  code?: string;
  merchantName: string;
  description?: string;
  amountSatang?: number;
}): string {
  const t = STRINGS[d.lang];
  const facts =
    d.description !== undefined && d.amountSatang !== undefined
      ? `<dl class="facts">
<div><dt>${esc(t.payTo)}</dt><dd id="merchant">${esc(d.merchantName)}</dd></div>
<div><dt>${esc(t.for)}</dt><dd id="description">${esc(d.description)}</dd></div>
<div class="amount"><dt>${esc(t.amount)}</dt><dd id="amount">${esc(baht(d.amountSatang, d.lang))}</dd></div>
</dl>`
      : '';
  const body =
    d.state === 'active'
      ? `<form method="post" action="/l/${esc(d.code ?? '')}?lang=${d.lang}"><button id="pay" class="button" type="submit">${esc(t.pay)}</button></form>`
      : `<p id="status" class="status" role="status">${esc(t[d.state])}</p>${d.state === 'paid' ? '' : `<p>${esc(t.help)}</p>`}`;
  return smallPage({
    lang: d.lang,
    title: t.title,
    merchantName: d.merchantName,
    state: d.state,
    otherLangLabel: t.otherLang,
    facts,
    body,
  });
}
