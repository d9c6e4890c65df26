/**
 * The storefront service: everything the storefront routes answer with, over explicit deps.
 *
 * Caching contract: every answer is built from snapshots keyed by the data versions of
 * storefront_versions (one small query per request), so a change of the catalog, a price or a
 * stock figure shows in the next answer, on every gateway instance. Bodies that do not depend on
 * the clock are serialised (and gzipped) once per version; the rankings of the last 1000 distinct
 * search queries are kept per catalog version (prices, stock and promotions are applied fresh).
 */
import path from 'node:path';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import { AppError, ErrorCode } from '../domain/errors';
import { jsonRepresentation, representation, type Representation } from '../representation';
import type { Logger } from '../logger';
import { appFirstPage, configYaml, firstPageCatYaml } from './app-config';
import { ApiKeyService } from './auth/api-keys';
import { IdentityService } from './auth/identity';
import { createImageStore, iconSvg, productSvg } from './images';
import { VersionedMemo } from './memo';
import { createAssetLinks } from './assets/presigned';
import { createDefaultEmbedder, type Embedder, type FittableEmbedder } from './search/embedder';
import { ensureSearchIndex, type SearchIndex } from './search/index';
import { rank, search, type RankedLists, type SearchQuery } from './search/search';
import { normalize } from './search/text';
import {
  activePromotions,
  loadCatalog,
  loadInventory,
  loadPrices,
  type CatalogSnapshot,
  type InventorySnapshot,
  type PriceSnapshot,
} from './snapshot';
import { cachedVersions, type Versions } from './versions';
import * as views from './views';

export interface StorefrontDeps {
  db: Db;
  config: Config;
  logger: Logger;
  clock: () => Date;
  embedder?: Embedder | FittableEmbedder;
}

const notFound = (what: string, details: Record<string, unknown>) =>
  new AppError(ErrorCode.NOT_FOUND, `${what} not found`, details);

