/**
 * Money: THB numbers with at most 2 decimals on the wire, integer satang everywhere inside.
 */
export const MAX_AMOUNT_SATANG = 100_000_000; // 1,000,000 THB

export type AmountError = 'not_a_number' | 'too_many_decimals' | 'not_positive' | 'too_large';

/** Convert a wire amount (number or numeric string, THB) to satang, or say why it is invalid. */
export function thbToSatang(value: unknown): { ok: true; satang: number } | { ok: false; reason: AmountError } {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return { ok: false, reason: 'not_a_number' };
    text = String(value);
    if (/e/i.test(text)) text = value.toFixed(10).replace(/0+$/, '').replace(/\.$/, '');
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return { ok: false, reason: 'not_a_number' };
  }
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) return { ok: false, reason: 'not_a_number' };
  const [, sign, whole, frac = ''] = m;
  if (frac.replace(/0+$/, '').length > 2) return { ok: false, reason: 'too_many_decimals' };
  const satang = Number(whole) * 100 + Number(frac.padEnd(2, '0').slice(0, 2));
  if (sign === '-' || satang <= 0) return { ok: false, reason: 'not_positive' };
  if (satang > MAX_AMOUNT_SATANG) return { ok: false, reason: 'too_large' };
  return { ok: true, satang };
}

/** Satang -> THB number for the wire (exact for integers below 2^53 / 100). */
export const satangToThb = (satang: number): number => Math.round(satang) / 100;

/** Satang -> "1,234.50" display string. */
export const formatThb = (satang: number): string =>
  (satang / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
