/**
 * In-memory snapshots of the storefront data, one per data version: the catalog (categories,
 * groups, variants, branches, promotions, banners), the prices and the per-branch stock.
 * The shop's catalog is small (hundreds of groups), so every read endpoint and the search
 * shape their answers from these maps instead of querying row by row.
 */
import type { Branch, Group, Product } from '../db/catalog-types';
import type { Db } from '../db/knex';
import { readPromotions } from '../db/promotions';
import type { Promotion } from '../domain/promotion';

export type { Branch, Group, Product, Promotion };

export interface Category {
  id: string;
  slug: string;
  kind: 'aisle' | 'subcategory' | 'collection';
  parentId: string | null;
  nameEn: string;
  nameTh: string;
  position: number;
  icon: string | null;
  iconOrder: number | null;
}

export interface Banner {
  id: string;
  placement: 'sticky' | 'home' | 'category';
  categoryId: string | null;
  titleEn: string;
  titleTh: string;
  imageKey: string;
  link: string;
  position: number;
  startsAt: Date;
  endsAt: Date;
}

export interface CatalogSnapshot {
  version: number;
  categories: Map<string, Category>;
  aisles: Category[];
  collections: Category[];
  /** subcategories of each aisle, by position */
  childrenOf: Map<string, Category[]>;
  /** icon slugs in the app's order */
  iconOrder: string[];
  groups: Map<string, Group>;
  /** groups in a stable order (aisle, subcategory, name) */
  groupList: Group[];
  products: Map<string, Product>;
  productsOf: Map<string, Product[]>;
  branches: Map<string, Branch>;
  promotions: Promotion[];
  banners: Banner[];
}

export interface PriceSnapshot {
  version: number;
  updatedAt: Date | null;
  satang: Map<string, number>;
}

export interface InventorySnapshot {
  version: number;
  /** branchId -> productId -> quantity */
  byBranch: Map<string, Map<string, number>>;
  updatedAt: Map<string, Date>;
  /** products in stock at one branch at least */
  inStockSomewhere: Set<string>;
}

/** Aisle id of a category (itself for an aisle). */
export function aisleOf(s: CatalogSnapshot, categoryId: string): Category | undefined {
  const c = s.categories.get(categoryId);
  if (!c) return undefined;
  return c.parentId ? s.categories.get(c.parentId) : c;
}

/** Promotions running at `now` (start and end inclusive). */
export const activePromotions = (s: CatalogSnapshot, now: Date): Promotion[] =>
  s.promotions.filter((p) => p.startsAt <= now && now <= p.endsAt);

