/**
 * The QR mask chosen in src/payments/qr-image.ts (qrSymbol: all 8 masks scored at once) against
 * qrcode's own choice (QRCode.create without maskPattern: getBestMask), on a thousand
 * deterministic pseudo-random payloads: PromptPay and bill payments built by the project's own
 * builder, numerics, alphanumerics, mixed text and long strings up to versions with version
 * info. Each mask's penalty is qrcode's number, the chosen mask and every module are qrcode's,
 * and qrImage's PNG is byte for byte the old implementation's (qrcode choosing the mask).
 */
import QRCode from 'qrcode';
import { billPaymentPayload, orderReference, promptPayPayload } from '../../src/domain/promptpay';
import { modulesPng, qrImage, qrSymbol } from '../../src/qr-image';

// qrcode's own penalty functions (core/mask-pattern.js; its internals have no published types)
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Penalty = require('qrcode/lib/core/mask-pattern') as Record<
  'getPenaltyN1' | 'getPenaltyN2' | 'getPenaltyN3' | 'getPenaltyN4',
  (modules: QRCode.BitMatrix) => number
>;

/** mulberry32: a small seeded PRNG, so the payloads are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const DIGITS = '0123456789';
const ALPHANUMERIC = `${DIGITS}ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:`;
const TEXT = `${ALPHANUMERIC}abcdefghijklmnopqrstuvwxyz!"#&'(),;<=>?@[]^_{|}~ไทยกขคงจ☃€é`;

function payloads(count: number, seed: number): string[] {
  const random = prng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const text = (alphabet: string, lo: number, hi: number) => {
    let s = '';
    for (let n = int(lo, hi); n > 0; n--) s += alphabet[int(0, alphabet.length - 1)];
    return s;
  };
  const merchant = () => ({
    merchantName: random() < 0.8 ? text(TEXT, 1, 40) : undefined,
    merchantCity: random() < 0.8 ? text(TEXT, 1, 20) : undefined,
    referenceLabel: orderReference(`order-${text(TEXT, 1, 30)}`),
    amountSatang: random() < 0.8 ? int(1, 10_000_000_00) : null,
  });
  const out: string[] = [];
  for (let k = 0; k < count; k++) {
    const kind = k % 8;
    if (kind <= 1) {
      const length = [10, 13, 15][int(0, 2)]; // phone, national id, e-wallet
      const id = text(DIGITS, length, length);
      out.push(promptPayPayload({ id, ...merchant() }).payload);
    } else if (kind <= 3) {
      const ref2 = random() < 0.5 ? text(ALPHANUMERIC.slice(0, 36), 1, 20) : undefined;
      const tags = merchant();
      out.push(
        billPaymentPayload({ billerId: text(DIGITS, 15, 15), ref1: tags.referenceLabel, ref2, ...tags }).payload,
      );
    } else if (kind === 4) out.push(text(DIGITS, 1, 900));
    else if (kind === 5) out.push(text(ALPHANUMERIC, 1, 600));
    else if (kind === 6) out.push(text(TEXT, 1, 400));
    else out.push(text(TEXT, 1, k % 64 === 7 ? 1500 : 300)); // every 8th of these up to version 30 or so
  }
  return out;
}

/** What qrImage returned before: qrcode choosing the mask (`reference`), the same PNG writer. */
function referenceImage(reference: QRCode.QRCode): string {
  const { modules } = reference;
  const png = modulesPng(modules.size, (r, c) => modules.get(r, c) === 1);
  return `data:image/png;base64,${png.toString('base64')}`;
}

// 1,000 payloads: 25 distinct versions up to 35 and 7 ties (3,000 took 21 s of CI, 7 s now)
const CASES = payloads(1000, 20261124).map((payload) => ({
  payload,
  ours: qrSymbol(payload),
  qrcode: QRCode.create(payload, { errorCorrectionLevel: 'M' }),
}));

it('covers small and large symbols, with and without version info, and ties between masks', () => {
  const versions = new Set(CASES.map((c) => c.qrcode.version));
  expect(Math.min(...versions)).toBe(1);
  expect(Math.max(...versions)).toBeGreaterThanOrEqual(30); // version info from 7 on
  expect(versions.size).toBeGreaterThanOrEqual(25);
  // two masks with the lowest penalty, where qrcode takes the first: 7 of these payloads
  const ties = CASES.filter(
    ({ ours: { penalties } }) => penalties.filter((p) => p === Math.min(...penalties)).length > 1,
  );
  expect(ties.length).toBeGreaterThanOrEqual(5);
});

it('chooses the mask qrcode chooses, with the same modules, on 1,000 payloads', () => {
  const differing = CASES.filter(
    ({ ours, qrcode }) =>
      ours.maskPattern !== qrcode.maskPattern || !Buffer.from(ours.modules).equals(qrcode.modules.data),
  ).map(({ payload, ours, qrcode }) => ({ payload, ours: ours.maskPattern, qrcode: qrcode.maskPattern }));
  expect(differing).toEqual([]);
});

it("scores each of the 8 masks with qrcode's penalty (N1 + N2 + N3 + N4), on 100 of them", () => {
  const differing: { payload: string; mask: number; ours: number; qrcode: number }[] = [];
  for (const { payload, ours } of CASES.filter((_, k) => k % 10 === 0)) {
    for (let mask = 0; mask < 8; mask++) {
      const { modules } = QRCode.create(payload, { errorCorrectionLevel: 'M', maskPattern: mask as 0 });
      const qrcode =
        Penalty.getPenaltyN1(modules) +
        Penalty.getPenaltyN2(modules) +
        Penalty.getPenaltyN3(modules) +
        Penalty.getPenaltyN4(modules);
      if (ours.penalties[mask] !== qrcode) differing.push({ payload, mask, ours: ours.penalties[mask], qrcode });
    }
  }
  expect(differing).toEqual([]);
});

it('draws the PNG byte for byte as before (qrcode choosing the mask), on 1,000 payloads', () => {
  const differing = CASES.filter(({ payload, qrcode }) => qrImage(payload) !== referenceImage(qrcode));
  expect(differing.map((c) => c.payload)).toEqual([]);
});
