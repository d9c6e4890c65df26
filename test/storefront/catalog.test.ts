/** Storefront catalog endpoints over HTTP on the seeded catalog: tree, banners, product list, groups, promotions, ETag/304. */
import request from 'supertest';
import { storefrontApp, storefrontError, type StorefrontTestApp } from './helpers';

let t: StorefrontTestApp;
beforeAll(async () => {
  t = await storefrontApp();
});
afterAll(() => t.close());
beforeEach(() => t.at('2026-11-25T12:00:00+07:00'));
const get = (path: string) => request(t.app.callback()).get(path);

describe('GET /api/v2/catalog-tree/catalog-tree', () => {
  it('has the 19 aisles with their subcategories, the 8 collections and the 27 icons in order', async () => {
    const res = await get('/api/v2/catalog-tree/catalog-tree');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.aisles).toHaveLength(19);
    expect(res.body.collections).toHaveLength(8);
    expect(res.body.aisles.flatMap((a: { children: unknown[] }) => a.children)).toHaveLength(97);
    expect(res.body.aisles[0]).toMatchObject({
      id: 'cat-beef',
      slug: 'beef',
      nameTh: 'เนื้อวัว',
      position: 1,
      groupCount: 24,
      icon: '/public/image/category/beef.webp',
    });
    expect(res.body.aisles[0].children[0]).toMatchObject({ id: 'cat-beef-wagyu', nameEn: 'Wagyu', groupCount: 4 });
    expect(res.body.aisles.reduce((n: number, a: { groupCount: number }) => n + a.groupCount, 0)).toBe(473);
    expect(res.body.collections.find((c: { slug: string }) => c.slug === 'special-offer').groupCount).toBe(54);
    expect(res.body.iconOrder).toHaveLength(27);
    expect(res.body.iconOrder.slice(0, 3)).toEqual(['beef', 'pork', 'chicken']);
  });

  it('sends ETag and Cache-Control, and 304 without a body for a matching If-None-Match (strong, weak, list or *)', async () => {
    const first = await get('/api/v2/catalog-tree/catalog-tree');
    const etag = first.headers.etag;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers['cache-control']).toBe('public, max-age=300');
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const again = await get('/api/v2/catalog-tree/catalog-tree').set('If-None-Match', inm);
      expect(again.status).toBe(304);
      expect(again.text ?? '').toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe('public, max-age=300');
    }
    const other = await get('/api/v2/catalog-tree/catalog-tree').set('If-None-Match', '"something-else"');
    expect(other.status).toBe(200);
  });

  it('shows a catalog change in the next answer, with a new ETag', async () => {
    const before = await get('/api/v2/catalog-tree/catalog-tree');
    await t.stack.db('categories').where({ id: 'cat-beef' }).update({ name_en: 'Beef & Veal' });
    try {
      const after = await get('/api/v2/catalog-tree/catalog-tree').set('If-None-Match', before.headers.etag);
      expect(after.status).toBe(200);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect(after.body.aisles[0].nameEn).toBe('Beef & Veal');
    } finally {
      await t.stack.db('categories').where({ id: 'cat-beef' }).update({ name_en: 'Beef' });
    }
  });
});

