/**
 * PromptPay (Thai QR Code, EMVCo merchant-presented mode) payloads, reproducing
 * test/fixtures/vectors/promptpay.json character by character. Tags: 00 format "01", 01 "11"
 * static or "12" with an amount, 29 merchant account (AID A000000677010111; 01 phone, 02 tax id
 * or 03 e-wallet id), 58 "TH", 53 "764", 54 amount, 63 CRC16 (CCITT-FALSE, over everything
 * before it including "6304"). Bill payment (`billPaymentPayload`): tag 30 (AID
 * A000000677010112, 01 biller id, 02 Ref1, 03 Ref2) instead of 29. Optional 59 name, 60 city, 62
 * reference label. EMVCo allows any tag order: compare with `parsePayload`. Pure, integer satang.
 */

export const PROMPTPAY_AID = 'A000000677010111';
/** AID of a PromptPay bill payment (tag 30), domestic merchant. */
export const BILL_PAYMENT_AID = 'A000000677010112';

export const Tag = {
  payloadFormat: '00',
  pointOfInitiation: '01',
  merchantPromptPay: '29',
  billPayment: '30',
  country: '58',
  currency: '53',
  amount: '54',
  merchantName: '59',
  merchantCity: '60',
  additionalData: '62',
  crc: '63',
} as const;

export const SubTag = { aid: '00', phone: '01', nationalId: '02', eWallet: '03' } as const;
/** Sub-tags of the bill payment template (tag 30). */
export const BillSubTag = { aid: '00', billerId: '01', ref1: '02', ref2: '03' } as const;
/** Sub-tags of the additional data template (tag 62). */
export const AdditionalSubTag = { billNumber: '01', referenceLabel: '05', terminalLabel: '07' } as const;

/** Tags whose value is itself a TLV template (parsed one level down by `parsePayload`). */
const TEMPLATE_TAGS = new Set([Tag.merchantPromptPay, Tag.billPayment, Tag.additionalData]);

export const MERCHANT_NAME_MAX = 25;
export const MERCHANT_CITY_MAX = 15;
export const REF_MAX = 20;

