import fc from 'fast-check';
import { satangToThb, thbToSatang } from '../../src/domain/money';

describe('money', () => {
  it.each([
    [1, 100],
    [250.5, 25050],
    ['99.99', 9999],
    [0.01, 1],
    [1000000, 100000000],
    ['12.50', 1250],
  ])('%p THB -> %p satang', (thb, satang) => {
    expect(thbToSatang(thb)).toEqual({ ok: true, satang });
  });

  it.each([
    [1.234, 'too_many_decimals'],
    [0, 'not_positive'],
    [-5, 'not_positive'],
    [Number.NaN, 'not_a_number'],
    [Number.POSITIVE_INFINITY, 'not_a_number'],
    ['abc', 'not_a_number'],
    [null, 'not_a_number'],
    [1000000.01, 'too_large'],
    ['1e3', 'not_a_number'],
  ])('%p is rejected as %s', (thb, reason) => {
    expect(thbToSatang(thb)).toEqual({ ok: false, reason });
  });

  it('round-trips every satang amount through the wire', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000 }), (satang) => {
        expect(thbToSatang(satangToThb(satang))).toEqual({ ok: true, satang });
      }),
    );
  });
});