export async function loadCatalog(db: Db, version: number): Promise<CatalogSnapshot> {
  const [cats, groups, products, branches, promotions, banners] = await Promise.all([
    db('categories').select('*'),
    db('product_groups').select('*'),
    db('products').select('*'),
    db('branches').select('*'),
    readPromotions(db),
    db('banners').select('*'),
  ]);
  const categories = new Map<string, Category>(
    cats.map((c) => [
      c.id,
      {
        id: c.id,
        slug: c.slug,
        kind: c.kind,
        parentId: c.parent_id,
        nameEn: c.name_en,
        nameTh: c.name_th,
        position: c.position,
        icon: c.icon,
        iconOrder: c.icon_order,
      },
    ]),
  );
  const byPos = (a: Category, b: Category) => a.position - b.position || a.id.localeCompare(b.id);
  const all = [...categories.values()];
  const aisles = all.filter((c) => c.kind === 'aisle').sort(byPos);
  const collections = all.filter((c) => c.kind === 'collection').sort(byPos);
  const childrenOf = new Map<string, Category[]>(
    aisles.map((a) => [a.id, all.filter((c) => c.parentId === a.id).sort(byPos)]),
  );
  const iconOrder = all
    .filter((c) => c.iconOrder !== null && c.icon)
    .sort((a, b) => a.iconOrder! - b.iconOrder!)
    .map((c) => c.icon!);

  const groupMap = new Map<string, Group>(
    groups.map((g) => [
      g.group_id,
      {
        groupId: g.group_id,
        nameEn: g.name_en,
        nameTh: g.name_th,
        brand: g.brand,
        categoryId: g.category_id,
        collections: g.collections,
        countryCode: g.country_code,
        descriptionEn: g.description_en,
        descriptionTh: g.description_th,
        keywords: g.keywords,
        storage: g.storage,
      },
    ]),
  );
  const order = (g: Group) => {
    const sub = categories.get(g.categoryId);
    const aisle = sub?.parentId ? categories.get(sub.parentId) : sub;
    return [aisle?.position ?? 0, sub?.position ?? 0];
  };
  const groupList = [...groupMap.values()].sort((a, b) => {
    const [a1, a2] = order(a);
    const [b1, b2] = order(b);
    return a1 - b1 || a2 - b2 || a.nameEn.localeCompare(b.nameEn) || a.groupId.localeCompare(b.groupId);
  });

  const productMap = new Map<string, Product>();
  const productsOf = new Map<string, Product[]>();
  for (const p of products) {
    const product: Product = {
      productId: p.product_id,
      groupId: p.group_id,
      variant: p.variant,
      nameEn: p.name_en,
      nameTh: p.name_th,
      barcode: p.barcode,
      unit: p.unit,
      size: Number(p.size),
      weightGrams: p.weight_grams,
      vatable: p.vatable,
    };
    productMap.set(product.productId, product);
    const list = productsOf.get(product.groupId) ?? [];
    list.push(product);
    productsOf.set(product.groupId, list);
  }
  const variantNo = (id: string) => Number(id.slice(id.lastIndexOf('-') + 1)) || 0;
  for (const list of productsOf.values()) list.sort((a, b) => variantNo(a.productId) - variantNo(b.productId));

  return {
    version,
    categories,
    aisles,
    collections,
    childrenOf,
    iconOrder,
    groups: groupMap,
    groupList,
    products: productMap,
    productsOf,
    branches: new Map(
      branches
        .map((b): Branch => ({
          branchId: b.branch_id,
          nameEn: b.name_en,
          nameTh: b.name_th,
          district: b.district,
          lat: b.lat,
          lng: b.lng,
          deliveryRadiusKm: Number(b.delivery_radius_km),
        }))
        .sort((a, b) => a.branchId.localeCompare(b.branchId))
        .map((b) => [b.branchId, b]),
    ),
    promotions: promotions.sort(
      (a, b) => a.startsAt.getTime() - b.startsAt.getTime() || a.promotionId.localeCompare(b.promotionId),
    ),
    banners: banners
      .map((b): Banner => ({
        id: b.id,
        placement: b.placement,
        categoryId: b.category_id,
        titleEn: b.title_en,
        titleTh: b.title_th,
        imageKey: b.image_key,
        link: b.link,
        position: b.position,
        startsAt: b.starts_at,
        endsAt: b.ends_at,
      }))
      .sort((a, b) => a.position - b.position || a.id.localeCompare(b.id)),
  };
}

export async function loadPrices(db: Db, version: number): Promise<PriceSnapshot> {
  const rows = await db('prices').select<{ product_id: string; price_satang: string; updated_at: Date }[]>(
    'product_id',
    'price_satang',
    'updated_at',
  );
  let updatedAt: Date | null = null;
  const satang = new Map<string, number>();
  for (const r of rows) {
    satang.set(r.product_id, Number(r.price_satang));
    if (!updatedAt || r.updated_at > updatedAt) updatedAt = r.updated_at;
  }
  return { version, updatedAt, satang };
}

export async function loadInventory(db: Db, version: number): Promise<InventorySnapshot> {
  const rows = await db('inventory').select<
    { branch_id: string; product_id: string; quantity: number; updated_at: Date }[]
  >('branch_id', 'product_id', 'quantity', 'updated_at');
  const byBranch = new Map<string, Map<string, number>>();
  const updatedAt = new Map<string, Date>();
  const inStockSomewhere = new Set<string>();
  for (const r of rows) {
    let m = byBranch.get(r.branch_id);
    if (!m) byBranch.set(r.branch_id, (m = new Map()));
    m.set(r.product_id, r.quantity);
    if (r.quantity > 0) inStockSomewhere.add(r.product_id);
    const u = updatedAt.get(r.branch_id);
    if (!u || r.updated_at > u) updatedAt.set(r.branch_id, r.updated_at);
  }
  return { version, byBranch, updatedAt, inStockSomewhere };
}