describe('banners: only those running now', () => {
  const ids = (list: { id: string }[]) => list.map((b) => b.id).sort();

  it('sticky banner inside its dates, null outside', async () => {
    const res = await get('/api/v2/catalog-tree/sticky-banner');
    expect(res.status).toBe(200);
    expect(res.body.banner).toMatchObject({ id: 'BN-S-001', placement: 'sticky', link: '/collection/pre-order' });
    expect(res.headers.etag).toBeDefined();
    t.at('2026-10-15T12:00:00+07:00');
    expect((await get('/api/v2/catalog-tree/sticky-banner')).body).toEqual({ banner: null });
    t.at('2027-02-01T00:00:00+07:00');
    expect((await get('/api/v2/catalog-tree/sticky-banner')).body).toEqual({ banner: null });
  });

  it('banner tree: home and category banners whose dates include now (ends inclusive)', async () => {
    t.at('2026-11-22T23:59:59+07:00'); // last second of BN-H-004 (2026-11-09..2026-11-22)
    const last = await get('/api/v2/catalog-tree/banner-tree');
    expect(ids(last.body.home)).toContain('BN-H-004');

    t.at('2026-11-25T12:00:00+07:00');
    const res = await get('/api/v2/catalog-tree/banner-tree');
    expect(res.status).toBe(200);
    expect(ids(res.body.home)).toEqual(['BN-H-001', 'BN-H-005', 'BN-H-006', 'BN-H-007', 'BN-H-008']);
    const category = res.body.categories.flatMap((c: { banners: { id: string }[] }) => c.banners);
    expect(category.map((b: { id: string }) => b.id)).not.toContain('BN-C-001'); // starts 2026-12-01
    const seafood = (body: { categories: { categoryId: string; slug: string; banners: { id: string }[] }[] }) =>
      body.categories.find((c) => c.categoryId === 'cat-seafood')!;
    expect(res.body.categories.map((c: { slug: string }) => c.slug)[0]).toBe('beef'); // catalog order
    expect(seafood(res.body)).toMatchObject({ slug: 'seafood' });
    expect(seafood(res.body).banners.map((b) => b.id)).toEqual(['BN-C-002', 'BN-C-003']);

    t.at('2026-12-02T12:00:00+07:00');
    const december = await get('/api/v2/catalog-tree/banner-tree');
    expect(ids(december.body.home)).toEqual(['BN-H-001', 'BN-H-002', 'BN-H-005', 'BN-H-006', 'BN-H-007', 'BN-H-008']);
    expect(seafood(december.body).banners.map((b) => b.id)).toEqual(['BN-C-001', 'BN-C-002', 'BN-C-003']);
    expect(december.headers.etag).not.toBe(res.headers.etag);

    t.at('2026-10-01T00:00:00+07:00');
    expect((await get('/api/v2/catalog-tree/banner-tree')).body).toEqual({ home: [], categories: [] });
  });

  it('max-age never reaches past the next start or end of a banner', async () => {
    t.at('2026-11-22T23:59:00+07:00'); // BN-H-004 ends at 23:59:59
    const res = await get('/api/v2/catalog-tree/banner-tree');
    expect(res.headers['cache-control']).toBe('public, max-age=59');
  });
});

