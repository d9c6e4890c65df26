/**
 * The storefront's response bodies, shaped from the snapshots (pure functions, no I/O).
 * Prices go on the wire as THB numbers with at most 2 decimals (integer satang inside).
 * Links to images and icons are paths relative to the storefront's base URL.
 */
import { satangToThb } from '../domain/money';
import {
  activePromotions,
  aisleOf,
  type Banner,
  type CatalogSnapshot,
  type Category,
  type Group,
  type InventorySnapshot,
  type PriceSnapshot,
  type Product,
  type Promotion,
} from './snapshot';

export const IMAGE_FORMATS = ['webp', 'png', 'jpg'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

export const iconPath = (slug: string): string => `/public/image/category/${slug}.webp`;
export const imagePath = (groupId: string, imageId: string, ext: ImageFormat = 'webp'): string =>
  `/api/group/image/${groupId}/${imageId}.${ext}`;

/** Image ids of a group: one per variant, `<groupId>-<n>` (the variant's product id). */
export const imageIdsOf = (s: CatalogSnapshot, groupId: string): string[] =>
  (s.productsOf.get(groupId) ?? []).map((p) => p.productId);

const categoryRef = (c: Category | undefined) =>
  c ? { id: c.id, slug: c.slug, nameEn: c.nameEn, nameTh: c.nameTh } : null;

/** Group counts per category id (subcategories, aisles and collections). */
export function groupCounts(s: CatalogSnapshot): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (id: string | undefined) => id && counts.set(id, (counts.get(id) ?? 0) + 1);
  const collectionId = new Map(s.collections.map((c) => [c.slug, c.id]));
  for (const g of s.groupList) {
    add(g.categoryId);
    add(aisleOf(s, g.categoryId)?.id);
    for (const slug of g.collections) add(collectionId.get(slug));
  }
  return counts;
}

export function catalogTreeBody(s: CatalogSnapshot) {
  const counts = groupCounts(s);
  const node = (c: Category) => ({
    id: c.id,
    slug: c.slug,
    nameEn: c.nameEn,
    nameTh: c.nameTh,
    position: c.position,
    groupCount: counts.get(c.id) ?? 0,
  });
  return {
    aisles: s.aisles.map((a) => ({
      ...node(a),
      icon: iconPath(a.icon ?? a.slug),
      children: (s.childrenOf.get(a.id) ?? []).map(node),
    })),
    collections: s.collections.map((c) => ({ ...node(c), icon: iconPath(c.icon ?? c.slug) })),
    iconOrder: s.iconOrder,
  };
}

export const isLive = (b: { startsAt: Date; endsAt: Date }, now: Date): boolean => b.startsAt <= now && now <= b.endsAt;

export const bannerBody = (b: Banner) => ({
  id: b.id,
  placement: b.placement,
  ...(b.categoryId ? { categoryId: b.categoryId } : {}),
  titleEn: b.titleEn,
  titleTh: b.titleTh,
  imageKey: b.imageKey,
  link: b.link,
  position: b.position,
  startsAt: b.startsAt.toISOString(),
  endsAt: b.endsAt.toISOString(),
});

/** Banners live at `now`, and the next instant at which that set changes (null: never). */
export function liveBanners(s: CatalogSnapshot, now: Date): { live: Banner[]; nextChange: Date | null } {
  const live = s.banners.filter((b) => isLive(b, now));
  let next: number | null = null;
  for (const b of s.banners) {
    for (const t of [b.startsAt.getTime(), b.endsAt.getTime() + 1])
      if (t > now.getTime() && (next === null || t < next)) next = t;
  }
  return { live, nextChange: next === null ? null : new Date(next) };
}

export const stickyBannerBody = (live: Banner[]) => {
  const sticky = live.filter((b) => b.placement === 'sticky');
  return { banner: sticky.length ? bannerBody(sticky[0]) : null };
};

export function bannerTreeBody(s: CatalogSnapshot, live: Banner[]) {
  const byCategory = new Map<string, Banner[]>();
  for (const b of live.filter((x) => x.placement === 'category' && x.categoryId)) {
    byCategory.set(b.categoryId!, [...(byCategory.get(b.categoryId!) ?? []), b]);
  }
  const categoryOrder = (id: string) => {
    const c = s.categories.get(id);
    const aisle = c ? aisleOf(s, c.id) : undefined;
    return (aisle?.position ?? 999) * 1000 + (c?.parentId ? c.position : 0);
  };
  return {
    home: live.filter((b) => b.placement === 'home').map(bannerBody),
    categories: [...byCategory.entries()]
      .sort(([a], [b]) => categoryOrder(a) - categoryOrder(b))
      .map(([categoryId, banners]) => ({
        categoryId,
        slug: s.categories.get(categoryId)?.slug ?? null,
        banners: banners.map(bannerBody),
      })),
  };
}

