/** The cost rules of src/payments/cost.ts on hand-made catalog rows (integer satang throughout). */
import fc from 'fast-check';
import {
  calculateCost,
  choosePromotion,
  deliveryCharges,
  vatPortion,
  type CatalogProduct,
  type CatalogPromotion,
} from '../../src/payments/cost';

const T0 = Date.parse('2026-12-01T00:00:00Z');
const product = (id: string, priceSatang: number, o: Partial<CatalogProduct> = {}): CatalogProduct => ({
  productId: id,
  groupId: id.split('-')[0],
  nameEn: `Product ${id}`,
  nameTh: `สินค้า ${id}`,
  priceSatang,
  vatable: true,
  weightGrams: 500,
  ...o,
});
const promo = (o: Partial<CatalogPromotion> & Pick<CatalogPromotion, 'promotionId' | 'type'>): CatalogPromotion => ({
  groupIds: [],
  productIds: null,
  buyQuantity: 1,
  payPriceSatang: null,
  percentBasisPoints: null,
  startsAt: T0 - 86_400_000,
  endsAt: T0 + 86_400_000,
  titleEn: o.promotionId,
  titleTh: o.promotionId,
  ...o,
});
const run = (
  items: [string, number][],
  products: CatalogProduct[],
  promotions: CatalogPromotion[] = [],
  deliveryOption: 'standard' | 'express' | 'pickup' = 'pickup',
) =>
  calculateCost({
    items: items.map(([productId, quantity]) => ({ productId, quantity })),
    products: new Map(products.map((p) => [p.productId, p])),
    promotions,
    deliveryOption,
    paymentMethod: 'qr',
    at: T0,
  });

describe('multi_buy', () => {
  const a = product('GA-1', 4500);
  const b = product('GB-1', 5200);
  const twoFor85 = promo({
    promotionId: 'PR1',
    type: 'multi_buy',
    groupIds: ['GA', 'GB'],
    productIds: ['GA-1', 'GB-1'],
    buyQuantity: 2,
    payPriceSatang: 8500,
  });

  it('two for 85 THB: mixed items, most expensive grouped first, saving spread over the lines', () => {
    const r = run(
      [
        ['GA-1', 2],
        ['GB-1', 1],
      ],
      [a, b],
      [twoFor85],
    );
    // units: 5200, 4500 | 4500 -> one deal (9700 - 8500 = 1200), one unit at full price
    expect(r.totals.itemsGross.satang).toBe(2 * 4500 + 5200);
    expect(r.totals.discount.satang).toBe(1200);
    expect(r.totals.items.satang).toBe(14200 - 1200);
    const [la, lb] = r.lines;
    expect(la.discount.satang + lb.discount.satang).toBe(1200);
    expect(lb.discount.satang).toBe(
      Math.floor((1200 * 5200) / 9700) + (1200 - Math.floor((1200 * 5200) / 9700) - Math.floor((1200 * 4500) / 9700)),
    );
    expect(la.promotion).toEqual({ promotionId: 'PR1', type: 'multi_buy', title: 'PR1', titleTh: 'PR1' });
    expect(r.promotions).toEqual([
      {
        promotionId: 'PR1',
        type: 'multi_buy',
        title: 'PR1',
        titleTh: 'PR1',
        applications: 1,
        discount: { satang: 1200, thb: 12 },
      },
    ]);
  });

  it('a single unit does not trigger the deal', () => {
    const r = run([['GA-1', 1]], [a], [twoFor85]);
    expect(r.totals.discount.satang).toBe(0);
    expect(r.lines[0].promotion).toBeNull();
    expect(r.promotions).toEqual([]);
  });

  it('applies as many times as the quantity allows', () => {
    const r = run([['GA-1', 5]], [a], [twoFor85]);
    expect(r.promotions[0].applications).toBe(2);
    expect(r.totals.items.satang).toBe(2 * 8500 + 4500);
  });

  it('skips a deal that would cost more than the regular price', () => {
    const cheap = product('GA-2', 3000);
    const deal = promo({
      promotionId: 'PR9',
      type: 'multi_buy',
      groupIds: ['GA'],
      buyQuantity: 2,
      payPriceSatang: 8500,
    });
    expect(run([['GA-2', 2]], [cheap], [deal]).totals.discount.satang).toBe(0);
  });
});

