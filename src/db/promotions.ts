/**
 * The one read of the promotions table, shared by the storefront's catalog snapshot and the cost
 * calculation: the only place a promotions row is mapped.
 */
import type { Promotion, PromotionType } from '../domain/promotion';
import type { Db } from './knex';

interface PromotionRow {
  promotion_id: string;
  type: PromotionType;
  group_ids: string[];
  product_ids: string[] | null;
  promotion_group_id: string | null;
  buy_quantity: number;
  pay_price_satang: string | number | null;
  percent: string | number | null;
  starts_at: Date;
  ends_at: Date;
  title_en: string;
  title_th: string;
}

const promotionOf = (p: PromotionRow): Promotion => ({
  promotionId: p.promotion_id,
  type: p.type,
  groupIds: p.group_ids,
  productIds: p.product_ids,
  promotionGroupId: p.promotion_group_id,
  buyQuantity: p.buy_quantity,
  payPriceSatang: p.pay_price_satang === null ? null : Number(p.pay_price_satang),
  percent: p.percent === null ? null : Number(p.percent),
  startsAt: p.starts_at,
  endsAt: p.ends_at,
  titleEn: p.title_en,
  titleTh: p.title_th,
});

/** Every promotion, or with `runningAt` those running then (start and end inclusive); in the table's order. */
export async function readPromotions(db: Db, runningAt?: Date): Promise<Promotion[]> {
  const q = db('promotions');
  if (runningAt) q.where('starts_at', '<=', runningAt).andWhere('ends_at', '>=', runningAt);
  const rows = await q.select<PromotionRow[]>('*');
  return rows.map(promotionOf);
}
