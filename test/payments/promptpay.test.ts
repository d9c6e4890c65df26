/** PromptPay payloads against the shared vectors (field by field and whole string), CRC16, TLV. */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import bill from '../fixtures/vectors/promptpay-bill.json';
import vectors from '../fixtures/vectors/promptpay.json';
import { describePayload, payloadOf } from '../../src/cli/commands/promptpay';
import {
  billerIdOf,
  billPaymentPayload,
  crc16,
  formatAmount,
  isBillRef,
  orderReference,
  paymentReference,
  parseTlv,
  payloadFields,
  promptPayAccount,
  promptPayPayload,
  tlv,
  verifyCrc,
} from '../../src/domain/promptpay';

/** Top-level fields and the merchant-account template (tag 29), parsed, as a map. */
function fieldsOf(payload: string): Record<string, string | Record<string, string>> {
  const out: Record<string, string | Record<string, string>> = {};
  for (const f of parseTlv(payload))
    out[f.tag] = f.tag === '29' ? Object.fromEntries(parseTlv(f.value).map((s) => [s.tag, s.value])) : f.value;
  return out;
}

describe('CRC16 (CCITT-FALSE)', () => {
  it('matches the check value of "123456789"', () => {
    expect(crc16(vectors.crcCheck.input)).toBe(vectors.crcCheck.crc);
  });

  it.each(vectors.cases.map((c) => [c.name, c.payload]))(
    '%s: the vector payload carries a valid CRC',
    (_name, payload) => {
      expect(verifyCrc(payload)).toBe(true);
      expect(crc16(payload.slice(0, -4))).toBe(payload.slice(-4));
    },
  );

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
      fc.property(
        fc.integer({ min: 1, max: 100_000_000 }),
        fc.constantFrom('0801234567', '1111111111111', '012345678901234'),
        (satang, id) => {
          const { payload } = promptPayPayload({ id, amountSatang: satang });
          const f = fieldsOf(payload);
          return (
            verifyCrc(payload) &&
            f['54'] === formatAmount(satang) &&
            f['01'] === '12' &&
            f['53'] === '764' &&
            f['58'] === 'TH'
          );
        },
      ),
    );
  });
});

