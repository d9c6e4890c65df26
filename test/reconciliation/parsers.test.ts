/**
 * The three settlement formats: what the sandbox providers write reads back line for line, and
 * every kind of fault is refused with the line it is on (a malformed file imports nothing).
 */
import fc from 'fast-check';
import { SETTLEMENT_PROVIDERS, type SettlementProvider } from '../../src/reconciliation';
import {
  amountOf,
  formatSettlementFile,
  parseSettlementFile,
  SettlementFileError,
  type SettlementEntry,
} from '../../src/reconciliation/parsers';

const DAY = '2026-11-25';
const kinds: Record<SettlementProvider, SettlementEntry['kind'][]> = {
  card: ['payment', 'refund', 'fee'],
  promptpay: ['payment', 'fee'],
  bank: ['refund', 'fee'],
};
const entry = (p: SettlementProvider, i: number, satang: number): SettlementEntry => {
  const kind = kinds[p][i % kinds[p].length];
  return {
    kind,
    reference: kind === 'fee' ? null : `ref_${i}`,
    amountSatang: satang,
    // whole minutes: the bank's statement has no seconds
    txnAt: new Date(Date.parse('2026-11-24T17:00:00Z') + i * 60_000),
  };
};

/** The line number and message of the error parsing `text` throws. */
function refusal(p: SettlementProvider, text: string): { line: number; message: string } {
  try {
    parseSettlementFile(p, DAY, text);
  } catch (e) {
    expect(e).toBeInstanceOf(SettlementFileError);
    return { line: (e as SettlementFileError).line, message: (e as Error).message };
  }
  throw new Error('parsed');
}

describe('settlement files', () => {
  it.each(SETTLEMENT_PROVIDERS)('%s: written then parsed gives the same lines (property)', (p) => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 99_999_999_99 }), { maxLength: 40 }), (amounts) => {
        const entries = amounts.map((a, i) => entry(p, i, a));
        const lines = parseSettlementFile(p, DAY, formatSettlementFile(p, DAY, entries));
        expect(lines).toEqual(entries.map((e, i) => ({ ...e, lineNo: i + 3 })));
      }),
      { numRuns: 50 },
    );
  });

  it('reads the quirks: thousands separators, Buddhist-era dates, New York and Bangkok times', () => {
    const card = parseSettlementFile(
      'card',
      DAY,
      'H,SIAMCARD ACQUIRING,TALAT,2026-11-25,-05:00\r\nRT,TXN_TIME,REFERENCE,TYPE,AMOUNT,CURRENCY\r\nD,2026-11-24T19:30:00-05:00,chrg_1,CAPTURE,"12,345.60",THB\r\nT,1,"12,345.60"\r\n',
    );
    expect(card[0]).toMatchObject({ amountSatang: 1_234_560, txnAt: new Date('2026-11-25T00:30:00Z') });
    const pp = parseSettlementFile(
      'promptpay',
      DAY,
      'HEADER,PROMPTPAY BILL PAYMENT,25/11/2569,TALAT\nDATE,TIME,REF1,REF2,TYPE,AMOUNT\n25/11/2569,06:15:00,REF1,,CREDIT,"1,000.00"\nTRAILER,1,"1,000.00"\n',
    );
    expect(pp[0]).toMatchObject({ reference: 'REF1', txnAt: new Date('2026-11-24T23:15:00Z') });
    const bank = parseSettlementFile(
      'bank',
      DAY,
      'STATEMENT,KRUNGSIAM PARTNER BANK,TALAT,25-11-2569\nPOSTED,REFERENCE,DESCRIPTION,AMOUNT\n25-11-2569 10:00,rfnd_1,REFUND,"1,500.00 DR"\n25-11-2569 23:59,,FEE,15.00 DR\nEND,2,"1,515.00 DR"\n',
    );
    expect(bank.map((l) => [l.kind, l.amountSatang])).toEqual([
      ['refund', 150_000],
      ['fee', 1_500],
    ]);
  });

  const good = (p: SettlementProvider) =>
    formatSettlementFile(
      p,
      DAY,
      [0, 1, 2].map((i) => entry(p, i, 10_050 + i)),
    );
  const withLine = (text: string, n: number, f: (l: string) => string) =>
    text
      .split('\r\n')
      .map((l, i) => (i === n - 1 ? f(l) : l))
      .join('\r\n');
  it.each([
    ['card', 'an amount without decimals', 3, (l: string) => l.replace(/100\.50/, '100')],
    ['card', 'a wrong separator', 3, (l: string) => l.replace(/100\.50/, '"1,00.50"')],
    ['card', 'a time without its zone', 4, (l: string) => l.replace(/-05:00,/, ',')],
    ['card', 'an unknown type', 3, (l: string) => l.replace('CAPTURE', 'CHARGEBACK')],
    ['card', 'another currency', 3, (l: string) => l.replace(/THB$/, 'USD')],
    ['card', 'a missing field', 3, (l: string) => l.replace(/,THB$/, '')],
    ['card', 'a trailer count off by one', 6, (l: string) => l.replace('T,3', 'T,4')],
    [
      'card',
      'a trailer total off by a satang',
      6,
      (l: string) => l.replace(/\.(\d)(\d)/, (_m, a, b) => `.${a}${(Number(b) + 1) % 10}`),
    ],
    ['card', 'the header of another day', 1, (l: string) => l.replace(DAY, '2026-11-24')],
    ['card', 'columns renamed', 2, (l: string) => l.replace('AMOUNT', 'AMT')],
    ['promptpay', 'a Gregorian date', 3, (l: string) => l.replace('2569', '2026')],
    ['promptpay', 'the 31st of November', 3, (l: string) => l.replace(/^\d\d\/11/, '31/11')],
    ['promptpay', 'a time of 24:00', 3, (l: string) => l.replace(/,\d\d:\d\d:\d\d,/, ',24:00:00,')],
    ['promptpay', 'a reference with a space', 3, (l: string) => l.replace('ref_0', 'ref 0')],
    ['bank', 'a credit where a debit is due', 3, (l: string) => l.replace(' DR', ' CR')],
    ['bank', 'no END line', 6, () => 'TOTAL,3,x'],
    ['bank', 'a quote inside a field', 3, (l: string) => l.replace(',ref_0,', ',ref"0,')],
  ] as const)('%s: %s is refused, naming line %i', (p, _what, line, change) => {
    const r = refusal(p, withLine(good(p), line, change));
    expect(r.line).toBe(line);
    expect(r.message).toMatch(new RegExp(`^line ${line}: `));
  });

  it('an empty or truncated file is refused', () => {
    expect(refusal('card', '').message).toMatch(/header, a column line and a trailer/);
    const text = good('promptpay').split('\r\n').slice(0, 4).join('\r\n');
    expect(refusal('promptpay', text).line).toBe(4);
  });

  it('amounts are exact: 0.10 + 0.20 is 30 satang, 1,234,567.89 is 123456789', () => {
    expect(amountOf('0.10', 1) + amountOf('0.20', 1)).toBe(30);
    expect(amountOf('1,234,567.89', 1)).toBe(123_456_789);
    expect(() => amountOf('1,234,567.891', 1)).toThrow(SettlementFileError);
    expect(() => amountOf('-1.00', 1)).toThrow(SettlementFileError);
  });
});
