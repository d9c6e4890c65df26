/**
 * The catalog reads the payments slice's POST /calculate-cost takes (src/payments/cost-routes.ts):
 * the branch, and the products with price and stock. The catalog tables are the storefront's.
 */
import type { Db } from '../db/knex';

export interface ProductRow {
  product_id: string;
  group_id: string;
  name_en: string;
  name_th: string;
  vatable: boolean;
  weight_grams: number;
  price_satang: string | null;
  quantity: number | null;
}

export async function branchExists(db: Db, branchId: string): Promise<boolean> {
  return !!(await db('branches').where({ branch_id: branchId }).first('branch_id'));
}

/** The products `ids` with their shelf price and their stock at `branchId` (null when none). */
export function productsAt(db: Db, branchId: string, ids: string[]): Promise<ProductRow[]> {
  return db('products as p')
    .leftJoin('prices as pr', 'pr.product_id', 'p.product_id')
    .leftJoin('inventory as inv', function () {
      this.on('inv.product_id', '=', 'p.product_id').andOn('inv.branch_id', '=', db.raw('?', [branchId]));
    })
    .whereIn('p.product_id', ids)
    .select<ProductRow[]>(
      'p.product_id',
      'p.group_id',
      'p.name_en',
      'p.name_th',
      'p.vatable',
      'p.weight_grams',
      'pr.price_satang',
      'inv.quantity',
    );
}
