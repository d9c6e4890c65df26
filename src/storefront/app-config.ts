/**
 * Start-up files of the shop's apps, built from the catalog: /app-first-page.json and the
 * schema files <schema base path>/<schema name>/master/webData/{config.yaml,firstPageCat.yaml}.
 * All links are paths relative to the storefront's base URL.
 */
import YAML from 'yaml';
import type { Config } from '../config';
import type { CatalogSnapshot, Category } from './snapshot';
import { groupCounts, iconPath, IMAGE_FORMATS } from './views';

/** The shop's name in the seed data (data/catalog/README.md). */
export const SHOP = {
  nameEn: 'Sala Market',
  nameTh: 'ศาลา มาร์เก็ต',
  currency: 'THB',
  locales: ['th', 'en'],
  defaultLocale: 'th',
  timezone: 'Asia/Bangkok',
};

export const schemaFilePath = (config: Config, file: 'config.yaml' | 'firstPageCat.yaml'): string =>
  `${config.storefront.schemaBasePath}/${config.storefront.schemaName}/master/webData/${file}`;

export const API_PATHS = {
  catalogTree: '/api/v2/catalog-tree/catalog-tree',
  stickyBanner: '/api/v2/catalog-tree/sticky-banner',
  bannerTree: '/api/v2/catalog-tree/banner-tree',
  productList: '/api/product/productlist/onlineData',
  search: '/api/search2/semantic_search',
  group: '/api/group/read/{groupId}',
  groupImage: '/api/group/image/{groupId}/{imageId}',
  inventory: '/api/inventory2/{branchId}',
  prices: '/api/price/getallgz',
  promotionTwo4: '/api/promotion/get-two4',
  apiKey: '/auth/apikey/get',
  invalidate: '/auth/invalidate/invalidate',
  categoryIcon: '/public/image/category/{name}.webp',
} as const;

const link = (c: Category) => (c.kind === 'collection' ? `/collection/${c.slug}` : `/category/${c.slug}`);

/** The icon row of the home page, in the app's order. */
function firstPageCategories(s: CatalogSnapshot) {
  const counts = groupCounts(s);
  const bySlug = new Map([...s.aisles, ...s.collections].map((c) => [c.icon ?? c.slug, c]));
  return s.iconOrder
    .map((slug) => bySlug.get(slug))
    .filter((c): c is Category => !!c)
    .map((c, i) => ({
      position: i + 1,
      id: c.id,
      slug: c.slug,
      kind: c.kind,
      nameEn: c.nameEn,
      nameTh: c.nameTh,
      icon: iconPath(c.icon ?? c.slug),
      link: link(c),
      groupCount: counts.get(c.id) ?? 0,
      ...(c.kind === 'aisle'
        ? {
            children: (s.childrenOf.get(c.id) ?? []).map((sub) => ({
              id: sub.id,
              slug: sub.slug,
              nameEn: sub.nameEn,
              nameTh: sub.nameTh,
              link: link(sub),
            })),
          }
        : {}),
    }));
}

const branches = (s: CatalogSnapshot) => [...s.branches.values()].map((b) => ({ ...b }));

export function appFirstPage(s: CatalogSnapshot, config: Config) {
  return {
    shop: SHOP,
    schema: {
      config: schemaFilePath(config, 'config.yaml'),
      firstPageCat: schemaFilePath(config, 'firstPageCat.yaml'),
    },
    api: API_PATHS,
    loadOrder: ['config', 'schema', 'catalogTree', 'banners', 'productList', 'inventory', 'prices'],
    iconOrder: s.iconOrder,
    categories: firstPageCategories(s).map(({ children: _children, ...c }) => c),
    branches: branches(s),
    search: { maxQueryLength: config.storefront.searchMaxQueryLength },
  };
}

export function configYaml(s: CatalogSnapshot, config: Config): string {
  const doc = {
    version: 1,
    shop: SHOP,
    api: { paths: API_PATHS },
    images: {
      groupImage: API_PATHS.groupImage,
      formats: [...IMAGE_FORMATS],
      defaultFormat: 'webp',
      categoryIcon: API_PATHS.categoryIcon,
    },
    search: {
      path: API_PATHS.search,
      parameter: 'query',
      maxQueryLength: config.storefront.searchMaxQueryLength,
      languages: ['th', 'en'],
    },
    inventory: { path: API_PATHS.inventory, cacheBuster: 'timestamp' },
    prices: {
      path: API_PATHS.prices,
      method: 'POST',
      contentType: 'application/json',
      contentEncoding: 'gzip',
      unit: 'THB',
    },
    auth: {
      apiKey: API_PATHS.apiKey,
      invalidate: API_PATHS.invalidate,
      apiKeyHeader: 'X-API-Key',
      signature: {
        algorithm: 'AWS4-HMAC-SHA256',
        region: config.storefront.sigv4.region,
        service: config.storefront.sigv4.service,
      },
    },
    storage: ['ambient', 'chilled', 'frozen'],
    branches: branches(s),
  };
  return `# ${SHOP.nameEn} web app configuration (generated from the catalog)\n${YAML.stringify(doc)}`;
}

export function firstPageCatYaml(s: CatalogSnapshot): string {
  return `# ${SHOP.nameEn} home page categories, in the app's icon order (generated from the catalog)\n${YAML.stringify({ categories: firstPageCategories(s) })}`;
}
