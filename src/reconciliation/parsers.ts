/**
 * The settlement file of each provider, one format each (docs/reconciliation.md "Formats"),
 * parsed strictly by csv-parse plus a check of every field: any fault throws a
 * SettlementFileError naming the line, so a malformed file imports nothing. Every file has a
 * header line (provider and settlement day), a column line, detail lines and a trailer line
 * (count and signed total), which must agree with the details.
 *  - card: ISO timestamps in the acquirer's zone (New York, -05:00), plain amounts;
 *  - promptpay: Buddhist-era dates (dd/mm/2569) and Bangkok times, amounts with separators;
 *  - bank: BE dates (dd-mm-2569 HH:MM, Bangkok), amounts "1,234.50 DR".
 */
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { bangkokDayStart, type SettlementProvider } from './index';

export type LineKind = 'payment' | 'refund' | 'fee';

export interface SettlementLine {
  /** 1-based line of the file */
  lineNo: number;
  kind: LineKind;
  /** the provider's reference of what it settled (charge, refund, Ref1); null on a fee */
  reference: string | null;
  /** positive satang; the kind gives the direction */
  amountSatang: number;
  txnAt: Date;
}

export class SettlementFileError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

const MAX_LINES = 200_000;
const REF = /^[A-Za-z0-9_.:-]{1,64}$/;
/** "1,234.50" or "1234.50" (exactly 2 decimals) -> satang; anything else refused. */
export function amountOf(text: string, line: number): number {
  const m = /^(\d{1,3}(?:,\d{3})+|\d+)\.(\d{2})$/.exec(text);
  if (!m) throw new SettlementFileError(line, `amount "${text}" is not like 1,234.50`);
  const satang = Number(m[1].replace(/,/g, '')) * 100 + Number(m[2]);
  if (!Number.isSafeInteger(satang)) throw new SettlementFileError(line, `amount "${text}" is too large`);
  return satang;
}
const signed = (l: SettlementLine) => (l.kind === 'payment' ? l.amountSatang : -l.amountSatang);
const fmt = (satang: number) => {
  const a = Math.abs(satang);
  return `${satang < 0 ? '-' : ''}${Math.floor(a / 100).toLocaleString('en-US')}.${String(a % 100).padStart(2, '0')}`;
};

