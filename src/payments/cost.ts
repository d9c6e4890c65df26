/**
 * Order cost calculation for POST /calculate-cost: pure code over catalog rows, integer satang;
 * the rules are README "Payment API"'s. In short: shelf prices include VAT (7%) for vatable
 * products; at most one promotion per product, the one with the lowest effective unit price
 * (fixed_price, percent_off, multi_buy: the most expensive units grouped first, a deal's saving
 * spread over its units by price); delivery pickup free, standard 40 THB (free from 1,000 THB of
 * goods), express 99 THB, plus 20 THB per started 5 kg above 20 kg; no payment fee (a zero
 * line); totals.vat is 7/107 of the vatable sum, as on a tax invoice.
 */
import { satangToThb } from '../domain/money';
import type { PaymentMethod } from './';
import type { Promotion, PromotionType } from '../domain/promotion';

export const VAT_PERCENT = 7;
export const DELIVERY_OPTIONS = ['standard', 'express', 'pickup'] as const;
export type DeliveryOption = (typeof DELIVERY_OPTIONS)[number];
export const COST_PAYMENT_METHODS = ['card', 'qr'] as const satisfies readonly PaymentMethod[];
export type CostPaymentMethod = (typeof COST_PAYMENT_METHODS)[number];

export const DELIVERY_FEES = {
  standardSatang: 4_000,
  standardFreeFromSatang: 100_000,
  expressSatang: 9_900,
  heavyThresholdGrams: 20_000,
  heavyStepGrams: 5_000,
  heavyStepSatang: 2_000,
} as const;
export const PAYMENT_FEES_SATANG: { readonly [M in CostPaymentMethod]: number } = { card: 0, qr: 0 };

export interface CatalogProduct {
  productId: string;
  groupId: string;
  nameEn: string;
  nameTh: string;
  priceSatang: number;
  vatable: boolean;
  weightGrams: number;
}

export type { PromotionType };

/** The cost calculation's view of a Promotion (src/domain/promotion): integer percent, times in ms. */
export type CatalogPromotion = Omit<Promotion, 'promotionGroupId' | 'percent' | 'startsAt' | 'endsAt'> & {
  /** percent_off: percent in hundredths (15.5% = 1550) */
  percentBasisPoints: number | null;
  startsAt: number;
  endsAt: number;
};

export const catalogPromotionOf = (p: Promotion): CatalogPromotion => ({
  promotionId: p.promotionId,
  type: p.type,
  groupIds: p.groupIds,
  productIds: p.productIds,
  buyQuantity: p.buyQuantity,
  payPriceSatang: p.payPriceSatang,
  percentBasisPoints: p.percent === null ? null : Math.round(p.percent * 100),
  startsAt: p.startsAt.getTime(),
  endsAt: p.endsAt.getTime(),
  titleEn: p.titleEn,
  titleTh: p.titleTh,
});

export interface CostItem {
  productId: string;
  quantity: number;
}

export interface Money {
  satang: number;
  thb: number;
}
export const money = (satang: number): Money => ({ satang, thb: satangToThb(satang) });

export interface CostLine {
  productId: string;
  name: string;
  nameTh: string;
  quantity: number;
  vatable: boolean;
  unitPrice: Money;
  gross: Money;
  discount: Money;
  total: Money;
  vat: Money;
  promotion: { promotionId: string; type: PromotionType; title: string; titleTh: string } | null;
}

export interface CostBreakdown {
  currency: 'THB';
  deliveryOption: DeliveryOption;
  paymentMethod: CostPaymentMethod;
  lines: CostLine[];
  promotions: {
    promotionId: string;
    type: PromotionType;
    title: string;
    titleTh: string;
    applications: number;
    discount: Money;
  }[];
  charges: {
    code: 'delivery' | 'heavy_surcharge' | 'payment_fee';
    description: string;
    vatable: boolean;
    amount: Money;
  }[];
  weightGrams: number;
  totals: {
    itemsGross: Money;
    discount: Money;
    items: Money;
    charges: Money;
    total: Money;
    vatable: Money;
    vat: Money;
    exempt: Money;
  };
}

/** VAT portion of a VAT-inclusive amount: amount * 7/107 rounded half up. */
export const vatPortion = (satang: number): number =>
  Math.floor((2 * satang * VAT_PERCENT + (100 + VAT_PERCENT)) / (2 * (100 + VAT_PERCENT)));

