/**
 * PromptPay (Thai QR Code, EMVCo merchant-presented mode) payloads.
 *
 * Contract: `promptPayPayload` reproduces the payloads of test/fixtures/vectors/promptpay.json
 * (the public promptpay-qr library's cases) field by field and character by character:
 *
 *   00 payload format "01" | 01 point of initiation "11" static, "12" with an amount |
 *   29 merchant account { 00 AID A000000677010111, 01 phone (0066 + 9 digits) | 02 national or
 *   tax id (13 digits) | 03 e-wallet id (15 digits) } | 58 country "TH" | 53 currency "764" |
 *   54 amount (THB, 2 decimals, only when given) | 63 CRC16 (CCITT-FALSE over everything
 *   before it, including the literal "6304"), 4 upper-case hex digits.
 *
 * Pure code: no I/O. Amounts are integer satang.
 */

export const PROMPTPAY_AID = 'A000000677010111';

export const Tag = {
  payloadFormat: '00',
  pointOfInitiation: '01',
  merchantPromptPay: '29',
  country: '58',
  currency: '53',
  amount: '54',
  crc: '63',
} as const;

export const SubTag = { aid: '00', phone: '01', nationalId: '02', eWallet: '03' } as const;

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

/** The account field of a PromptPay id: digits only; phone numbers as 0066 + national number. */
export function promptPayAccount(id: string): { kind: PromptPayIdKind; subTag: string; value: string } {
  const digits = id.replace(/[^0-9]/g, '');
  if (digits.length >= 15) return { kind: 'eWallet', subTag: SubTag.eWallet, value: digits };
  if (digits.length >= 13) return { kind: 'nationalId', subTag: SubTag.nationalId, value: digits };
  return { kind: 'phone', subTag: SubTag.phone, value: digits.replace(/^0/, '66').padStart(13, '0') };
}

/** "1234.50" from satang: the EMVCo amount field (THB with 2 decimals). */
export const formatAmount = (satang: number): string => `${Math.floor(satang / 100)}.${String(satang % 100).padStart(2, '0')}`;

export interface PromptPayPayload {
  payload: string;
  crc: string;
  /** true when the payload carries an amount (point of initiation 12) */
  dynamic: boolean;
}

/** Build the payload for a PromptPay id and an optional amount (integer satang, > 0). */
export function promptPayPayload(opts: { id: string; amountSatang?: number | null }): PromptPayPayload {
  const account = promptPayAccount(opts.id);
  if (!/\d/.test(opts.id)) throw new Error('invalid PromptPay id: no digits');
  const amount = opts.amountSatang ?? null;
  if (amount !== null && (!Number.isInteger(amount) || amount <= 0)) throw new Error('PromptPay amount must be a positive integer of satang');
  const body = [
    tlv(Tag.payloadFormat, '01'),
    tlv(Tag.pointOfInitiation, amount === null ? '11' : '12'),
    tlv(Tag.merchantPromptPay, tlv(SubTag.aid, PROMPTPAY_AID) + tlv(account.subTag, account.value)),
    tlv(Tag.country, 'TH'),
    tlv(Tag.currency, '764'),
    amount === null ? '' : tlv(Tag.amount, formatAmount(amount)),
    `${Tag.crc}04`,
  ].join('');
  const crc = crc16(body);
  return { payload: body + crc, crc, dynamic: amount !== null };
}

/** True when the payload ends with 6304 and a CRC that matches everything before it. */
export function verifyCrc(payload: string): boolean {
  if (payload.length < 8 || payload.slice(-8, -4) !== '6304') return false;
  return crc16(payload.slice(0, -4)) === payload.slice(-4).toUpperCase();
}
