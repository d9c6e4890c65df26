/**
 * The console's HTML: a layout (navigation by the session's scopes, sign-out) and the texts in
 * Thai and English. Every value is escaped; forms carry the session's CSRF token; no script.
 */
import type { Lang } from '../../checkout/page';

export const esc = (s: unknown): string =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

const T = {
  en: {
    console: 'Talat console',
    overview: 'Overview',
    paymentsPage: 'Payments',
    links: 'Payment links',
    webhooks: 'Webhooks',
    reconciliation: 'Reconciliation',
    signIn: 'Sign in',
    signOut: 'Sign out',
    apiKey: 'API key',
    signInHelp: 'Sign in with an API key: you see and do exactly what its scopes allow.',
    badKey: 'That key is not valid (unknown or revoked).',
    expired: 'Your session ended. Please sign in again.',
    forbidden: 'This key lacks the scope needed here',
    csrf: 'The form was stale or not from this console. Nothing was changed.',
    notFound: 'Not found',
    order: 'Order',
    search: 'Search',
    orderId: 'Order id',
    status: 'Status',
    method: 'Method',
    mode: 'Mode',
    from: 'From',
    to: 'To',
    any: 'any',
    amount: 'Amount',
    refunded: 'Refunded',
    created: 'Created',
    next: 'Next page',
    none: 'Nothing here.',
    timeline: 'Timeline',
    refund: 'Refund',
    refundAmount: 'Amount to refund (THB; empty: the whole rest)',
    reason: 'Reason',
    confirm: 'I confirm this refund',
    needConfirm: 'Tick the confirmation to refund.',
    refundDone: 'Refund {status}: {amount} THB.',
    webhookAttempts: 'Webhooks and attempts',
    description: 'Description',
    reusable: 'Reusable (each visit pays again)',
    expiresAt: 'Expires at (optional)',
    create: 'Create',
    deactivate: 'Deactivate',
    created1: 'Created.',
    deactivated: 'Deactivated.',
    url: 'Link',
    endpoints: 'Endpoints',
    deadLetters: 'Dead letters',
    replay: 'Replay',
    replayed: 'Replayed: {status}.',
    disable: 'Disable',
    enable: 'Enable',
    rotate: 'Rotate secret',
    rotated: 'New secret (shown once): {secret}',
    when: 'When',
    what: 'What',
    details: 'Details',
    paidPerHour: 'Payments and paid amount per hour, last 24 h',
    successRate: 'Success rate per method, last 24 h',
    openItems: 'Open items',
    latePayments: 'Late payments',
    openExceptions: 'Unresolved reconciliation exceptions',
    exceptions: 'Exceptions',
    provider: 'Provider',
    date: 'Date',
    show: 'Show',
    resolve: 'Resolve',
    note: 'Note',
    resolved: 'Resolved.',
    other: 'ภาษาไทย',
  },
  th: {
    console: 'คอนโซลตลาด',
    overview: 'ภาพรวม',
    paymentsPage: 'การชำระเงิน',
    links: 'ลิงก์ชำระเงิน',
    webhooks: 'เว็บฮุก',
    reconciliation: 'กระทบยอด',
    signIn: 'เข้าสู่ระบบ',
    signOut: 'ออกจากระบบ',
    apiKey: 'คีย์ API',
    signInHelp: 'เข้าสู่ระบบด้วยคีย์ API: คุณเห็นและทำได้ตามสิทธิ์ของคีย์นั้นเท่านั้น',
    badKey: 'คีย์นี้ใช้ไม่ได้ (ไม่รู้จักหรือถูกเพิกถอน)',
    expired: 'เซสชันหมดอายุแล้ว โปรดเข้าสู่ระบบอีกครั้ง',
    forbidden: 'คีย์นี้ไม่มีสิทธิ์ที่ต้องใช้ที่นี่',
    csrf: 'แบบฟอร์มหมดอายุหรือไม่ได้มาจากคอนโซลนี้ ไม่มีการเปลี่ยนแปลงใด',
    notFound: 'ไม่พบ',
    order: 'คำสั่งซื้อ',
    search: 'ค้นหา',
    orderId: 'เลขคำสั่งซื้อ',
    status: 'สถานะ',
    method: 'วิธีชำระ',
    mode: 'โหมด',
    from: 'ตั้งแต่',
    to: 'ถึง',
    any: 'ทั้งหมด',
    amount: 'ยอดเงิน',
    refunded: 'คืนเงินแล้ว',
    created: 'สร้างเมื่อ',
    next: 'หน้าถัดไป',
    none: 'ไม่มีรายการ',
    timeline: 'ลำดับเหตุการณ์',
    refund: 'คืนเงิน',
    refundAmount: 'จำนวนที่คืน (บาท; เว้นว่าง: คืนส่วนที่เหลือทั้งหมด)',
    reason: 'เหตุผล',
    confirm: 'ยืนยันการคืนเงินนี้',
    needConfirm: 'โปรดติ๊กยืนยันก่อนคืนเงิน',
    refundDone: 'คืนเงิน {status}: {amount} บาท',
    webhookAttempts: 'เว็บฮุกและการส่ง',
    description: 'รายละเอียด',
    reusable: 'ใช้ซ้ำได้ (แต่ละครั้งชำระใหม่)',
    expiresAt: 'หมดอายุเมื่อ (ไม่บังคับ)',
    create: 'สร้าง',
    deactivate: 'ปิดใช้งาน',
    created1: 'สร้างแล้ว',
    deactivated: 'ปิดใช้งานแล้ว',
    url: 'ลิงก์',
    endpoints: 'ปลายทาง',
    deadLetters: 'รายการส่งไม่สำเร็จ',
    replay: 'ส่งใหม่',
    replayed: 'ส่งใหม่แล้ว: {status}',
    disable: 'ปิด',
    enable: 'เปิด',
    rotate: 'เปลี่ยนรหัสลับ',
    rotated: 'รหัสลับใหม่ (แสดงครั้งเดียว): {secret}',
    when: 'เวลา',
    what: 'เหตุการณ์',
    details: 'รายละเอียด',
    paidPerHour: 'จำนวนและยอดที่ชำระต่อชั่วโมง 24 ชั่วโมงล่าสุด',
    successRate: 'อัตราสำเร็จต่อวิธีชำระ 24 ชั่วโมงล่าสุด',
    openItems: 'งานค้าง',
    latePayments: 'การชำระล่าช้า',
    openExceptions: 'รายการกระทบยอดที่ยังไม่ได้แก้ไข',
    exceptions: 'รายการผิดปกติ',
    provider: 'ผู้ให้บริการ',
    date: 'วันที่',
    show: 'แสดง',
    resolve: 'แก้ไขแล้ว',
    note: 'บันทึก',
    resolved: 'บันทึกแล้ว',
    other: 'English',
  },
} as const;
export type TextKey = keyof (typeof T)['en'];
export const text = (lang: Lang, k: TextKey, v: Record<string, unknown> = {}): string =>
  T[lang][k].replace(/\{(\w+)\}/g, (_, n: string) => String(v[n] ?? ''));