describe('percent_off and fixed_price', () => {
  it('percent off each line, rounded half up to the satang', () => {
    const p = product('GP-1', 29_990, { vatable: false });
    const r = run(
      [['GP-1', 3]],
      [p],
      [promo({ promotionId: 'PR2', type: 'percent_off', groupIds: ['GP'], percentBasisPoints: 1500 })],
    );
    // 89,970 * 15% = 13,495.5 -> 13,496
    expect(r.lines[0].discount.satang).toBe(13_496);
    expect(r.lines[0].total).toEqual({ satang: 76_474, thb: 764.74 });
  });

  it('fixed price per unit for the listed variant only', () => {
    const p3 = product('GF-3', 14_900);
    const p1 = product('GF-1', 5_000);
    const r = run(
      [
        ['GF-3', 2],
        ['GF-1', 1],
      ],
      [p3, p1],
      [
        promo({
          promotionId: 'PR3',
          type: 'fixed_price',
          groupIds: ['GF'],
          productIds: ['GF-3'],
          payPriceSatang: 13_900,
        }),
      ],
    );
    expect(r.lines.map((l) => l.discount.satang)).toEqual([2_000, 0]);
  });

  it('ignores promotions outside their dates', () => {
    const p = product('GP-1', 10_000);
    const old = promo({
      promotionId: 'PR4',
      type: 'percent_off',
      groupIds: ['GP'],
      percentBasisPoints: 5000,
      startsAt: T0 - 10,
      endsAt: T0 - 1,
    });
    expect(run([['GP-1', 1]], [p], [old]).totals.discount.satang).toBe(0);
  });

  it('of overlapping promotions, takes the lowest effective unit price', () => {
    const p = product('GP-1', 10_000);
    const tenPct = promo({ promotionId: 'PR5', type: 'percent_off', groupIds: ['GP'], percentBasisPoints: 1000 });
    const fixed = promo({ promotionId: 'PR6', type: 'fixed_price', groupIds: ['GP'], payPriceSatang: 8_500 });
    expect(choosePromotion(p, [tenPct, fixed], T0)?.promotionId).toBe('PR6');
  });
});

describe('VAT, delivery and totals', () => {
  it('VAT is 7/107 of vatable amounts, rounded half up; exempt goods carry none', () => {
    expect(vatPortion(10_700)).toBe(700);
    expect(vatPortion(100)).toBe(7); // 6.54 -> 7
    expect(vatPortion(50)).toBe(3); // 3.27 -> 3
    const r = run(
      [
        ['GV-1', 1],
        ['GE-1', 1],
      ],
      [product('GV-1', 10_700), product('GE-1', 5_000, { vatable: false })],
      [],
      'standard',
    );
    expect(r.lines.map((l) => l.vat.satang)).toEqual([700, 0]);
    expect(r.charges[0]).toMatchObject({ code: 'delivery', amount: { satang: 4_000, thb: 40 }, vatable: true });
    expect(r.totals.vatable.satang).toBe(10_700 + 4_000);
    expect(r.totals.vat.satang).toBe(vatPortion(14_700));
    expect(r.totals.exempt.satang).toBe(5_000);
    expect(r.totals.total.satang).toBe(10_700 + 5_000 + 4_000);
  });

  it('standard delivery is free from 1,000 THB of goods after discounts; express is not; heavy orders pay per started 5 kg', () => {
    expect(deliveryCharges('standard', 99_999, 1000)[0].amount.satang).toBe(4_000);
    expect(deliveryCharges('standard', 100_000, 1000)[0].amount.satang).toBe(0);
    expect(deliveryCharges('express', 500_000, 1000)[0].amount.satang).toBe(9_900);
    expect(deliveryCharges('pickup', 0, 99_000)).toHaveLength(1);
    expect(deliveryCharges('standard', 0, 20_000)).toHaveLength(1);
    expect(deliveryCharges('standard', 0, 20_001)[1]).toMatchObject({
      code: 'heavy_surcharge',
      amount: { satang: 2_000 },
    });
    expect(deliveryCharges('express', 0, 30_001)[1].amount.satang).toBe(6_000);
  });

  it('totals add up for any basket (property)', () => {
    const products = [product('GA-1', 4500), product('GB-1', 5200, { vatable: false }), product('GC-1', 12_345)];
    const promotions = [
      promo({ promotionId: 'PR1', type: 'multi_buy', groupIds: ['GA', 'GB'], buyQuantity: 2, payPriceSatang: 8500 }),
      promo({ promotionId: 'PR2', type: 'percent_off', groupIds: ['GC'], percentBasisPoints: 1250 }),
    ];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 50 }),
        fc.constantFrom('standard', 'express', 'pickup'),
        (qa, qb, qc, opt) => {
          const r = run(
            [
              ['GA-1', qa],
              ['GB-1', qb],
              ['GC-1', qc],
            ],
            products,
            promotions,
            opt as 'standard',
          );
          const linesTotal = r.lines.reduce((s, l) => s + l.total.satang, 0);
          return (
            r.lines.every(
              (l) =>
                l.total.satang === l.gross.satang - l.discount.satang && l.discount.satang >= 0 && l.total.satang >= 0,
            ) &&
            linesTotal === r.totals.items.satang &&
            r.totals.total.satang === r.totals.items.satang + r.totals.charges.satang &&
            r.totals.vatable.satang + r.totals.exempt.satang === r.totals.total.satang &&
            r.promotions.reduce((s, p) => s + p.discount.satang, 0) === r.totals.discount.satang &&
            Math.round(r.totals.total.thb * 100) === r.totals.total.satang
          );
        },
      ),
    );
  });
});