export const isActive = (p: CatalogPromotion, at: number): boolean => p.startsAt <= at && at <= p.endsAt;

export const covers = (p: CatalogPromotion, product: CatalogProduct): boolean =>
  p.productIds && p.productIds.length > 0
    ? p.productIds.includes(product.productId)
    : p.groupIds.includes(product.groupId);

/** Effective unit price of a product under a promotion (for choosing among overlapping deals). */
function effectiveUnitPrice(p: CatalogPromotion, product: CatalogProduct): number {
  switch (p.type) {
    case 'fixed_price':
      return Math.min(product.priceSatang, p.payPriceSatang ?? product.priceSatang);
    case 'percent_off':
      return product.priceSatang - percentOf(product.priceSatang, p.percentBasisPoints ?? 0);
    case 'multi_buy':
      return Math.min(
        product.priceSatang,
        (p.payPriceSatang ?? product.priceSatang * p.buyQuantity) / Math.max(1, p.buyQuantity),
      );
  }
}

/** amount * bp / 10000, rounded half up. */
const percentOf = (satang: number, basisPoints: number): number => Math.floor((satang * basisPoints + 5_000) / 10_000);

export function choosePromotion(
  product: CatalogProduct,
  promotions: CatalogPromotion[],
  at: number,
): CatalogPromotion | null {
  let best: CatalogPromotion | null = null;
  let bestPrice = Infinity;
  for (const p of promotions) {
    if (!isActive(p, at) || !covers(p, product)) continue;
    const price = effectiveUnitPrice(p, product);
    if (price < bestPrice || (price === bestPrice && best !== null && p.promotionId < best.promotionId)) {
      best = p;
      bestPrice = price;
    }
  }
  return best;
}

export function deliveryCharges(
  option: DeliveryOption,
  itemsTotalSatang: number,
  weightGrams: number,
): CostBreakdown['charges'] {
  if (option === 'pickup')
    return [{ code: 'delivery', description: 'Pick-up at the branch', vatable: true, amount: money(0) }];
  const f = DELIVERY_FEES;
  const base =
    option === 'express' ? f.expressSatang : itemsTotalSatang >= f.standardFreeFromSatang ? 0 : f.standardSatang;
  const charges: CostBreakdown['charges'] = [
    {
      code: 'delivery',
      description:
        option === 'express'
          ? 'Express delivery'
          : base === 0
            ? 'Standard delivery (free from 1,000 THB)'
            : 'Standard delivery',
      vatable: true,
      amount: money(base),
    },
  ];
  const over = weightGrams - f.heavyThresholdGrams;
  if (over > 0) {
    const steps = Math.ceil(over / f.heavyStepGrams);
    charges.push({
      code: 'heavy_surcharge',
      description: `Heavy order: ${steps} x 5 kg above 20 kg`,
      vatable: true,
      amount: money(steps * f.heavyStepSatang),
    });
  }
  return charges;
}

/**
 * The breakdown of an order. Every item's product must be in `products` (the caller reports
 * unknown products and stock before calling this).
 */