export type PromptPayIdKind = 'phone' | 'nationalId' | 'eWallet';

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR) as 4 hex digits. */
export function crc16(text: string): string {
  let crc = 0xffff;
  for (let i = 0; i < text.length; i++) {
    crc ^= text.charCodeAt(i) << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** One TLV field: 2-digit tag, 2-digit length, value. */
export function tlv(tag: string, value: string): string {
  if (!/^\d{2}$/.test(tag)) throw new Error(`bad EMVCo tag ${tag}`);
  if (value.length > 99) throw new Error(`EMVCo value of tag ${tag} is longer than 99 characters`);
  return `${tag}${String(value.length).padStart(2, '0')}${value}`;
}

export interface TlvField {
  tag: string;
  value: string;
}

/** Parse a TLV string into its fields (in order); throws on a truncated or malformed string. */
export function parseTlv(text: string): TlvField[] {
  const fields: TlvField[] = [];
  let i = 0;
  while (i < text.length) {
    const head = text.slice(i, i + 4);
    if (!/^\d{4}$/.test(head)) throw new Error(`malformed TLV at offset ${i}`);
    const len = Number(head.slice(2));
    const value = text.slice(i + 4, i + 4 + len);
    if (value.length !== len) throw new Error(`truncated TLV value of tag ${head.slice(0, 2)}`);
    fields.push({ tag: head.slice(0, 2), value });
    i += 4 + len;
  }
  return fields;
}

/**
 * Why `id` cannot be a PromptPay account, or undefined when it can: a mobile number (10 digits
 * from 0, or 66 and 9 digits, written with spaces, dashes or a leading +), a national or tax id
 * (13 digits) or an e-wallet id (15 digits).
 */
export function promptPayIdProblem(id: string): string | undefined {
  if (!/^\+?[0-9][0-9 -]*$/.test(id.trim()))
    return `${JSON.stringify(id)} is not a PromptPay id: digits only (spaces, dashes and a leading + allowed)`;
  const digits = id.replace(/[^0-9]/g, '');
  if (digits.length === 10 && digits.startsWith('0')) return undefined;
  if (digits.length === 11 && digits.startsWith('66')) return undefined;
  if (digits.length === 13 || digits.length === 15) return undefined;
  return `${id} cannot be a PromptPay account: it has ${digits.length} digits; a PromptPay id is a mobile number (10 digits from 0, or +66 and 9), a national or tax id (13 digits) or an e-wallet id (15 digits)`;
}

/** The account field of a PromptPay id: digits only; phone numbers as 0066 + national number. */
export function promptPayAccount(id: string): { kind: PromptPayIdKind; subTag: string; value: string } {
  const digits = id.replace(/[^0-9]/g, '');
  if (digits.length >= 15) return { kind: 'eWallet', subTag: SubTag.eWallet, value: digits };
  if (digits.length >= 13) return { kind: 'nationalId', subTag: SubTag.nationalId, value: digits };
  return { kind: 'phone', subTag: SubTag.phone, value: digits.replace(/^0/, '66').padStart(13, '0') };
}

/** "1234.50" from satang: the EMVCo amount field (THB with 2 decimals). */
export const formatAmount = (satang: number): string =>
  `${Math.floor(satang / 100)}.${String(satang % 100).padStart(2, '0')}`;

export interface PromptPayPayload {
  payload: string;
  crc: string;
  /** true when the payload carries an amount (point of initiation 12) */
  dynamic: boolean;
}

/** Merchant tags every payload may carry: 59 name (truncated to 25), 60 city (truncated to 15), 62/05 reference label. */
export interface MerchantTags {
  merchantName?: string;
  merchantCity?: string;
  /** tag 62 sub-tag 05 */
  referenceLabel?: string;
}

function checkAmount(amountSatang: number | null | undefined): number | null {
  const amount = amountSatang ?? null;
  if (amount !== null && (!Number.isInteger(amount) || amount <= 0))
    throw new Error('PromptPay amount must be a positive integer of satang');
  return amount;
}

/** EMVCo name/city values: printable ASCII only (banking apps reject others), truncated. */
const ascii = (s: string, max: number): string =>
  s
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, max)
    .trimEnd();

/** Tags 00 and 01, the account template, 58, 53, 54, 59, 60, 62 and the CRC, in the vectors' order. */
function assemble(account: string, amount: number | null, tags: MerchantTags): PromptPayPayload {
  const name = tags.merchantName ? ascii(tags.merchantName, MERCHANT_NAME_MAX) : '';
  const city = tags.merchantCity ? ascii(tags.merchantCity, MERCHANT_CITY_MAX) : '';
  const body = [
    tlv(Tag.payloadFormat, '01'),
    tlv(Tag.pointOfInitiation, amount === null ? '11' : '12'),
    account,
    tlv(Tag.country, 'TH'),
    tlv(Tag.currency, '764'),
    amount === null ? '' : tlv(Tag.amount, formatAmount(amount)),
    name ? tlv(Tag.merchantName, name) : '',
    city ? tlv(Tag.merchantCity, city) : '',
    tags.referenceLabel ? tlv(Tag.additionalData, tlv(AdditionalSubTag.referenceLabel, tags.referenceLabel)) : '',
    `${Tag.crc}04`,
  ].join('');
  const crc = crc16(body);
  return { payload: body + crc, crc, dynamic: amount !== null };
}

/** Build the payload for a PromptPay id (tag 29) and an optional amount (integer satang, > 0). */
export function promptPayPayload(opts: { id: string; amountSatang?: number | null } & MerchantTags): PromptPayPayload {
  const account = promptPayAccount(opts.id);
  if (!/\d/.test(opts.id)) throw new Error('invalid PromptPay id: no digits');
  const amount = checkAmount(opts.amountSatang);
  return assemble(
    tlv(Tag.merchantPromptPay, tlv(SubTag.aid, PROMPTPAY_AID) + tlv(account.subTag, account.value)),
    amount,
    opts,
  );
}

/** A biller id: 15 digits (13-digit tax id + 2-digit suffix); a 13-digit tax id alone gets suffix 00. */
export function billerIdOf(id: string): string {
  const digits = id.replace(/[^0-9]/g, '');
  if (digits.length === 13) return `${digits}00`;
  if (digits.length !== 15) throw new Error('invalid biller id: 15 digits (tax id + suffix) expected');
  return digits;
}

/** A bill payment reference (Ref1, Ref2): 1..20 upper-case letters or digits. */
export function isBillRef(ref: string): boolean {
  return /^[A-Z0-9]{1,20}$/.test(ref);
}

/** Build a tag-30 bill payment: biller id, Ref1, optional Ref2 and amount (integer satang, > 0). */
export function billPaymentPayload(
  opts: { billerId: string; ref1: string; ref2?: string; amountSatang?: number | null } & MerchantTags,
): PromptPayPayload {
  const billerId = billerIdOf(opts.billerId);
  for (const [name, ref] of [
    ['Ref1', opts.ref1],
    ['Ref2', opts.ref2],
  ] as const) {
    if (ref !== undefined && !isBillRef(ref)) throw new Error(`invalid ${name}: 1 to 20 upper-case letters or digits`);
  }
  const amount = checkAmount(opts.amountSatang);
  const template =
    tlv(BillSubTag.aid, BILL_PAYMENT_AID) +
    tlv(BillSubTag.billerId, billerId) +
    tlv(BillSubTag.ref1, opts.ref1) +
    (opts.ref2 ? tlv(BillSubTag.ref2, opts.ref2) : '');
  return assemble(tlv(Tag.billPayment, template), amount, opts);
}

/** FNV-1a, 64 bit, over the UTF-16 code units: a stable fingerprint (not a security hash). */
function fnv1a64(text: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) h = BigInt.asUintN(64, (h ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n);
  return h;
}

/**
 * The order reference (bill payment Ref1, tag 62 reference label) of an orderId: deterministic,
 * 1..20 upper-case letters and digits. An orderId that already is one is used as it is; any
 * other becomes its first letters and digits, upper-cased (up to 10), followed by 10 base-32
 * characters of its fingerprint, so orderIds that differ only in punctuation or case still get
 * different references.
 */
export function orderReference(orderId: string): string {
  if (/^[A-Z0-9]{1,20}$/.test(orderId)) return orderId;
  const head = orderId
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')
    .slice(0, 10);
  const tail = (fnv1a64(orderId) & ((1n << 50n) - 1n)).toString(32).toUpperCase().padStart(10, '0');
  return head + tail;
}

/**
 * The QR reference (bill payment Ref1, tag 62 reference label) of a payment, from its unique id:
 * "P" and 19 base-32 characters (95 bits) of the id's hex, upper-cased. Order ids are unique per
 * account and mode only (docs/concepts.md), so a reference from the order id named two payments;
 * this one names one. Payments made before it keep their stored reference (orderReference).
 */
export function paymentReference(paymentId: string): string {
  const hex = paymentId.replace(/^[a-z]+_/, '');
  if (!/^[0-9a-f]{24,}$/.test(hex)) throw new Error(`not a payment id: ${paymentId}`);
  return 'P' + (BigInt(`0x${hex.slice(0, 24)}`) >> 1n).toString(32).toUpperCase().padStart(19, '0');
}

export interface ParsedPayload {
  /** top-level tags in payload order; template tags (29, 30, 62) parsed one level down */
  fields: { tag: string; value: string; sub?: TlvField[] }[];
  crcValid: boolean;
}

/** Parse a payload: TLV fields, templates one level down, and whether its CRC is right. */
export function parsePayload(payload: string): ParsedPayload {
  const fields = parseTlv(payload).map((f) =>
    TEMPLATE_TAGS.has(f.tag as never) ? { ...f, sub: parseTlv(f.value) } : f,
  );
  return { fields, crcValid: verifyCrc(payload) };
}

/** The fields as a map (templates as maps of their sub-tags): tag order does not matter. */
export function payloadFields(payload: string): Record<string, string | Record<string, string>> {
  const out: Record<string, string | Record<string, string>> = {};
  for (const f of parsePayload(payload).fields)
    out[f.tag] = f.sub ? Object.fromEntries(f.sub.map((s) => [s.tag, s.value])) : f.value;
  return out;
}

/** True when the payload ends with 6304 and a CRC that matches everything before it. */
export function verifyCrc(payload: string): boolean {
  if (payload.length < 8 || payload.slice(-8, -4) !== '6304') return false;
  return crc16(payload.slice(0, -4)) === payload.slice(-4).toUpperCase();
}
