/**
 * Storefront API routes (the contract "Storefront API" and "Static assets"): thin handlers that
 * validate, call the storefront service and send its representations with ETag and
 * Cache-Control. Success bodies are plain JSON (or YAML, gzip, images); errors use the
 * {statusCode, body: {error, code, details}} envelope. The sign-in routes are in storefront-auth.ts.
 */
import { jsonRepresentation } from '../representation';
import Router from '@koa/router';
import type { AppDeps } from '../http/deps';
import { AppError, ErrorCode } from '../domain/errors';
import { schemaFilePath } from './app-config';
import { createStorefront } from './storefront';
import type { ImageFormat } from './views';
import { sendRepresentation } from '../http/middleware/etag';
import { registry, z } from '../http/openapi';
import { validate } from '../http/validate';
import { storefrontAuthRoutes } from './auth/routes';
import * as docs from './openapi';

const CACHE = {
  catalog: 'public, max-age=300',
  group: 'public, max-age=60',
  inventory: 'public, max-age=30',
  prices: 'no-cache',
  promotion: 'public, max-age=60',
  image: 'public, max-age=86400',
} as const;

const GroupId = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and - (at most 40)');
const BranchId = z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and - (at most 40)');
/** the contract: "timestamp: number, optional, cache-busting"; accepted and ignored. */
const Timestamp = z
  .string()
  .regex(/^\d{1,16}(\.\d{1,6})?$/, 'a number (e.g. unix milliseconds)')
  .optional();

export const SearchParams = (maxLength: number) =>
  z
    .object({
      query: z
        .string()
        .transform((s) => s.trim())
        .pipe(
          z.string().min(1, 'query must not be empty').max(maxLength, `query must be at most ${maxLength} characters`),
        ),
      limit: z.coerce.number().int().min(1).max(50).default(20),
      branchId: BranchId.optional(),
    })
    .strict();
const InventoryParams = z.object({ timestamp: Timestamp }).strict();
const Two4Params = z.object({ groupId: GroupId, timestamp: Timestamp }).strict();
const PricesBody = z.object({ timestamp: z.union([z.number(), Timestamp]).optional() }).strict();

const IMAGE_ID = /^([A-Za-z0-9_-]{1,60})(?:\.([a-z]{3,4}))?$/;
const EXT: Record<string, ImageFormat> = { webp: 'webp', png: 'png', jpg: 'jpg', jpeg: 'jpg' };

