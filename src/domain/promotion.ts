/**
 * A promotion as the catalog holds it: the one Promotion type. The storefront shows it as is;
 * the cost calculation (src/payments/cost.ts) works on its CatalogPromotion view of it.
 */
export type PromotionType = 'multi_buy' | 'percent_off' | 'fixed_price';

export interface Promotion {
  promotionId: string;
  type: PromotionType;
  groupIds: string[];
  /** null: every variant of the groups */
  productIds: string[] | null;
  promotionGroupId: string | null;
  buyQuantity: number;
  payPriceSatang: number | null;
  /** percent_off: the percent (15.5 for 15.5%) */
  percent: number | null;
  startsAt: Date;
  endsAt: Date;
  titleEn: string;
  titleTh: string;
}