export function createStorefront(deps: StorefrontDeps) {
  const { db, config, logger, clock } = deps;
  const baseEmbedder = deps.embedder ?? createDefaultEmbedder();
  const catalogs = new VersionedMemo<CatalogSnapshot>(1);
  const priceSnaps = new VersionedMemo<PriceSnapshot>(1);
  const stock = new VersionedMemo<InventorySnapshot>(1);
  const indexes = new VersionedMemo<SearchIndex>(1);
  const rankings = new VersionedMemo<RankedLists>(1000);
  const reps = new VersionedMemo<Representation>(64);
  const images = createImageStore({ cacheDir: path.join(config.dataDir, 'cache', 'images'), logger });
  const identity = new IdentityService(db, { ...config.identity, clock });
  const apiKeys = new ApiKeyService(db, identity, { secret: config.storefront.keySecret, clock });
  /** presigned object-store URLs in the answers (src/storefront/assets/presigned.ts), when a store is configured */
  const assets = createAssetLinks(config);

  const readVersions = cachedVersions(db, config.storefront.versionCacheMs);
  const catalog = (v: Versions) => catalogs.get('catalog', v.catalog, () => loadCatalog(db, v.catalog));
  const prices = (v: Versions) => priceSnaps.get('prices', v.prices, () => loadPrices(db, v.prices));
  const inventory = (v: Versions) => stock.get('inventory', v.inventory, () => loadInventory(db, v.inventory));
  const catalogRep = async (
    name: string,
    build: (s: CatalogSnapshot, now: Date) => Representation | Promise<Representation>,
    perSigningWindow = false,
  ) => {
    const v = await readVersions();
    const now = clock();
    return reps.get(name, perSigningWindow && assets ? `${v.catalog}:${assets.windowKey(now)}` : v.catalog, async () =>
      build(await catalog(v), now),
    );
  };

  return {
    identity,
    apiKeys,

    catalogTree: () => catalogRep('catalog-tree', (s) => jsonRepresentation(views.catalogTreeBody(s))),
    productList: () =>
      catalogRep(
        'product-list',
        async (s, now) =>
          jsonRepresentation(
            assets ? await assets.productList(views.productListBody(s), now) : views.productListBody(s),
            { gzip: true },
          ),
        true,
      ),
    appFirstPage: () =>
      catalogRep(
        'app-first-page',
        async (s, now) =>
          jsonRepresentation(
            assets ? await assets.firstPage(appFirstPage(s, config), s, now) : appFirstPage(s, config),
          ),
        true,
      ),
    /** Cache-Control of answers that carry presigned URLs: never cached past their signing window */
    assetCacheControl: (maxAgeSeconds: number) =>
      assets ? assets.cacheControl(maxAgeSeconds, clock()) : `public, max-age=${maxAgeSeconds}`,
    configYaml: () =>
      catalogRep('config.yaml', (s) => representation(configYaml(s, config), 'application/yaml; charset=utf-8')),
    firstPageCatYaml: () =>
      catalogRep('firstPageCat.yaml', (s) => representation(firstPageCatYaml(s), 'application/yaml; charset=utf-8')),

    /** Banners live now; `maxAge` is the time (s) until the set of live banners next changes. */
    async banners(which: 'sticky' | 'tree'): Promise<{ rep: Representation; maxAge: number | null }> {
      const now = clock();
      const s = await catalog(await readVersions());
      const { live, nextChange } = views.liveBanners(s, now);
      const key = `${s.version}:${live.map((b) => b.id).join(',')}`;
      const rep = await reps.get(`banners-${which}`, key, () =>
        jsonRepresentation(which === 'sticky' ? views.stickyBannerBody(live) : views.bannerTreeBody(s, live)),
      );
      return {
        rep,
        maxAge: nextChange ? Math.max(0, Math.floor((nextChange.getTime() - now.getTime()) / 1000)) : null,
      };
    },

    async group(groupId: string): Promise<Representation> {
      const v = await readVersions();
      const [s, p, inv] = await Promise.all([catalog(v), prices(v), inventory(v)]);
      const g = s.groups.get(groupId);
      if (!g) throw notFound('Product group', { groupId });
      const body = views.groupBody(s, g, p, inv, clock());
      return jsonRepresentation(assets ? await assets.group(body, clock()) : body);
    },

    async groupImage(groupId: string, imageId: string, format: views.ImageFormat): Promise<Representation> {
      const s = await catalog(await readVersions());
      const svg = productSvg(s, groupId, imageId);
      if (!svg) throw notFound('Image', { groupId, imageId });
      return images.render(imageId, svg, format);
    },

    async categoryIcon(name: string): Promise<Representation> {
      const s = await catalog(await readVersions());
      const c = [...s.aisles, ...s.collections].find((x) => (x.icon ?? x.slug) === name);
      if (!c) throw notFound('Category icon', { name });
      return images.render(`icon-${name}`, iconSvg(c), 'webp');
    },

    async inventory(branchId: string): Promise<Representation> {
      const v = await readVersions();
      const s = await catalog(v);
      if (!s.branches.has(branchId)) throw notFound('Branch', { branchId });
      return reps.get(`inventory:${branchId}`, `${v.inventory}`, async () =>
        jsonRepresentation(views.inventoryBody(branchId, await inventory(v))),
      );
    },

    /** All prices: JSON with its gzip twin, and the same gzip bytes as a file; built once per price version. */
    async prices(): Promise<{ json: Representation; file: Representation }> {
      const v = await readVersions();
      const json = await reps.get('prices', v.prices, async () =>
        jsonRepresentation(views.pricesBody(await prices(v)), { gzip: true }),
      );
      const file = await reps.get('prices.gz', json.etag, () => representation(json.gzip!, 'application/gzip'));
      return { json, file };
    },

    /** The multi-buy deal of a promotion group running now. */
    async promotionTwo4(groupId: string) {
      const v = await readVersions();
      const [s, p] = await Promise.all([catalog(v), prices(v)]);
      const deal = activePromotions(s, clock())
        .filter((x) => x.type === 'multi_buy' && x.promotionGroupId === groupId)
        .sort((a, b) => a.endsAt.getTime() - b.endsAt.getTime())[0];
      if (!deal) throw notFound('Active multi-buy promotion', { groupId });
      return views.promotionBody(s, deal, p);
    },

    async search(q: SearchQuery) {
      const v = await readVersions();
      const [s, p, inv] = await Promise.all([catalog(v), prices(v), inventory(v)]);
      if (q.branchId && !s.branches.has(q.branchId)) throw notFound('Branch', { branchId: q.branchId });
      const index = await indexes.get('search', s.version, () => ensureSearchIndex(db, s, baseEmbedder, logger));
      const ctx = { db, index, catalog: s, prices: p, inventory: inv, now: clock() };
      // the rankings depend on the query and the catalog only: repeated queries skip the database
      const ranked = await rankings.get(normalize(q.query), s.version, () => rank(ctx, q.query));
      return search(ctx, q, ranked);
    },
  };
}

export type Storefront = ReturnType<typeof createStorefront>;