export function storefrontRoutes(deps: Pick<AppDeps, 'clock' | 'config' | 'db' | 'logger' | 'temporal'>): Router {
  const clock = () => new Date((deps.clock ?? Date.now)());
  const sf = createStorefront({ db: deps.db, config: deps.config, logger: deps.logger, clock });
  const r = new Router();

  r.get('/api/v2/catalog-tree/catalog-tree', async (ctx) =>
    sendRepresentation(ctx, await sf.catalogTree(), { cacheControl: CACHE.catalog }),
  );

  for (const [route, which] of [
    ['/api/v2/catalog-tree/sticky-banner', 'sticky'],
    ['/api/v2/catalog-tree/banner-tree', 'tree'],
  ] as const) {
    r.get(route, async (ctx) => {
      const { rep, maxAge } = await sf.banners(which);
      sendRepresentation(ctx, rep, { cacheControl: `public, max-age=${Math.min(300, maxAge ?? 300)}` });
    });
  }

  r.get('/api/product/productlist/onlineData', async (ctx) =>
    sendRepresentation(ctx, await sf.productList(), { cacheControl: sf.assetCacheControl(300) }),
  );

  r.get('/api/search2/semantic_search', async (ctx) => {
    const q = validate(SearchParams(deps.config.storefront.searchMaxQueryLength), ctx.query);
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = await sf.search(q);
  });

  r.get('/api/group/read/:groupId', async (ctx) => {
    const groupId = validate(GroupId, ctx.params.groupId, 'groupId');
    sendRepresentation(ctx, await sf.group(groupId), { cacheControl: sf.assetCacheControl(60) });
  });

  r.get('/api/group/image/:groupId/:imageId', async (ctx) => {
    const groupId = validate(GroupId, ctx.params.groupId, 'groupId');
    const m = IMAGE_ID.exec(ctx.params.imageId);
    if (!m)
      throw new AppError(
        ErrorCode.INVALID_INPUT,
        'imageId must be <groupId>-<n>, optionally with .webp, .png or .jpg',
        { field: 'imageId' },
      );
    const format = m[2] === undefined ? 'webp' : EXT[m[2]];
    if (!format)
      throw new AppError(ErrorCode.INVALID_INPUT, 'image format must be webp, png or jpg', {
        field: 'imageId',
        supported: Object.keys(EXT),
      });
    sendRepresentation(ctx, await sf.groupImage(groupId, m[1], format), { cacheControl: CACHE.image });
  });

  r.get('/api/inventory2/:branchId', async (ctx) => {
    const branchId = validate(BranchId, ctx.params.branchId, 'branchId');
    validate(InventoryParams, ctx.query);
    sendRepresentation(ctx, await sf.inventory(branchId), { cacheControl: CACHE.inventory });
  });

  r.post('/api/price/getallgz', async (ctx) => {
    // a body that is not JSON: 415 by the app's content-type rule (src/http/middleware/body.ts)
    validate(PricesBody, ctx.request.body);
    const { json, file } = await sf.prices();
    // Accept: application/gzip asks for the .gz file itself (as the price files of the object store)
    if (ctx.accepts('application/json', 'application/gzip') === 'application/gzip')
      sendRepresentation(ctx, file, { cacheControl: CACHE.prices });
    else sendRepresentation(ctx, json, { cacheControl: CACHE.prices, gzipByDefault: true });
  });

  r.get('/api/promotion/get-two4', async (ctx) => {
    const q = validate(Two4Params, ctx.query);
    // a strong ETag over the answer (it changes with the catalog, the prices and the clock), so If-None-Match gets 304
    sendRepresentation(ctx, jsonRepresentation(await sf.promotionTwo4(q.groupId)), { cacheControl: CACHE.promotion });
  });

  r.get('/public/image/category/:file', async (ctx) => {
    const m = /^([a-z0-9_-]{1,40})\.webp$/.exec(ctx.params.file);
    if (!m) throw new AppError(ErrorCode.NOT_FOUND, 'Category icon not found', { file: ctx.params.file });
    sendRepresentation(ctx, await sf.categoryIcon(m[1]), { cacheControl: CACHE.image });
  });

  r.get('/app-first-page.json', async (ctx) =>
    sendRepresentation(ctx, await sf.appFirstPage(), { cacheControl: sf.assetCacheControl(300) }),
  );
  r.get(schemaFilePath(deps.config, 'config.yaml'), async (ctx) =>
    sendRepresentation(ctx, await sf.configYaml(), { cacheControl: CACHE.catalog }),
  );
  r.get(schemaFilePath(deps.config, 'firstPageCat.yaml'), async (ctx) =>
    sendRepresentation(ctx, await sf.firstPageCatYaml(), { cacheControl: CACHE.catalog }),
  );

  r.use(storefrontAuthRoutes(deps, sf, clock).routes());
  return r;
}

/** Paths that answer CORS for the shop's origin. */
/**
 * The storefront's paths, as one pattern built once: the front middleware tests it on every
 * request (CORS) without calling into the storefront.
 */
export function storefrontPathPattern(deps: Pick<AppDeps, 'config'>): RegExp {
  const { schemaBasePath, schemaName } = deps.config.storefront;
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(
    `^(?:/(?:api|auth|public)/|/app-first-page\\.json$|${esc(`${schemaBasePath}/${schemaName}/`)}|/dev/identity$)`,
  );
}

docs.register(registry);