describe('bill payment (tag 30) and merchant tags', () => {
  type Fields = [string, string | [string, string][]][];
  const mapOf = (fields: Fields) =>
    Object.fromEntries(fields.map(([t, v]) => [t, typeof v === 'string' ? v : Object.fromEntries(v)]));
  /** A payload written out from its fields (in the given order) with its CRC. */
  const written = (fields: Fields) => {
    const body =
      fields.map(([t, v]) => tlv(t, typeof v === 'string' ? v : v.map(([s, x]) => tlv(s, x)).join(''))).join('') +
      '6304';
    return body + crc16(body);
  };

  it.each(bill.built.map((c) => [c.name, c]))(
    '%s: built from the standard, field by field and character by character',
    (_n, c) => {
      const built = billPaymentPayload(c.opts);
      expect(verifyCrc(built.payload)).toBe(true);
      expect(payloadFields(built.payload)).toEqual({ ...mapOf(c.fields as Fields), '63': built.crc });
      expect(built.payload).toBe(written(c.fields as Fields));
      expect(built.dynamic).toBe(c.opts.amountSatang !== undefined);
    },
  );

  it.each(bill.published.map((c) => [c.name, c]))('%s: a published payload, field by field', (_n, c) => {
    expect(verifyCrc(c.payload)).toBe(true);
    const built = billPaymentPayload(c.opts);
    const drop = (f: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(f).filter(([t]) => t !== '63' && !(c.ignore ?? []).includes(t)));
    expect(drop(payloadFields(built.payload))).toEqual(drop(payloadFields(c.payload)));
  });

  it('the same fields in another top-level order are the same payload field by field (EMVCo allows any order)', () => {
    const fields = bill.built[1].fields as Fields;
    const shuffled = [...fields.slice(0, 2), ...fields.slice(2).reverse()];
    expect(payloadFields(written(shuffled))).toEqual(
      payloadFields(written(fields)) && { ...mapOf(fields), '63': written(shuffled).slice(-4) },
    );
  });

  it('merchant name (truncated to 25), city and reference label also go into a tag-29 payload; the vectors stay unchanged without them', () => {
    const base = vectors.cases[6];
    const built = promptPayPayload({
      id: base.id,
      amountSatang: 422,
      merchantName: 'SALA MARKET สาขา 1 SUKHUMVIT 24 BRANCH',
      merchantCity: 'BANGKOK',
      referenceLabel: 'ORD42',
    });
    expect(verifyCrc(built.payload)).toBe(true);
    expect(payloadFields(built.payload)).toEqual({
      ...payloadFields(base.payload),
      '59': 'SALA MARKET 1 SUKHUMVIT 2',
      '60': 'BANGKOK',
      '62': { '05': 'ORD42' },
      '63': built.crc,
    });
  });

  it('refuses a bad biller id or reference', () => {
    expect(() => billPaymentPayload({ billerId: '12345', ref1: 'A' })).toThrow(/biller id/);
    expect(() => billPaymentPayload({ billerId: '010552300935002', ref1: 'lower' })).toThrow(/Ref1/);
    expect(() => billPaymentPayload({ billerId: '010552300935002', ref1: 'A'.repeat(21) })).toThrow(/Ref1/);
    expect(() => billPaymentPayload({ billerId: '010552300935002', ref1: 'A', ref2: 'a-b' })).toThrow(/Ref2/);
    expect(billerIdOf('0105523009350')).toBe('010552300935000');
  });

  it('the order reference is deterministic, alphanumeric, at most 20, and tells orderIds apart', () => {
    expect(orderReference('ORDER123')).toBe('ORDER123');
    expect(orderReference('ord-42')).toBe(orderReference('ord-42'));
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }), fc.string({ minLength: 1, maxLength: 64 }), (a, b) => {
        const ra = orderReference(a);
        return isBillRef(ra) && (a === b || ra !== orderReference(b));
      }),
    );
    expect(orderReference('ord-42')).not.toBe(orderReference('ORD42'));
    expect(orderReference('ord-42')).not.toBe(orderReference('ord_42'));
  });

  it("the payment reference is the payment id's, alphanumeric, 20 characters, and tells payment ids apart", () => {
    expect(paymentReference('pay_0123456789abcdef0123456789abcdef')).toBe('P04HKAPS9LF6UU0938LJ');
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        (a, b) => {
          const [ia, ib] = [a, b].map((x) => `pay_${Buffer.from(x).toString('hex')}`);
          const ra = paymentReference(ia);
          const sameHead = ia.slice(0, 28) === ib.slice(0, 28);
          return isBillRef(ra) && ra.length === 20 && (sameHead || ra !== paymentReference(ib));
        },
      ),
    );
    expect(() => paymentReference('ORD-1')).toThrow(/not a payment id/);
  });
});

describe('npm run promptpay', () => {
  it('prints the payload alone on its last line, for an id and for a biller', () => {
    for (const c of vectors.cases) {
      const flags = { id: c.id, ...(c.amount === null ? {} : { amount: String(c.amount) }) };
      expect(payloadOf(flags).payload).toBe(c.payload);
    }
    const p = payloadOf({
      biller: '010552300935002',
      ref1: 'INV1',
      ref2: 'X2',
      amount: '10',
      name: 'SALA',
      city: 'BANGKOK',
    });
    expect(payloadFields(p.payload)).toMatchObject({
      '30': { '01': '010552300935002', '02': 'INV1', '03': 'X2' },
      '54': '10.00',
      '59': 'SALA',
      '60': 'BANGKOK',
    });
    expect(() => payloadOf({ biller: '010552300935002' })).toThrow(/ref1/);
  });

  it('--parse lists the fields and checks the CRC', () => {
    const good = describePayload(bill.published[1].payload);
    expect(good.crcValid).toBe(true);
    expect(good.lines).toContain('  02  1615106018110503002   Ref1');
    const bad = describePayload(bill.published[1].payload.slice(0, -1) + '0');
    expect(bad.crcValid).toBe(false);
    expect(bad.lines.at(-1)).toBe('CRC INVALID');
  });

  it('runs as a command: the payload alone on the last line of stdout', () => {
    // as the docs print it: `npm run -s promptpay -- <args>` (through scripts/run.cjs)
    const out = execFileSync('npm', ['run', '-s', 'promptpay', '--', '--id', '000-000-0000', '--amount', '4.22'], {
      encoding: 'utf8',
    });
    expect(out.trim().split('\n').at(-1)).toBe(vectors.cases[6].payload);
  });
});
