/** PromptPay payloads against the shared vectors (field by field and whole string), CRC16, TLV. */
import fc from 'fast-check';
import vectors from '../fixtures/vectors/promptpay.json';
import { crc16, formatAmount, parseTlv, promptPayAccount, promptPayPayload, verifyCrc } from '../../src/domain/promptpay';

/** Top-level fields and the merchant-account template (tag 29), parsed, as a map. */
function fieldsOf(payload: string): Record<string, string | Record<string, string>> {
  const out: Record<string, string | Record<string, string>> = {};
  for (const f of parseTlv(payload)) out[f.tag] = f.tag === '29' ? Object.fromEntries(parseTlv(f.value).map((s) => [s.tag, s.value])) : f.value;
  return out;
}

describe('CRC16 (CCITT-FALSE)', () => {
  it('matches the check value of "123456789"', () => {
    expect(crc16(vectors.crcCheck.input)).toBe(vectors.crcCheck.crc);
  });

  it.each(vectors.cases.map((c) => [c.name, c.payload]))('%s: the vector payload carries a valid CRC', (_name, payload) => {
    expect(verifyCrc(payload)).toBe(true);
    expect(crc16(payload.slice(0, -4))).toBe(payload.slice(-4));
  });

  it('detects a changed character', () => {
    const p = vectors.cases[0].payload;
    expect(verifyCrc(p.replace('0066801234567', '0066801234568'))).toBe(false);
    expect(verifyCrc(p.slice(0, -1) + (p.endsWith('0') ? '1' : '0'))).toBe(false);
  });
});

describe('promptPayPayload reproduces every vector', () => {
  it.each(vectors.cases.map((c) => [c.name, c]))('%s', (_name, c) => {
    const satang = c.amount === null ? null : Math.round(c.amount * 100);
    const built = promptPayPayload({ id: c.id, amountSatang: satang });
    // field by field (tag order may differ between generators)...
    expect(fieldsOf(built.payload)).toEqual(fieldsOf(c.payload));
    // ...and, with our tag order equal to the vectors', character by character
    expect(built.payload).toBe(c.payload);
    expect(built.crc).toBe(c.payload.slice(-4));
    expect(built.dynamic).toBe(c.amount !== null);
  });
});

describe('fields', () => {
  it('classifies ids: phone, national/tax id, e-wallet', () => {
    expect(promptPayAccount('080-123-4567')).toEqual({ kind: 'phone', subTag: '01', value: '0066801234567' });
    expect(promptPayAccount('+66-89-123-4567')).toEqual({ kind: 'phone', subTag: '01', value: '0066891234567' });
    expect(promptPayAccount('1111111111111')).toEqual({ kind: 'nationalId', subTag: '02', value: '1111111111111' });
    expect(promptPayAccount('012345678901234')).toEqual({ kind: 'eWallet', subTag: '03', value: '012345678901234' });
  });

  it('formats amounts from satang with two decimals', () => {
    expect(formatAmount(422)).toBe('4.22');
    expect(formatAmount(100)).toBe('1.00');
    expect(formatAmount(5)).toBe('0.05');
    expect(formatAmount(100_000_000)).toBe('1000000.00');
  });

  it('rejects a non-positive or fractional satang amount', () => {
    expect(() => promptPayPayload({ id: '0801234567', amountSatang: 0 })).toThrow();
    expect(() => promptPayPayload({ id: '0801234567', amountSatang: 1.5 })).toThrow();
  });

  it('every generated payload parses, carries the amount and a valid CRC (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000 }), fc.constantFrom('0801234567', '1111111111111', '012345678901234'), (satang, id) => {
        const { payload } = promptPayPayload({ id, amountSatang: satang });
        const f = fieldsOf(payload);
        return verifyCrc(payload) && f['54'] === formatAmount(satang) && f['01'] === '12' && f['53'] === '764' && f['58'] === 'TH';
      }),
    );
  });
});