export function calculateCost(input: {
  items: CostItem[];
  products: Map<string, CatalogProduct>;
  promotions: CatalogPromotion[];
  deliveryOption: DeliveryOption;
  paymentMethod: CostPaymentMethod;
  at: number;
}): CostBreakdown {
  const rows = input.items.map((item) => {
    const product = input.products.get(item.productId);
    if (!product) throw new Error(`unknown product ${item.productId}`);
    return { item, product, promotion: choosePromotion(product, input.promotions, input.at), discount: 0 };
  });

  const applied = new Map<string, { promotion: CatalogPromotion; applications: number; discount: number }>();
  const note = (p: CatalogPromotion, applications: number, discount: number) => {
    if (discount <= 0) return;
    const a = applied.get(p.promotionId) ?? { promotion: p, applications: 0, discount: 0 };
    a.applications += applications;
    a.discount += discount;
    applied.set(p.promotionId, a);
  };

  for (const row of rows) {
    const p = row.promotion;
    if (!p) continue;
    const unit = row.product.priceSatang;
    const qty = row.item.quantity;
    if (p.type === 'fixed_price' && p.payPriceSatang !== null) {
      row.discount = Math.max(0, unit - p.payPriceSatang) * qty;
      note(p, qty, row.discount);
    } else if (p.type === 'percent_off' && p.percentBasisPoints !== null) {
      row.discount = percentOf(unit * qty, p.percentBasisPoints);
      note(p, qty, row.discount);
    }
  }

  // multi-buy: pool the units of each promotion across lines, most expensive first
  const multi = new Map<string, typeof rows>();
  for (const row of rows) {
    if (row.promotion?.type !== 'multi_buy' || row.promotion.payPriceSatang === null) continue;
    const list = multi.get(row.promotion.promotionId) ?? [];
    list.push(row);
    multi.set(row.promotion.promotionId, list);
  }
  for (const list of multi.values()) {
    const p = list[0].promotion!;
    const n = Math.max(1, p.buyQuantity);
    const pay = p.payPriceSatang!;
    const pool = [...list].sort(
      (a, b) => b.product.priceSatang - a.product.priceSatang || a.product.productId.localeCompare(b.product.productId),
    );
    const left = pool.map((r) => r.item.quantity);
    let deals = 0;
    let saved = 0;
    for (;;) {
      // take the n most expensive remaining units
      const take: { row: (typeof rows)[number]; price: number }[] = [];
      for (let i = 0; i < pool.length && take.length < n; i++) {
        while (left[i] > 0 && take.length < n) {
          left[i]--;
          take.push({ row: pool[i], price: pool[i].product.priceSatang });
        }
      }
      if (take.length < n) break;
      const sum = take.reduce((s, t) => s + t.price, 0);
      const discount = sum - pay;
      if (discount <= 0) break; // cheaper units will not save anything either
      // spread the saving over the units in proportion to their prices; remainder to the first
      let given = 0;
      const shares = take.map((t) => {
        const share = Math.floor((discount * t.price) / sum);
        given += share;
        return share;
      });
      shares[0] += discount - given;
      take.forEach((t, i) => (t.row.discount += shares[i]));
      deals++;
      saved += discount;
    }
    note(p, deals, saved);
  }

  const lines: CostLine[] = rows.map(({ item, product, promotion, discount }) => {
    const gross = product.priceSatang * item.quantity;
    const total = gross - discount;
    return {
      productId: product.productId,
      name: product.nameEn,
      nameTh: product.nameTh,
      quantity: item.quantity,
      vatable: product.vatable,
      unitPrice: money(product.priceSatang),
      gross: money(gross),
      discount: money(discount),
      total: money(total),
      vat: money(product.vatable ? vatPortion(total) : 0),
      promotion:
        promotion && discount > 0
          ? {
              promotionId: promotion.promotionId,
              type: promotion.type,
              title: promotion.titleEn,
              titleTh: promotion.titleTh,
            }
          : null,
    };
  });

  const itemsGross = lines.reduce((s, l) => s + l.gross.satang, 0);
  const discount = lines.reduce((s, l) => s + l.discount.satang, 0);
  const items = itemsGross - discount;
  const weightGrams = rows.reduce((s, r) => s + r.product.weightGrams * r.item.quantity, 0);
  const charges = [
    ...deliveryCharges(input.deliveryOption, items, weightGrams),
    {
      code: 'payment_fee' as const,
      description: `Payment fee (${input.paymentMethod})`,
      vatable: true,
      amount: money(PAYMENT_FEES_SATANG[input.paymentMethod]),
    },
  ];
  const chargesTotal = charges.reduce((s, c) => s + c.amount.satang, 0);
  const vatable =
    lines.filter((l) => l.vatable).reduce((s, l) => s + l.total.satang, 0) +
    charges.filter((c) => c.vatable).reduce((s, c) => s + c.amount.satang, 0);
  const total = items + chargesTotal;

  return {
    currency: 'THB',
    deliveryOption: input.deliveryOption,
    paymentMethod: input.paymentMethod,
    lines,
    promotions: [...applied.values()]
      .sort((a, b) => a.promotion.promotionId.localeCompare(b.promotion.promotionId))
      .map((a) => ({
        promotionId: a.promotion.promotionId,
        type: a.promotion.type,
        title: a.promotion.titleEn,
        titleTh: a.promotion.titleTh,
        applications: a.applications,
        discount: money(a.discount),
      })),
    charges,
    weightGrams,
    totals: {
      itemsGross: money(itemsGross),
      discount: money(discount),
      items: money(items),
      charges: money(chargesTotal),
      total: money(total),
      vatable: money(vatable),
      vat: money(vatPortion(vatable)),
      exempt: money(total - vatable),
    },
  };
}
