/** The verification primitives of the callback API: canonical JSON, HMAC, timestamps, IP allow-lists. */
import fc from 'fast-check';
import vectors from '../fixtures/vectors/hmac-sha256.json';
import { signedPayloadText } from '../../src/callbacks/verify';
import { canonicalJson } from '../../src/canonical-json';
import { proofJson } from '../../src/proofs';
import { clientAddress, compileCidrs, formatAddress, inCidrs } from '../../src/http/ip';
import {
  hexDigestEquals,
  hmacSha256Hex,
  signatureHeaders,
  signPayload,
  verifyFieldSignature,
  verifyHeaderSignature,
} from '../../src/callbacks/verify';
import { assertFresh, parseIsoUtc, parseUnixSeconds } from '../../src/callbacks/verify';
import { AppError } from '../../src/domain/errors';

/**
 * Any JSON value, dates and undefined members among them, keys integer-like or of any UTF-16 code
 * unit (lone surrogates included: JSON.stringify escapes those), plus `keys` and `values`.
 */
const anyValue = (keys: fc.Arbitrary<string>[] = [], values: fc.Arbitrary<unknown>[] = []) => {
  const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
  const key = fc.oneof(fc.string({ unit }), fc.nat().map(String), ...keys);
  return fc.letrec((tie) => ({
    any: fc.oneof(
      fc.jsonValue({ stringUnit: unit }),
      fc.date({ noInvalidDate: true }),
      fc.constant(undefined),
      ...values,
      fc.array(tie('any'), { maxLength: 4 }),
      fc.dictionary(key, tie('any'), { maxKeys: 4 }),
    ),
  })).any;
};

describe('HMAC-SHA256 hex', () => {
  it.each(vectors.cases)('matches the published vector for key %#', (c) => {
    expect(hmacSha256Hex(c.key, c.message)).toBe(c.hex);
  });

  it('compares digests only when they are 64 hex digits, in any case', () => {
    const d = hmacSha256Hex('k', 'm');
    expect(hexDigestEquals(d, d)).toBe(true);
    expect(hexDigestEquals(d, d.toUpperCase())).toBe(true);
    expect(hexDigestEquals(d, d.slice(0, 63))).toBe(false);
    expect(hexDigestEquals(d, `${d}00`)).toBe(false);
    expect(hexDigestEquals(d, `${d.slice(0, 63)}g`)).toBe(false);
    expect(hexDigestEquals(d, 42)).toBe(false);
    expect(hexDigestEquals(d, undefined)).toBe(false);
  });
});

describe('canonical JSON', () => {
  it('sorts keys recursively and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe(
      '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('writes numbers and strings as JSON.stringify (RFC 8785 for parsed JSON)', () => {
    expect(canonicalJson(JSON.parse('{"amount": 100.50, "n": 1e3, "s": "ไทย\\u0001\\"", "t": true, "u": null}'))).toBe(
      '{"amount":100.5,"n":1000,"s":"ไทย\\u0001\\"","t":true,"u":null}',
    );
  });

  it("is the earlier signatures' and keys' text: every key sorted (any JSON, dates, undefined members)", () => {
    // the earlier form (src/callbacks/verify.ts, the idempotency keys), after a JSON round trip
    const text = (v: unknown): string =>
      Array.isArray(v)
        ? `[${v.map(text).join(',')}]`
        : v && typeof v === 'object'
          ? `{${Object.keys(v)
              .sort()
              .map((k) => `${JSON.stringify(k)}:${text((v as Record<string, unknown>)[k])}`)
              .join(',')}}`
          : JSON.stringify(v);
    const before = (v: unknown) => text(JSON.parse(JSON.stringify(v ?? null)));
    fc.assert(
      fc.property(anyValue(), (v) => canonicalJson(v) === before(v)),
      { numRuns: 2000 },
    );
    expect(canonicalJson({ '': 0, 10: 'b', 9: 'a' })).toBe('{"":0,"10":"b","9":"a"}');
    expect(() =>
      canonicalJson(
        Object.assign(
          {},
          {
            get loop() {
              return this;
            },
          },
        ),
      ),
    ).toThrow(TypeError);
  });

  it('the start proofs keep the text they were first signed over: integer-like keys first', () => {
    expect(proofJson({ '': 0, 10: 'b', 9: 'a', b: { y: 1, x: 2 } })).toBe('{"9":"a","10":"b","":0,"b":{"x":2,"y":1}}');
    // the form the proofs were first signed with: a JSON round trip, keys sorted into new objects
    const sorted = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(sorted)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
            )
          : v;
    const first = (v: unknown) => JSON.stringify(sorted(JSON.parse(JSON.stringify(v ?? null))));
    const exotic = [fc.constant('__proto__')];
    fc.assert(
      fc.property(
        anyValue(exotic, [fc.constant(new Number(-0)), fc.constant(new String('boxed'))]),
        (v) => proofJson(v) === first(v),
      ),
      { numRuns: 2000 },
    );
  });

  it('signs everything but the signature field', () => {
    expect(signedPayloadText({ signature: 'x', b: 2, a: 1 })).toBe('{"a":1,"b":2}');
  });

  it('is the same text for any key order of the same object', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        return (
          canonicalJson(obj) === canonicalJson(reversed) &&
          canonicalJson(JSON.parse(canonicalJson(obj))) === canonicalJson(obj)
        );
      }),
    );
  });
});

