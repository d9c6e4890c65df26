/**
 * Storefront assets on the real object store (global-setup's): publication of the per-branch
 * price files and the group images, presigned URLs (fetch, expiry, tampering), the CDN path, and
 * republication of only what changed.
 */
import { DeleteObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import request from 'supertest';
import { createPresigner } from '../../src/object-store';
import type { AssetPublisher } from '../../src/storefront/assets/publisher';
import { binary, storefrontApp, storefrontError, type StorefrontTestApp } from '../storefront/helpers';
import { configFor, objectStoreEnv, testPublisher, TEST_GROUPS } from './helpers';

let t: StorefrontTestApp;
let env: Record<string, string>;
let publisher: AssetPublisher;
const BRANCHES = 12;
let imagesOfTestGroups = 0;

beforeAll(async () => {
  env = objectStoreEnv();
  t = await storefrontApp(env);
  t.at(new Date().toISOString()); // presigned URLs are checked against the store's clock
  publisher = testPublisher(configFor(env, t.dataDir), { db: t.stack.db });
  const variants = await t.stack.db('products').whereIn('group_id', TEST_GROUPS).count<{ n: string }[]>({ n: '*' });
  imagesOfTestGroups = Number(variants[0].n) * 3;
});
afterAll(async () => {
  await publisher?.s3.destroy();
  await t.close();
});

const get = (path: string) => request(t.app.callback()).get(path);
const priceFile = async (branchId: string) => {
  const res = await get(`/api/price/url/${branchId}`);
  expect(res.status).toBe(200);
  const file = await fetch(res.body.url);
  expect(file.status).toBe(200);
  return {
    url: res.body.url as string,
    etag: file.headers.get('etag'),
    body: (await file.json()) as { branchId: string; products: Record<string, { price: number; stock: number }> },
  };
};

describe('publication', () => {
  it('before the first publication the price file URL is 503 (the store is needed), the rest of the API answers', async () => {
    const res = await get('/api/price/url/B001');
    expect(res.status).toBe(503);
    expect(res.body).toEqual(storefrontError('SERVICE_UNAVAILABLE', 503));
    expect(res.headers['retry-after']).toBe('5');
    expect((await get('/api/product/productlist/onlineData')).status).toBe(200);
  });

  it('publishes every branch price file and the images, then nothing while nothing changes', async () => {
    const first = await publisher.publishOnce();
    expect(first.uploaded.filter((k) => k.startsWith(`${env.S3_BUCKET_PRICES}/`))).toHaveLength(BRANCHES);
    expect(first.uploaded.filter((k) => k.startsWith(`${env.S3_BUCKET_IMAGES}/`))).toHaveLength(imagesOfTestGroups);
    expect(first.uploaded).toContain(`${env.S3_BUCKET_IMAGES}/G872104/G872104-1.png`);
    const again = await publisher.publishOnce();
    expect(again.uploaded).toEqual([]);
    expect(again.unchanged).toBe(BRANCHES + imagesOfTestGroups);
    const runs = await t.stack.db('storefront_asset_runs').orderBy('id', 'desc').limit(2);
    expect(runs.map((r) => [r.ok, r.uploaded])).toEqual([
      [true, 0],
      [true, BRANCHES + imagesOfTestGroups],
    ]);
  });

  it('price files are gzip JSON with Content-Encoding, Content-Type and Cache-Control; images carry their type and a long max-age', async () => {
    const head = await publisher.s3.send(new HeadObjectCommand({ Bucket: env.S3_BUCKET_PRICES, Key: 'B001.gz' }));
    expect(head).toMatchObject({ ContentEncoding: 'gzip', ContentType: 'application/json', CacheControl: 'no-cache' });
    const img = await publisher.s3.send(
      new HeadObjectCommand({ Bucket: env.S3_BUCKET_IMAGES, Key: 'G872104/G872104-2.jpg' }),
    );
    expect(img).toMatchObject({ ContentType: 'image/jpeg', CacheControl: 'public, max-age=86400' });
  });

  it('a shop client following the load order gets the branch price file from the store through a signed URL', async () => {
    const first = await get('/app-first-page.json');
    expect(first.status).toBe(200);
    const os = first.body.objectStore;
    expect(os).toMatchObject({
      priceUrl: '/api/price/url/{branchId}',
      priceFileKey: '{branchId}.gz',
      cdnUrl: expect.stringMatching(/\/cdn$/),
    });
    expect(Object.keys(os.priceUrls)).toHaveLength(BRANCHES);
    expect(os.priceUrls.B001).toMatch(
      new RegExp(`^${env.S3_ENDPOINT}/${env.S3_BUCKET_PRICES}/B001\\.gz\\?.*X-Amz-Signature=[0-9a-f]{64}`),
    );
    expect(os.priceUrls.B001).toContain('X-Amz-Credential=');

    const inventory = await get('/api/inventory2/B001');
    const raw = await fetch(os.priceUrls.B001, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-encoding')).toBe('gzip');
    const file = (await raw.json()) as {
      branchId: string;
      currency: string;
      count: number;
      products: Record<string, { price: number; stock: number }>;
    };
    expect(file).toMatchObject({ branchId: 'B001', currency: 'THB', count: 970 });
    expect(file.products['G872104-1']).toEqual({ price: 1290, stock: inventory.body.products['G872104-1'] });

    const viaApi = await priceFile('B001');
    expect(viaApi.body.products['G872104-2'].price).toBe(2490);
  });

  it('GET /api/price/url/{branchId}: URL, expiry, ETag of the file; 404 for an unknown branch, 400 for a bad id', async () => {
    const res = await get('/api/price/url/B002?timestamp=1795334634576');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({
      branchId: 'B002',
      contentEncoding: 'gzip',
      etag: expect.stringMatching(/^"[0-9a-f]{32}"$/),
    });
    const left = Date.parse(res.body.expiresAt) - Date.now();
    expect(left).toBeGreaterThan(((900 * 2) / 3 - 5) * 1000);
    expect(left).toBeLessThanOrEqual(900 * 1000);
    expect((await get('/api/price/url/B999')).body).toEqual(storefrontError('NOT_FOUND', 404));
    expect((await get('/api/price/url/B0 1')).status).toBe(400);
  });
});

describe('presigned URLs', () => {
  it('are refused when expired, tampered with, or stripped of their signature', async () => {
    const { url } = await priceFile('B003');
    const presigner = createPresigner(configFor(env, t.dataDir).objectStore as never);
    const expired = await presigner.url(env.S3_BUCKET_PRICES, 'B003.gz', new Date(Date.now() - 120_000), 60);
    expect((await fetch(expired.url)).status).toBe(403);
    const fresh = await presigner.url(env.S3_BUCKET_PRICES, 'B003.gz', new Date(), 60);
    expect((await fetch(fresh.url)).status).toBe(200);

    const sig = /X-Amz-Signature=([0-9a-f]{64})/.exec(url)![1];
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`;
    expect((await fetch(url.replace(sig, flipped))).status).toBe(403);
    expect((await fetch(url.replace('B003.gz', 'B004.gz'))).status).toBe(403); // the signature covers the key
    expect((await fetch(url.replace(/X-Amz-Expires=\d+/, 'X-Amz-Expires=604800'))).status).toBe(403); // and the expiry
    expect((await fetch(url.split('?')[0])).status).toBe(403); // anonymous reads are refused
  });

  it('group reads carry signed URLs and CDN paths of every image; the URLs fetch the image from the store', async () => {
    const res = await get('/api/group/read/G872104');
    expect(res.status).toBe(200);
    const img = res.body.images[1];
    expect(img).toMatchObject({ imageId: 'G872104-2', png: '/api/group/image/G872104/G872104-2.png' });
    expect(img.cdn).toEqual({
      webp: expect.stringMatching(/\/cdn\/G872104-2$/),
      png: expect.stringMatching(/\/cdn\/G872104-2-png$/),
      jpg: expect.stringMatching(/\/cdn\/G872104-2-jpg$/),
    });
    for (const [format, mime] of [
      ['webp', 'image/webp'],
      ['png', 'image/png'],
      ['jpg', 'image/jpeg'],
    ]) {
      const r = await fetch(img.urls[format]);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe(mime);
      const meta = await sharp(Buffer.from(await r.arrayBuffer())).metadata();
      expect(meta).toMatchObject({ width: 400, height: 400 });
    }
    expect(res.body.variants[0].imageUrl).toBe(res.body.images[0].urls.webp);
    expect(res.headers['cache-control']).toMatch(/^public, max-age=\d+$/);
  });

  it('the product list carries a signed image URL per group and variant, the same within a signing window', async () => {
    const a = await get('/api/product/productlist/onlineData');
    const b = await get('/api/product/productlist/onlineData');
    expect(a.status).toBe(200);
    expect(b.headers.etag).toBe(a.headers.etag);
    const g = a.body.groups.find((x: { groupId: string }) => x.groupId === 'G195447');
    expect(g.imageUrl).toMatch(new RegExp(`/${env.S3_BUCKET_IMAGES}/G195447/G195447-1\\.webp\\?`));
    expect(g.variants[2].cdnImage).toMatch(/\/cdn\/G195447-3$/);
    expect((await fetch(g.variants[2].imageUrl)).status).toBe(200);
    expect(Date.parse(a.body.imageUrlsExpireAt)).toBeGreaterThan(Date.now());
    const maxAge = Number(/max-age=(\d+)/.exec(a.headers['cache-control'])![1]);
    expect(maxAge).toBeLessThanOrEqual(300);
  });

  it('the CDN path {cdn}/{productId}[-{variant}] is served by the gateway from the image bucket', async () => {
    const png = await get('/cdn/G872104-1-png').buffer(true).parse(binary);
    expect(png.status).toBe(200);
    expect(png.headers['content-type']).toBe('image/png');
    expect((await sharp(png.body as Buffer).metadata()).format).toBe('png');
    const webp = await get('/cdn/G872104-1');
    expect(webp.headers['content-type']).toBe('image/webp');
    expect(webp.headers.etag).toBeDefined();
    expect((await get('/cdn/G872104-1').set('If-None-Match', webp.headers.etag)).status).toBe(304);
    expect((await get('/cdn/G000000-1-png')).status).toBe(404);
    expect((await get('/cdn/not-an-image.gif')).status).toBe(404);
  });
});

describe('republication', () => {
  const stockOf = async (branchId: string, productId: string) =>
    (await t.stack.db('inventory').where({ branch_id: branchId, product_id: productId }).first()).quantity as number;

  it('a stock change at one branch republishes that branch price file alone', async () => {
    const before = await stockOf('B002', 'G195447-1');
    const b001 = await priceFile('B001');
    await t.stack
      .db('inventory')
      .where({ branch_id: 'B002', product_id: 'G195447-1' })
      .update({ quantity: before + 11 });
    try {
      const r = await publisher.publishOnce();
      expect(r.uploaded).toEqual([`${env.S3_BUCKET_PRICES}/B002.gz`]);
      expect((await priceFile('B002')).body.products['G195447-1'].stock).toBe(before + 11);
      expect((await priceFile('B001')).etag).toBe(b001.etag);
    } finally {
      await t.stack.db('inventory').where({ branch_id: 'B002', product_id: 'G195447-1' }).update({ quantity: before });
    }
    expect((await publisher.publishOnce()).uploaded).toEqual([`${env.S3_BUCKET_PRICES}/B002.gz`]);
  });

  it('a price change republishes the price files (prices are shop-wide) and no image', async () => {
    const row = await t.stack.db('prices').where({ product_id: 'G872104-3' }).first();
    await t.stack.db('prices').where({ product_id: 'G872104-3' }).update({ price_satang: 459000 });
    try {
      const r = await publisher.publishOnce();
      expect(r.uploaded).toHaveLength(BRANCHES);
      expect(r.uploaded.every((k) => k.startsWith(`${env.S3_BUCKET_PRICES}/`))).toBe(true);
      expect((await priceFile('B007')).body.products['G872104-3'].price).toBe(4590);
    } finally {
      await t.stack.db('prices').where({ product_id: 'G872104-3' }).update({ price_satang: row.price_satang });
    }
    expect((await publisher.publishOnce()).uploaded).toHaveLength(BRANCHES);
  });

  it("a group's new name redraws that group's images alone; an object deleted from the bucket comes back", async () => {
    const g = await t.stack.db('product_groups').where({ group_id: 'G195447' }).first();
    await t.stack
      .db('product_groups')
      .where({ group_id: 'G195447' })
      .update({ name_en: `${g.name_en} (new pack)` });
    try {
      const r = await publisher.publishOnce();
      expect(r.uploaded.length).toBeGreaterThan(0);
      expect(r.uploaded.every((k) => k.startsWith(`${env.S3_BUCKET_IMAGES}/G195447/`))).toBe(true);
    } finally {
      await t.stack.db('product_groups').where({ group_id: 'G195447' }).update({ name_en: g.name_en });
    }
    await publisher.publishOnce();
    await publisher.s3.send(new DeleteObjectCommand({ Bucket: env.S3_BUCKET_PRICES, Key: 'B005.gz' }));
    expect((await get('/api/price/url/B005')).status).toBe(503);
    expect((await publisher.publishOnce()).uploaded).toEqual([`${env.S3_BUCKET_PRICES}/B005.gz`]);
    expect((await get('/api/price/url/B005')).status).toBe(200);
  });
});