const variantBody = (p: Product) => ({
  productId: p.productId,
  variant: p.variant,
  nameEn: p.nameEn,
  nameTh: p.nameTh,
  barcode: p.barcode,
  unit: p.unit,
  size: p.size,
  weightGrams: p.weightGrams,
  vatable: p.vatable,
  image: imagePath(p.groupId, p.productId),
});

const groupSummary = (s: CatalogSnapshot, g: Group) => ({
  groupId: g.groupId,
  nameEn: g.nameEn,
  nameTh: g.nameTh,
  brand: g.brand,
  categoryId: g.categoryId,
  aisleId: aisleOf(s, g.categoryId)?.id ?? null,
  collections: g.collections,
  countryCode: g.countryCode,
  storage: g.storage,
  image: imagePath(g.groupId, imageIdsOf(s, g.groupId)[0] ?? `${g.groupId}-1`),
});

/** The online product list: every group with its variants (prices and stock come separately). */
export function productListBody(s: CatalogSnapshot) {
  return {
    count: s.groupList.length,
    groups: s.groupList.map((g) => ({
      ...groupSummary(s, g),
      variants: (s.productsOf.get(g.groupId) ?? []).map(variantBody),
    })),
  };
}

export function promotionBody(s: CatalogSnapshot, p: Promotion, prices: PriceSnapshot) {
  const items = p.groupIds.flatMap((gid) =>
    (s.productsOf.get(gid) ?? []).filter((v) => !p.productIds || p.productIds.includes(v.productId)),
  );
  return {
    promotionId: p.promotionId,
    type: p.type,
    promotionGroupId: p.promotionGroupId,
    groupIds: p.groupIds,
    productIds: items.map((v) => v.productId),
    buyQuantity: p.buyQuantity,
    payPrice: p.payPriceSatang === null ? null : satangToThb(p.payPriceSatang),
    percent: p.percent,
    titleEn: p.titleEn,
    titleTh: p.titleTh,
    startsAt: p.startsAt.toISOString(),
    endsAt: p.endsAt.toISOString(),
    items: items.map((v) => ({
      productId: v.productId,
      groupId: v.groupId,
      variant: v.variant,
      nameEn: v.nameEn,
      nameTh: v.nameTh,
      price: priceOf(prices, v.productId),
    })),
  };
}

export const priceOf = (prices: PriceSnapshot, productId: string): number | null => {
  const satang = prices.satang.get(productId);
  return satang === undefined ? null : satangToThb(satang);
};

/** Details of one group: names, descriptions, category path, images, variants with prices, live promotions. */
export function groupBody(
  s: CatalogSnapshot,
  g: Group,
  prices: PriceSnapshot,
  inventory: InventorySnapshot,
  now: Date,
) {
  const sub = s.categories.get(g.categoryId);
  const variants = s.productsOf.get(g.groupId) ?? [];
  return {
    ...groupSummary(s, g),
    descriptionEn: g.descriptionEn,
    descriptionTh: g.descriptionTh,
    keywords: g.keywords,
    category: categoryRef(sub),
    aisle: categoryRef(aisleOf(s, g.categoryId)),
    images: imageIdsOf(s, g.groupId).map((imageId) => ({
      imageId,
      webp: imagePath(g.groupId, imageId, 'webp'),
      png: imagePath(g.groupId, imageId, 'png'),
      jpg: imagePath(g.groupId, imageId, 'jpg'),
    })),
    variants: variants.map((v) => ({
      ...variantBody(v),
      price: priceOf(prices, v.productId),
      inStock: inventory.inStockSomewhere.has(v.productId),
    })),
    promotions: activePromotions(s, now)
      .filter((p) => p.groupIds.includes(g.groupId))
      .map((p) => promotionBody(s, p, prices)),
  };
}

export function inventoryBody(branchId: string, inv: InventorySnapshot) {
  const stock = inv.byBranch.get(branchId) ?? new Map<string, number>();
  return {
    branchId,
    updatedAt: inv.updatedAt.get(branchId)?.toISOString() ?? null,
    products: Object.fromEntries([...stock.entries()].sort(([a], [b]) => a.localeCompare(b))),
  };
}

export function pricesBody(prices: PriceSnapshot) {
  return {
    currency: 'THB',
    updatedAt: prices.updatedAt?.toISOString() ?? null,
    prices: Object.fromEntries(
      [...prices.satang.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, satang]) => [id, satangToThb(satang)]),
    ),
  };
}
