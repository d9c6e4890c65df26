/**
 * Loads the shop's catalog (data/catalog, copied from the shared seed data) into Postgres.
 *
 * The data set has no stock figures, so per-branch inventory is derived deterministically
 * from (branchId, productId): the same stock on every machine, about 8% of lines out of stock.
 * Loading is one transaction: a failure leaves the database as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Branch, Group, Product } from './catalog-types';
import type { Db } from './knex';

/** data/catalog of the project: two levels up from src/db, three from the compiled dist/src/db. */
export const CATALOG_DIR =
  [
    path.resolve(__dirname, '..', '..', 'data', 'catalog'),
    path.resolve(__dirname, '..', '..', '..', 'data', 'catalog'),
  ].find((d) => fs.existsSync(d)) ?? path.resolve(__dirname, '..', '..', 'data', 'catalog');

interface CategoryNode {
  id: string;
  slug: string;
  nameEn: string;
  nameTh: string;
  parentId: string | null;
  position: number;
  icon?: string;
  children?: CategoryNode[];
}
interface Collection {
  id: string;
  slug: string;
  nameEn: string;
  nameTh: string;
  position: number;
  icon: string;
}
/** a line of products.jsonl: the product with its price */
interface SeedProduct extends Product {
  priceSatang: number;
}
interface SeedPromotion {
  promotionId: string;
  type: string;
  groupIds: string[];
  productIds?: string[];
  promotionGroupId?: string;
  buyQuantity?: number;
  payPrice?: number;
  percent?: number;
  startsAt: string;
  endsAt: string;
  titleEn: string;
  titleTh: string;
}
interface Banner {
  id: string;
  placement: string;
  categoryId?: string;
  titleEn: string;
  titleTh: string;
  imageKey: string;
  link: string;
  position: number;
  startsAt: string;
  endsAt: string;
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(path.join(CATALOG_DIR, file), 'utf8')) as T;
const readJsonl = <T>(file: string): T[] =>
  fs
    .readFileSync(path.join(CATALOG_DIR, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);

/** FNV-1a, for deterministic synthetic stock. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function syntheticStock(branchId: string, productId: string): number {
  const h = fnv1a(`${branchId}/${productId}`);
  return h % 100 < 8 ? 0 : 1 + (h % 60);
}

export async function isCatalogEmpty(db: Db): Promise<boolean> {
  const row = await db('products').count<{ count: string }[]>('* as count').first();
  return Number(row?.count ?? 0) === 0;
}

export async function seedCatalog(db: Db): Promise<Record<string, number>> {
  const cats = readJson<{ categories: CategoryNode[]; collections: Collection[]; iconOrder: string[] }>(
    'categories.json',
  );
  const groups = readJsonl<Group>('groups.jsonl');
  const products = readJsonl<SeedProduct>('products.jsonl');
  const branches = readJson<Branch[]>('branches.json');
  const promotions = readJson<SeedPromotion[]>('promotions.json');
  const banners = readJson<{
    stickyBanner: Banner;
    bannerTree: { home: Banner[]; categories: { categoryId: string; banners: Banner[] }[] };
  }>('banners.json');
  const iconIndex = (slug: string) => {
    const i = cats.iconOrder.indexOf(slug);
    return i < 0 ? null : i + 1;
  };

  type CategoryRow = {
    id: string;
    slug: string;
    kind: string;
    parent_id: string | null;
    name_en: string;
    name_th: string;
    position: number;
    icon: string | null;
    icon_order: number | null;
  };
  const categoryRows: CategoryRow[] = [
    ...cats.categories.flatMap((a) => [
      {
        id: a.id,
        slug: a.slug,
        kind: 'aisle',
        parent_id: null,
        name_en: a.nameEn,
        name_th: a.nameTh,
        position: a.position,
        icon: a.icon ?? a.slug,
        icon_order: iconIndex(a.slug),
      },
      ...(a.children ?? []).map((c) => ({
        id: c.id,
        slug: c.slug,
        kind: 'subcategory',
        parent_id: a.id,
        name_en: c.nameEn,
        name_th: c.nameTh,
        position: c.position,
        icon: null,
        icon_order: null,
      })),
    ]),
    ...cats.collections.map((c) => ({
      id: c.id,
      slug: c.slug,
      kind: 'collection',
      parent_id: null,
      name_en: c.nameEn,
      name_th: c.nameTh,
      position: c.position,
      icon: c.icon,
      icon_order: iconIndex(c.slug),
    })),
  ];
  const allBanners = [
    banners.stickyBanner,
    ...banners.bannerTree.home,
    ...banners.bannerTree.categories.flatMap((c) =>
      c.banners.map((b) => ({ ...b, categoryId: b.categoryId ?? c.categoryId })),
    ),
  ];

  await db.transaction(async (trx) => {
    for (const t of ['banners', 'promotions', 'inventory', 'prices', 'products', 'product_groups', 'branches'])
      await trx(t).del();
    await trx('categories').whereNotNull('parent_id').del();
    await trx('categories').del();
    await trx.batchInsert('categories', categoryRows, 200);
    await trx.batchInsert(
      'product_groups',
      groups.map((g) => ({
        group_id: g.groupId,
        name_en: g.nameEn,
        name_th: g.nameTh,
        brand: g.brand,
        category_id: g.categoryId,
        collections: g.collections,
        country_code: g.countryCode,
        description_en: g.descriptionEn,
        description_th: g.descriptionTh,
        keywords: g.keywords,
        storage: g.storage,
      })),
      200,
    );
    await trx.batchInsert(
      'products',
      products.map((p) => ({
        product_id: p.productId,
        group_id: p.groupId,
        variant: p.variant,
        name_en: p.nameEn,
        name_th: p.nameTh,
        barcode: p.barcode,
        unit: p.unit,
        size: p.size,
        weight_grams: p.weightGrams,
        vatable: p.vatable,
      })),
      200,
    );
    await trx.batchInsert(
      'prices',
      products.map((p) => ({ product_id: p.productId, price_satang: p.priceSatang })),
      500,
    );
    await trx.batchInsert(
      'branches',
      branches.map((b) => ({
        branch_id: b.branchId,
        name_en: b.nameEn,
        name_th: b.nameTh,
        district: b.district,
        lat: b.lat,
        lng: b.lng,
        delivery_radius_km: b.deliveryRadiusKm,
      })),
      50,
    );
    await trx.batchInsert(
      'inventory',
      branches.flatMap((b) =>
        products.map((p) => ({
          branch_id: b.branchId,
          product_id: p.productId,
          quantity: syntheticStock(b.branchId, p.productId),
        })),
      ),
      1000,
    );
    await trx.batchInsert(
      'promotions',
      promotions.map((p) => ({
        promotion_id: p.promotionId,
        type: p.type,
        group_ids: p.groupIds,
        product_ids: p.productIds ?? null,
        promotion_group_id: p.promotionGroupId ?? null,
        buy_quantity: p.buyQuantity ?? 1,
        pay_price_satang: p.payPrice ?? null,
        percent: p.percent ?? null,
        starts_at: p.startsAt,
        ends_at: p.endsAt,
        title_en: p.titleEn,
        title_th: p.titleTh,
      })),
      100,
    );
    await trx.batchInsert(
      'banners',
      allBanners.map((b) => ({
        id: b.id,
        placement: b.placement,
        category_id: b.categoryId ?? null,
        title_en: b.titleEn,
        title_th: b.titleTh,
        image_key: b.imageKey,
        link: b.link,
        position: b.position,
        starts_at: b.startsAt,
        ends_at: b.endsAt,
      })),
      100,
    );
  });
  return {
    categories: categoryRows.length,
    groups: groups.length,
    products: products.length,
    branches: branches.length,
    promotions: promotions.length,
    banners: allBanners.length,
  };
}
