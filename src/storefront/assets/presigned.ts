/**
 * Object-store links in the storefront's answers (when an object store is configured):
 *  - /app-first-page.json: `objectStore` with the price and image bucket bases, the CDN base, the
 *    path that hands out a branch's price file URL, and a presigned URL of every branch's price file;
 *  - group reads: every image's presigned URLs (webp, png, jpg) and CDN paths;
 *  - the product list: a presigned URL and the CDN path of each group's and variant's image.
 * The gateway's own image paths stay as they are (`image`, `webp`/`png`/`jpg`), so a client whose
 * object store is out of reach falls back to them.
 */
import type { Config } from '../../config';
import type { CatalogSnapshot } from '../snapshot';
import type { ImageFormat } from '../views';
import { createPresigner, objectStoreReady, type Presigner } from '../../object-store';
import { imageKey, priceKey } from './keys';

export const PRICE_URL_PATH = '/api/price/url/{branchId}';

/** `{cdn}/{productId}` (webp) or `{cdn}/{productId}-{variant}`, variant png or jpg (or webp). */
export const cdnPath = (cdnBaseUrl: string, productId: string, variant?: ImageFormat): string =>
  `${cdnBaseUrl}/${productId}${variant && variant !== 'webp' ? `-${variant}` : ''}`;

/** Parses a CDN file name: `G123-1` -> webp, `G123-1-png`, `G123-1-jpg`, `G123-1-webp`. */
export function parseCdnFile(file: string): { groupId: string; productId: string; format: ImageFormat } | undefined {
  const m = /^(([A-Za-z0-9_]{1,40})-\d{1,6})(?:-(webp|png|jpg))?$/.exec(file);
  return m ? { productId: m[1], groupId: m[2], format: (m[3] as ImageFormat | undefined) ?? 'webp' } : undefined;
}

/** `/api/group/image/{groupId}/{imageId}.{ext}` -> its object key. */
const GATEWAY_IMAGE = /^\/api\/group\/image\/([A-Za-z0-9_-]+)\/([A-Za-z0-9_-]+)\.(webp|png|jpg)$/;

interface VariantLike {
  productId: string;
  image: string;
  [k: string]: unknown;
}
interface GroupLike {
  groupId: string;
  image: string;
  variants: VariantLike[];
  [k: string]: unknown;
}

export interface AssetLinks {
  presigner: Presigner;
  /** memo key part: answers of one signing window carry the same URLs */
  windowKey(now: Date): string;
  /** `public, max-age=N` with N no longer than a signing window */
  cacheControl(maxAgeSeconds: number, now: Date): string;
  productList<T extends { groups: GroupLike[] }>(body: T, now: Date): Promise<T & { imageUrlsExpireAt: string }>;
  group<T extends GroupLike & { images: { imageId: string }[] }>(body: T, now: Date): Promise<T>;
  firstPage<T extends object>(body: T, s: CatalogSnapshot, now: Date): Promise<T & { objectStore: unknown }>;
}

export function createAssetLinks(config: Config): AssetLinks | undefined {
  const c = config.objectStore;
  if (!objectStoreReady(c)) return undefined;
  const presigner = createPresigner(c);
  const { images, prices } = c.buckets;

  const signedImage = async (gatewayPath: string, at: Date): Promise<string | undefined> => {
    const m = GATEWAY_IMAGE.exec(gatewayPath);
    return m ? (await presigner.url(images, imageKey(m[1], m[2], m[3] as ImageFormat), at)).url : undefined;
  };
  const windowOf = (now: Date) => presigner.windowStart(now);

  return {
    presigner,
    windowKey: (now) => String(windowOf(now).getTime()),
    cacheControl(maxAge, now) {
      const left = presigner.windowSeconds - Math.floor((now.getTime() - windowOf(now).getTime()) / 1000);
      return `public, max-age=${Math.max(0, Math.min(maxAge, left))}`;
    },

    async productList(body, now) {
      const at = windowOf(now);
      const groups = [];
      for (const g of body.groups) {
        const variants = [];
        for (const v of g.variants)
          variants.push({
            ...v,
            imageUrl: await signedImage(v.image, at),
            cdnImage: cdnPath(c.cdnBaseUrl, v.productId),
          });
        groups.push({ ...g, imageUrl: await signedImage(g.image, at), variants });
      }
      return {
        ...body,
        groups,
        imageUrlsExpireAt: new Date(at.getTime() + c.presignExpirySeconds * 1000).toISOString(),
      };
    },

    async group(body, now) {
      const at = windowOf(now);
      const formats: ImageFormat[] = ['webp', 'png', 'jpg'];
      const imagesOut = [];
      for (const img of body.images) {
        const urls: Record<string, string> = {};
        for (const f of formats)
          urls[f] = (await presigner.url(images, imageKey(body.groupId, img.imageId, f), at)).url;
        imagesOut.push({
          ...img,
          urls,
          cdn: Object.fromEntries(formats.map((f) => [f, cdnPath(c.cdnBaseUrl, img.imageId, f)])),
        });
      }
      const variants = [];
      for (const v of body.variants)
        variants.push({ ...v, imageUrl: await signedImage(v.image, at), cdnImage: cdnPath(c.cdnBaseUrl, v.productId) });
      return {
        ...body,
        imageUrl: await signedImage(body.image, at),
        images: imagesOut,
        variants,
        imageUrlsExpireAt: new Date(at.getTime() + c.presignExpirySeconds * 1000).toISOString(),
      };
    },

    async firstPage(body, s, now) {
      const at = windowOf(now);
      const priceUrls: Record<string, string> = {};
      for (const branchId of s.branches.keys())
        priceUrls[branchId] = (await presigner.url(prices, priceKey(branchId), at)).url;
      return {
        ...body,
        objectStore: {
          priceBucketUrl: presigner.bucketUrl(prices),
          priceFileKey: '{branchId}.gz',
          priceUrl: PRICE_URL_PATH,
          priceUrls,
          imageBucketUrl: presigner.bucketUrl(images),
          imageKey: '{groupId}/{imageId}.{webp|png|jpg}',
          cdnUrl: c.cdnBaseUrl,
          cdnPath: '{cdnUrl}/{productId}[-{png|jpg}]',
          expiresAt: new Date(at.getTime() + c.presignExpirySeconds * 1000).toISOString(),
        },
      };
    },
  };
}