export interface Viewer {
  keyName: string;
  mode: string;
  scopes: string[];
  csrf: string;
}

/** A hidden CSRF field for a form of this session. */
export const csrfField = (v: Viewer): string => `<input type="hidden" name="csrf" value="${esc(v.csrf)}">`;

export function layout(lang: Lang, page: string, title: string, body: string, viewer?: Viewer, flash?: string): string {
  const t = (k: TextKey) => esc(text(lang, k));
  const other: Lang = lang === 'th' ? 'en' : 'th';
  const can = (s: string) => viewer?.scopes.includes(s);
  const nav = viewer
    ? `<nav class="main">${[
        can('payments:read') ? `<a href="/console/overview">${t('overview')}</a>` : '',
        can('payments:read') ? `<a href="/console/payments">${t('paymentsPage')}</a>` : '',
        can('payments:read') ? `<a href="/console/links">${t('links')}</a>` : '',
        can('webhooks:manage') ? `<a href="/console/webhooks">${t('webhooks')}</a>` : '',
        can('reconciliation:read') ? `<a href="/console/reconciliation">${t('reconciliation')}</a>` : '',
      ].join('')}</nav>
<span class="who">${esc(viewer.keyName)} · ${esc(viewer.mode)}</span>
<form method="post" action="/console/sign-out">${csrfField(viewer)}<button type="submit">${t('signOut')}</button></form>`
    : '';
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · ${t('console')}</title>
<link rel="icon" href="/checkout/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/console/assets/console.css">
</head><body>
<header class="top"><strong>${t('console')}</strong>${nav}<a href="?lang=${other}" lang="${other}">${esc(text(lang, 'other'))}</a></header>
<main data-page="${esc(page)}">
<h1>${esc(title)}</h1>
${flash ?? ''}
${body}
</main>
</body></html>
`;
}

export const ok = (m: string) => `<p class="msg" role="status">${esc(m)}</p>`;
export const err = (m: string) => `<p class="err" role="alert">${esc(m)}</p>`;

export function table(headers: string[], rows: string[][], lang: Lang): string {
  if (rows.length === 0) return `<p class="muted">${esc(text(lang, 'none'))}</p>`;
  return `<table><thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>
${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n')}
</tbody></table>`;
}