describe('GET /api/product/productlist/onlineData', () => {
  it('lists every group with its variants', async () => {
    const res = await get('/api/product/productlist/onlineData');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(473);
    expect(res.body.groups).toHaveLength(473);
    expect(res.body.groups.flatMap((g: { variants: unknown[] }) => g.variants)).toHaveLength(970);
    expect(res.body.groups[0]).toMatchObject({
      groupId: 'G872104',
      brand: 'Stone Axe',
      categoryId: 'cat-beef-wagyu',
      aisleId: 'cat-beef',
      countryCode: 'AU',
      storage: 'chilled',
      image: '/api/group/image/G872104/G872104-1.webp',
    });
    expect(res.body.groups[0].variants[0]).toEqual({
      productId: 'G872104-1',
      variant: '250 g',
      nameEn: 'Australian Wagyu Striploin Steak MB8-9 250 g',
      nameTh: 'สเต็กสันนอกวากิวออสเตรเลีย MB8-9 250 กรัม',
      barcode: '9306986070237',
      unit: 'g',
      size: 250,
      weightGrams: 272,
      vatable: false,
      image: '/api/group/image/G872104/G872104-1.webp',
    });
  });

  it('is gzip-encoded for clients that accept gzip; either ETag revalidates', async () => {
    const gz = await get('/api/product/productlist/onlineData').set('Accept-Encoding', 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toMatch(/Accept-Encoding/);
    expect(gz.headers.etag).toMatch(/-gz"$/);
    expect(gz.body.count).toBe(473);
    const plain = await get('/api/product/productlist/onlineData').set('Accept-Encoding', 'identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.etag).toBe(gz.headers.etag.replace(/-gz"$/, '"'));
    expect(
      (
        await get('/api/product/productlist/onlineData')
          .set('Accept-Encoding', 'gzip')
          .set('If-None-Match', plain.headers.etag)
      ).status,
    ).toBe(304);
    expect(
      (
        await get('/api/product/productlist/onlineData')
          .set('Accept-Encoding', 'identity')
          .set('If-None-Match', gz.headers.etag)
      ).status,
    ).toBe(304);
  });
});

describe('GET /api/group/read/{groupId}', () => {
  it('details of a group: variants with THB prices and stock, images, category path', async () => {
    const res = await get('/api/group/read/G872104');
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBeDefined();
    expect(res.body).toMatchObject({
      groupId: 'G872104',
      nameEn: 'Australian Wagyu Striploin Steak MB8-9',
      category: { id: 'cat-beef-wagyu', nameEn: 'Wagyu' },
      aisle: { id: 'cat-beef', slug: 'beef' },
      keywords: expect.arrayContaining(['wagyu', 'วากิว']),
      promotions: [],
    });
    expect(res.body.variants.map((v: { productId: string; price: number }) => [v.productId, v.price])).toEqual([
      ['G872104-1', 1290],
      ['G872104-2', 2490],
      ['G872104-3', 4890],
    ]);
    expect(res.body.images[1]).toEqual({
      imageId: 'G872104-2',
      webp: '/api/group/image/G872104/G872104-2.webp',
      png: '/api/group/image/G872104/G872104-2.png',
      jpg: '/api/group/image/G872104/G872104-2.jpg',
    });
    expect(typeof res.body.variants[0].inStock).toBe('boolean');
  });

  it('lists the promotions running now', async () => {
    const res = await get('/api/group/read/G117390'); // in the Mama multi-buy led by G851378
    expect(res.body.promotions.map((p: { promotionId: string }) => p.promotionId)).toEqual(['PR2611001']);
  });

  it('404 NOT_FOUND for an unknown group, 400 INVALID_INPUT for a malformed id', async () => {
    const missing = await get('/api/group/read/G000000');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(storefrontError('NOT_FOUND', 404));
    expect(missing.body.body.details).toEqual({ groupId: 'G000000' });
    const bad = await get('/api/group/read/G87%20104');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(storefrontError('INVALID_INPUT', 400));
  });
});

describe('GET /api/promotion/get-two4', () => {
  it('the multi-buy deal of a promotion group running now', async () => {
    const res = await get('/api/promotion/get-two4?groupId=G851378');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      promotionId: 'PR2611001',
      type: 'multi_buy',
      promotionGroupId: 'G851378',
      groupIds: ['G851378', 'G117390'],
      productIds: ['G851378-1', 'G117390-1'],
      buyQuantity: 10,
      payPrice: 60,
      titleEn: 'Mama noodles, any 10 packs for ฿60',
    });
    expect(res.body.items).toHaveLength(2);
    expect(res.body.items[0]).toMatchObject({ productId: 'G851378-1', groupId: 'G851378', price: expect.any(Number) });
  });

  it('has an ETag, and If-None-Match with it is 304', async () => {
    const first = await get('/api/promotion/get-two4?groupId=G851378');
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await get('/api/promotion/get-two4?groupId=G851378').set('If-None-Match', first.headers.etag);
    expect(again.status).toBe(304);
  });

  it('404 before the deal starts and after it ends; 200 while it runs', async () => {
    const notYet = await get('/api/promotion/get-two4?groupId=G519863'); // Coca-Cola, from 2026-12-01
    expect(notYet.status).toBe(404);
    expect(notYet.body).toEqual(storefrontError('NOT_FOUND', 404));
    t.at('2026-12-05T10:00:00+07:00');
    expect((await get('/api/promotion/get-two4?groupId=G519863')).body).toMatchObject({
      promotionId: 'PR2612004',
      buyQuantity: 2,
      payPrice: 175,
    });
    t.at('2027-01-16T00:00:00+07:00');
    expect((await get('/api/promotion/get-two4?groupId=G519863')).status).toBe(404);
  });

  it('404 for a group that leads no multi-buy (a member, a percent-off group, an unknown id)', async () => {
    for (const id of ['G117390', 'G984804', 'G000000'])
      expect((await get(`/api/promotion/get-two4?groupId=${id}`)).status).toBe(404);
  });

  it('400 MISSING_FIELD without groupId, INVALID_INPUT for a malformed one or an unknown parameter', async () => {
    const missing = await get('/api/promotion/get-two4');
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(storefrontError('MISSING_FIELD', 400));
    expect(missing.body.body.details.field).toBe('groupId');
    expect((await get('/api/promotion/get-two4?groupId=a/b')).body).toEqual(storefrontError('INVALID_INPUT', 400));
    expect((await get('/api/promotion/get-two4?groupId=G851378&foo=1')).body).toEqual(
      storefrontError('INVALID_INPUT', 400),
    );
  });
});

describe('OpenAPI', () => {
  it('/openapi.json describes every storefront endpoint', async () => {
    const res = await get('/openapi.json');
    for (const p of [
      '/api/v2/catalog-tree/catalog-tree',
      '/api/v2/catalog-tree/sticky-banner',
      '/api/v2/catalog-tree/banner-tree',
      '/api/product/productlist/onlineData',
      '/api/search2/semantic_search',
      '/api/group/read/{groupId}',
      '/api/group/image/{groupId}/{imageId}',
      '/api/inventory2/{branchId}',
      '/api/price/getallgz',
      '/api/promotion/get-two4',
      '/public/image/category/{name}.webp',
      '/app-first-page.json',
      '/schema/talat/master/webData/config.yaml',
      '/schema/talat/master/webData/firstPageCat.yaml',
      '/auth/apikey/get',
      '/auth/invalidate/invalidate',
      '/dev/identity',
    ])
      expect(res.body.paths[p]).toBeDefined();
  });
});