/** Buddhist-era day dd/mm/yyyy (or with -) -> YYYY-MM-DD (CE). */
function beDay(text: string, sep: '/' | '-', line: number): string {
  const m = new RegExp(`^(\\d{2})\\${sep}(\\d{2})\\${sep}(\\d{4})$`).exec(text);
  const ce = m ? `${Number(m[3]) - 543}-${m[2]}-${m[1]}` : '';
  if (!m || Number(m[3]) < 2500 || !validDay(ce))
    throw new SettlementFileError(line, `date "${text}" is not a Buddhist-era dd${sep}mm${sep}yyyy`);
  return ce;
}
const validDay = (d: string) => {
  const t = Date.parse(`${d}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d;
};
function bangkokTime(day: string, time: string, line: number): Date {
  const m = /^([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/.exec(time);
  if (!m) throw new SettlementFileError(line, `time "${time}" is not HH:MM[:SS]`);
  return new Date(
    bangkokDayStart(day).getTime() + ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3] ?? 0)) * 1000,
  );
}

interface Format {
  header: (f: string[], line: number) => string; // the settlement day it names
  columns: string[];
  detailTag: string;
  detail: (f: string[], line: number) => SettlementLine;
  trailer: (f: string[], line: number) => { count: number; totalSatang: number };
}

const expectFields = (f: string[], n: number, line: number, what: string) => {
  if (f.length !== n) throw new SettlementFileError(line, `${what} has ${f.length} fields, expected ${n}`);
};
const reference = (text: string, line: number) => {
  if (!REF.test(text)) throw new SettlementFileError(line, `reference "${text}" is not 1-64 letters, digits or ._:-`);
  return text;
};
const count = (text: string, line: number) => {
  if (!/^\d{1,7}$/.test(text)) throw new SettlementFileError(line, `count "${text}" is not a number`);
  return Number(text);
};

const card: Format = {
  header(f, line) {
    expectFields(f, 5, line, 'the header');
    if (f[0] !== 'H' || f[1] !== 'SIAMCARD ACQUIRING')
      throw new SettlementFileError(line, 'not a card settlement header');
    if (!validDay(f[3])) throw new SettlementFileError(line, `settlement date "${f[3]}" is not YYYY-MM-DD`);
    return f[3];
  },
  columns: ['RT', 'TXN_TIME', 'REFERENCE', 'TYPE', 'AMOUNT', 'CURRENCY'],
  detailTag: 'D',
  detail(f, line) {
    expectFields(f, 6, line, 'a detail line');
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/.test(f[1]) || Number.isNaN(Date.parse(f[1])))
      throw new SettlementFileError(line, `time "${f[1]}" is not ISO 8601 with an offset`);
    if (f[5] !== 'THB') throw new SettlementFileError(line, `currency "${f[5]}" is not THB`);
    const kind = ({ CAPTURE: 'payment', REFUND: 'refund', FEE: 'fee' } as const)[f[3] as 'FEE'];
    if (!kind) throw new SettlementFileError(line, `type "${f[3]}" is not CAPTURE, REFUND or FEE`);
    return {
      lineNo: line,
      kind,
      reference: kind === 'fee' ? null : reference(f[2], line),
      amountSatang: amountOf(f[4], line),
      txnAt: new Date(f[1]),
    };
  },
  trailer(f, line) {
    expectFields(f, 3, line, 'the trailer');
    return { count: count(f[1], line), totalSatang: signedAmount(f[2], line) };
  },
};

const promptpay: Format = {
  header(f, line) {
    expectFields(f, 4, line, 'the header');
    if (f[0] !== 'HEADER' || f[1] !== 'PROMPTPAY BILL PAYMENT')
      throw new SettlementFileError(line, 'not a PromptPay settlement header');
    return beDay(f[2], '/', line);
  },
  columns: ['DATE', 'TIME', 'REF1', 'REF2', 'TYPE', 'AMOUNT'],
  detailTag: '',
  detail(f, line) {
    expectFields(f, 6, line, 'a detail line');
    const kind = ({ CREDIT: 'payment', FEE: 'fee' } as const)[f[4] as 'FEE'];
    if (!kind) throw new SettlementFileError(line, `type "${f[4]}" is not CREDIT or FEE`);
    return {
      lineNo: line,
      kind,
      reference: kind === 'fee' ? null : reference(f[2], line),
      amountSatang: amountOf(f[5], line),
      txnAt: bangkokTime(beDay(f[0], '/', line), f[1], line),
    };
  },
  trailer(f, line) {
    expectFields(f, 3, line, 'the trailer');
    if (f[0] !== 'TRAILER') throw new SettlementFileError(line, 'the last line is not the TRAILER');
    return { count: count(f[1], line), totalSatang: signedAmount(f[2], line) };
  },
};

const drcr = (text: string, line: number) => {
  const m = /^(.+) (DR|CR)$/.exec(text);
  if (!m) throw new SettlementFileError(line, `amount "${text}" is not like 1,234.50 DR`);
  return { satang: amountOf(m[1], line), debit: m[2] === 'DR' };
};
const bank: Format = {
  header(f, line) {
    expectFields(f, 4, line, 'the header');
    if (f[0] !== 'STATEMENT' || f[1] !== 'KRUNGSIAM PARTNER BANK')
      throw new SettlementFileError(line, 'not a partner bank statement header');
    return beDay(f[3], '-', line);
  },
  columns: ['POSTED', 'REFERENCE', 'DESCRIPTION', 'AMOUNT'],
  detailTag: '',
  detail(f, line) {
    expectFields(f, 4, line, 'a detail line');
    const [d, t] = f[0].split(' ');
    const kind = ({ REFUND: 'refund', FEE: 'fee' } as const)[f[2] as 'FEE'];
    if (!kind) throw new SettlementFileError(line, `description "${f[2]}" is not REFUND or FEE`);
    const a = drcr(f[3], line);
    if (!a.debit) throw new SettlementFileError(line, `a ${f[2]} is a debit (DR)`);
    return {
      lineNo: line,
      kind,
      reference: kind === 'fee' ? null : reference(f[1], line),
      amountSatang: a.satang,
      txnAt: bangkokTime(beDay(d ?? '', '-', line), t ?? '', line),
    };
  },
  trailer(f, line) {
    expectFields(f, 3, line, 'the trailer');
    if (f[0] !== 'END') throw new SettlementFileError(line, 'the last line is not END');
    const a = drcr(f[2], line);
    return { count: count(f[1], line), totalSatang: a.debit ? -a.satang : a.satang };
  },
};

/** "-1,234.50" or "1,234.50" -> signed satang */
function signedAmount(text: string, line: number): number {
  return text.startsWith('-') ? -amountOf(text.slice(1), line) : amountOf(text, line);
}

const FORMATS: Record<SettlementProvider, Format> = { card, promptpay, bank };

/**
 * Every line of `text`, the settlement file of `provider` for `day`, or a SettlementFileError:
 * the header names another day, a field is wrong, or the trailer's count or total disagrees.
 */
export function parseSettlementFile(provider: SettlementProvider, day: string, text: string): SettlementLine[] {
  const fmtOf = FORMATS[provider];
  let rows: { record: string[]; info: { lines: number } }[];
  try {
    rows = parse(text.replace(/^\uFEFF/, ''), {
      relax_column_count: true,
      skip_empty_lines: true,
      info: true,
      to: MAX_LINES,
    }) as unknown as typeof rows;
  } catch (e) {
    const err = e as { lines?: number; message: string };
    throw new SettlementFileError(err.lines ?? 0, `not CSV: ${err.message}`);
  }
  if (rows.length < 3) throw new SettlementFileError(rows.length, 'a file has a header, a column line and a trailer');
  const headerDay = fmtOf.header(rows[0].record, rows[0].info.lines);
  if (headerDay !== day)
    throw new SettlementFileError(rows[0].info.lines, `the header is for ${headerDay}, the file is the one of ${day}`);
  const cols = rows[1].record;
  if (cols.join(',') !== fmtOf.columns.join(','))
    throw new SettlementFileError(
      rows[1].info.lines,
      `columns are ${cols.join(',')}, expected ${fmtOf.columns.join(',')}`,
    );
  const lines: SettlementLine[] = [];
  for (const r of rows.slice(2, -1)) {
    if (fmtOf.detailTag && r.record[0] !== fmtOf.detailTag)
      throw new SettlementFileError(r.info.lines, `a detail line starts with ${fmtOf.detailTag}`);
    lines.push(fmtOf.detail(r.record, r.info.lines));
  }
  const last = rows[rows.length - 1];
  const t = fmtOf.trailer(last.record, last.info.lines);
  if (t.count !== lines.length)
    throw new SettlementFileError(last.info.lines, `the trailer counts ${t.count} lines, the file has ${lines.length}`);
  const total = lines.reduce((s, l) => s + signed(l), 0);
  if (t.totalSatang !== total)
    throw new SettlementFileError(
      last.info.lines,
      `the trailer's total ${fmt(t.totalSatang)} is not the lines' ${fmt(total)}`,
    );
  return lines;
}

// ---- writing: the sandbox providers' files and the tests' ----

export type SettlementEntry = Omit<SettlementLine, 'lineNo'>;

/** The parts of `at` in a zone `offsetHours` east of UTC: [YYYY, MM, DD, hh, mm, ss]. */
const partsIn = (at: Date, offsetHours: number) => {
  const s = new Date(at.getTime() + offsetHours * 3_600_000).toISOString();
  return [s.slice(0, 4), s.slice(5, 7), s.slice(8, 10), s.slice(11, 13), s.slice(14, 16), s.slice(17, 19)];
};
const be = (ceDay: string, sep: string) => {
  const [y, m, d] = ceDay.split('-');
  return [d, m, String(Number(y) + 543)].join(sep);
};

/** The file `provider` would send for `day` with these entries (what parseSettlementFile reads back). */
export function formatSettlementFile(provider: SettlementProvider, day: string, entries: SettlementEntry[]): string {
  const total = entries.reduce((s, e) => s + signed({ ...e, lineNo: 0 }), 0);
  const money = (satang: number) => fmt(satang);
  let rows: string[][];
  if (provider === 'card') {
    const type = { payment: 'CAPTURE', refund: 'REFUND', fee: 'FEE' } as const;
    rows = [
      ['H', 'SIAMCARD ACQUIRING', 'TALAT', day, '-05:00'],
      card.columns,
      ...entries.map((e) => {
        const [y, mo, d, h, mi, se] = partsIn(e.txnAt, -5);
        return [
          'D',
          `${y}-${mo}-${d}T${h}:${mi}:${se}-05:00`,
          e.reference ?? '',
          type[e.kind],
          money(e.amountSatang),
          'THB',
        ];
      }),
      ['T', String(entries.length), money(total)],
    ];
  } else if (provider === 'promptpay') {
    rows = [
      ['HEADER', 'PROMPTPAY BILL PAYMENT', be(day, '/'), 'TALAT'],
      promptpay.columns,
      ...entries.map((e) => {
        const [y, mo, d, h, mi, se] = partsIn(e.txnAt, 7);
        return [
          be(`${y}-${mo}-${d}`, '/'),
          `${h}:${mi}:${se}`,
          e.reference ?? '',
          '',
          e.kind === 'fee' ? 'FEE' : 'CREDIT',
          money(e.amountSatang),
        ];
      }),
      ['TRAILER', String(entries.length), money(total)],
    ];
  } else {
    rows = [
      ['STATEMENT', 'KRUNGSIAM PARTNER BANK', 'TALAT', be(day, '-')],
      bank.columns,
      ...entries.map((e) => {
        const [y, mo, d, h, mi] = partsIn(e.txnAt, 7);
        return [
          `${be(`${y}-${mo}-${d}`, '-')} ${h}:${mi}`,
          e.reference ?? '',
          e.kind === 'fee' ? 'FEE' : 'REFUND',
          `${money(e.amountSatang)} DR`,
        ];
      }),
      ['END', String(entries.length), `${money(Math.abs(total))} ${total <= 0 ? 'DR' : 'CR'}`],
    ];
  }
  return stringify(rows, { record_delimiter: 'windows' });
}