describe('signatures', () => {
  const secret = 'a-test-secret-of-the-qr-provider';
  const payload = {
    paymentId: 'pay_1',
    status: 'success',
    amount: 250.5,
    orderId: 'ORD-1',
    timestamp: '2026-11-22T08:00:00Z',
  };

  it('a signed payload verifies; any change to a signed field or the secret does not', () => {
    const signed = signPayload(secret, payload);
    expect(verifyFieldSignature(secret, signed)).toBe(true);
    expect(verifyFieldSignature(`${secret}x`, signed)).toBe(false);
    expect(verifyFieldSignature(secret, { ...signed, amount: 2505 })).toBe(false);
    expect(verifyFieldSignature(secret, { ...signed, status: 'failed' })).toBe(false);
    expect(verifyFieldSignature(secret, { ...signed, extra: 1 })).toBe(false);
    expect(verifyFieldSignature(secret, { ...payload })).toBe(false);
  });

  it('header signatures cover the timestamp and every byte of the raw body', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.nat({ max: 2 ** 31 }), fc.nat(), (body, ts, pos) => {
        const h = signatureHeaders(secret, body, ts);
        if (!verifyHeaderSignature(secret, h['X-Timestamp'], body, h['X-Signature'])) return false;
        if (verifyHeaderSignature(secret, String(ts + 1), body, h['X-Signature'])) return false;
        const i = pos % body.length;
        const mutated = body.slice(0, i) + String.fromCharCode(body.charCodeAt(i) ^ 1) + body.slice(i + 1);
        return !verifyHeaderSignature(secret, h['X-Timestamp'], mutated, h['X-Signature']);
      }),
    );
  });
});

describe('timestamps', () => {
  const window = { maxAgeSeconds: 300, maxFutureSeconds: 60 };
  const now = Date.parse('2026-11-22T08:00:00Z');
  const code = (fn: () => void) => {
    try {
      fn();
      return 'accepted';
    } catch (e) {
      return (e as AppError).code;
    }
  };

  it.each([
    '2026-11-22T08:00:00Z',
    '2026-11-22T08:00:00.123Z',
    '2026-11-22T08:00:00+00:00',
    '2026-11-22T08:00:00.5-0000',
  ])('ISO 8601 UTC %s parses', (t) => {
    expect(parseIsoUtc(t)).toBeGreaterThan(0);
  });

  it.each([
    '2026-11-22T08:00:00',
    '2026-11-22T15:00:00+07:00',
    '2026-11-22 08:00:00Z',
    '2026-02-30T08:00:00Z',
    'yesterday',
    '',
    1764000000,
  ])('%p is not an ISO 8601 UTC timestamp', (t) => {
    expect(parseIsoUtc(t)).toBeUndefined();
  });

  it('unix seconds are digits only', () => {
    expect(parseUnixSeconds('1764000000')).toBe(1764000000000);
    expect(parseUnixSeconds('1764000000.5')).toBeUndefined();
    expect(parseUnixSeconds('-1')).toBeUndefined();
  });

  it('accepts exactly the window [now - 300 s, now + 60 s]', () => {
    expect(code(() => assertFresh(now - 300_000, window, now))).toBe('accepted');
    expect(code(() => assertFresh(now - 300_001, window, now))).toBe('INVALID_TIMESTAMP');
    expect(code(() => assertFresh(now + 60_000, window, now))).toBe('accepted');
    expect(code(() => assertFresh(now + 60_001, window, now))).toBe('INVALID_TIMESTAMP');
    expect(code(() => assertFresh(undefined, window, now))).toBe('INVALID_TIMESTAMP');
  });
});

describe('client address and allow-lists', () => {
  const allow = compileCidrs(['203.0.113.0/24', '2001:db8::/32', '::ffff:198.51.100.0/120']);
  const none = compileCidrs([]);
  const proxies = compileCidrs(['10.0.0.0/8', 'fd00::/8']);

  it.each([
    ['203.0.113.9', true],
    ['::ffff:203.0.113.9', true],
    ['203.0.114.1', false],
    ['2001:db8::1', true],
    ['2001:db9::1', false],
    ['198.51.100.20', true],
    ['127.0.0.1', false],
  ])('%s allowed: %s', (ip, ok) => {
    expect(inCidrs(clientAddress(ip, undefined, none), allow)).toBe(ok);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    expect(formatAddress(clientAddress('198.18.0.1', '203.0.113.9', proxies))).toBe('198.18.0.1');
  });

  it('takes the right-most untrusted hop when the peer is a trusted proxy', () => {
    expect(formatAddress(clientAddress('10.1.2.3', '203.0.113.9', proxies))).toBe('203.0.113.9');
    expect(formatAddress(clientAddress('10.1.2.3', '203.0.113.9, 10.9.9.9', proxies))).toBe('203.0.113.9');
    // a client that prepends a spoofed allowed address is still seen as itself
    expect(formatAddress(clientAddress('10.1.2.3', '203.0.113.9, 192.0.2.66', proxies))).toBe('192.0.2.66');
    expect(formatAddress(clientAddress('fd00::1', '2001:db8::5', proxies))).toBe('2001:db8::5');
  });

  it('a garbled chain from a trusted proxy yields no address', () => {
    expect(clientAddress('10.1.2.3', 'not-an-ip', proxies)).toBeUndefined();
    expect(inCidrs(clientAddress('10.1.2.3', 'not-an-ip', proxies), allow)).toBe(false);
  });
});
