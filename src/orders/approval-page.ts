/**
 * The approval page of a costlier substitution, in Thai or English: what was substituted, the
 * price difference, and two buttons (a form POST: no script on this page) to approve or decline.
 * The checkout page's stylesheet and icon are reused (same origin), as the payment link page does.
 */
import type { Lang } from '../checkout';
import { escapeHtml as esc, smallPage } from '../http/small-page';
import type { ApprovalStatus } from './index';

const STRINGS = {
  en: {
    title: 'Approve a substitution',
    intro: 'The shop could not pick an item of your order and offers a substitute that costs more.',
    shop: 'Shop',
    item: 'Substitute',
    difference: 'Price difference',
    deadline: 'Decide by',
    approve: 'Approve',
    decline: 'Decline',
    otherLang: 'ภาษาไทย',
    pending: 'The shop is waiting for your decision.',
    approved: 'You approved the substitution. Thank you!',
    declined: 'You declined the substitution: it is not charged.',
    timedOutApproved: 'No decision arrived in time: as the shop set, the substitution was approved.',
    timedOutDeclined: 'No decision arrived in time: as the shop set, the substitution was declined (not charged).',
    late: 'This request has closed: the time to decide is over.',
    invalid: 'This approval link is not valid.',
    expired: 'This approval link has expired.',
    help: 'Please contact the shop.',
  },
  th: {
    title: 'อนุมัติสินค้าทดแทน',
    intro: 'ร้านไม่สามารถจัดสินค้าบางรายการในคำสั่งซื้อของคุณได้ และเสนอสินค้าทดแทนที่ราคาสูงกว่า',
    shop: 'ร้านค้า',
    item: 'สินค้าทดแทน',
    difference: 'ส่วนต่างราคา',
    deadline: 'โปรดตัดสินใจภายใน',
    approve: 'อนุมัติ',
    decline: 'ปฏิเสธ',
    otherLang: 'English',
    pending: 'ร้านกำลังรอการตัดสินใจของคุณ',
    approved: 'คุณอนุมัติสินค้าทดแทนแล้ว ขอบคุณ',
    declined: 'คุณปฏิเสธสินค้าทดแทนแล้ว ไม่มีการเรียกเก็บเงินส่วนนี้',
    timedOutApproved: 'ไม่ได้รับการตัดสินใจภายในเวลา ร้านจึงอนุมัติสินค้าทดแทนตามที่ตั้งค่าไว้',
    timedOutDeclined: 'ไม่ได้รับการตัดสินใจภายในเวลา ร้านจึงปฏิเสธสินค้าทดแทนตามที่ตั้งค่าไว้ (ไม่มีการเรียกเก็บเงิน)',
    late: 'คำขอนี้ปิดแล้ว หมดเวลาตัดสินใจ',
    invalid: 'ลิงก์อนุมัตินี้ไม่ถูกต้อง',
    expired: 'ลิงก์อนุมัตินี้หมดอายุแล้ว',
    help: 'โปรดติดต่อร้านค้า',
  },
} as const;

/** what the page shows: an approval's state, or why the link opens none */
export type ApprovalPageState = ApprovalStatus | 'late' | 'invalid' | 'expired';

const baht = (satang: number, lang: Lang): string =>
  `+${new Intl.NumberFormat(lang === 'th' ? 'th-TH' : 'en-GB', { style: 'currency', currency: 'THB' }).format(satang / 100)}`;
const when = (d: Date, lang: Lang): string =>
  new Intl.DateTimeFormat(lang === 'th' ? 'th-TH' : 'en-GB', {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'Asia/Bangkok',
  }).format(d);

export function approvalPage(d: {
  lang: Lang;
  state: ApprovalPageState;
  token?: string;
  merchantName: string;
  approval?: { description: string; amountSatang: number; expiresAt: Date; counted: boolean | null };
}): string {
  const t = STRINGS[d.lang];
  const a = d.approval;
  const facts = a
    ? `<p>${esc(t.intro)}</p>
<dl class="facts">
<div><dt>${esc(t.shop)}</dt><dd id="merchant">${esc(d.merchantName)}</dd></div>
<div><dt>${esc(t.item)}</dt><dd id="description">${esc(a.description)}</dd></div>
<div class="amount"><dt>${esc(t.difference)}</dt><dd id="amount">${esc(baht(a.amountSatang, d.lang))}</dd></div>
${d.state === 'pending' ? `<div><dt>${esc(t.deadline)}</dt><dd id="deadline">${esc(when(a.expiresAt, d.lang))}</dd></div>` : ''}
</dl>`
    : '';
  const message = d.state === 'timed_out' ? (a?.counted ? t.timedOutApproved : t.timedOutDeclined) : t[d.state];
  const action = `/approvals/${esc(d.token ?? '')}?lang=${d.lang}`;
  const body =
    d.state === 'pending'
      ? `<p id="status" class="status" role="status">${esc(message)}</p>
<form method="post" action="${action}"><input type="hidden" name="decision" value="approve"><button id="approve" class="button" type="submit">${esc(t.approve)}</button></form>
<form method="post" action="${action}"><input type="hidden" name="decision" value="decline"><button id="decline" class="button secondary" type="submit">${esc(t.decline)}</button></form>`
      : `<p id="status" class="status" role="status">${esc(message)}</p>${a ? '' : `<p>${esc(t.help)}</p>`}`;
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
