/** Generated images, category icons, /app-first-page.json and the YAML schema files. */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import request from 'supertest';
import YAML from 'yaml';
import { binary, storefrontApp, storefrontError, type StorefrontTestApp } from './helpers';

const ICONS = [
  'beef',
  'pork',
  'chicken',
  'lamb',
  'seafood',
  'delicatessen',
  'frozen-food',
  'dairy',
  'bakery',
  'fruit_new',
  'veg',
  'brand_only',
  'new-arrival',
  'special-offer',
  'best-seller',
  'health',
  'grocery',
  'confectionery',
  'drinks',
  'baby',
  'pet',
  'beauty',
  'grab-go',
  'partnership-shops',
  'gourmet-line',
  'pre-order',
  'buy-again',
];

let t: StorefrontTestApp;
beforeAll(async () => {
  t = await storefrontApp();
});
afterAll(() => t.close());
const getBytes = (p: string) => request(t.app.callback()).get(p).buffer(true).parse(binary);

describe('GET /api/group/image/{groupId}/{imageId}', () => {
  it.each([
    ['G872104-1.webp', 'image/webp', 'webp'],
    ['G872104-2.png', 'image/png', 'png'],
    ['G872104-3.jpg', 'image/jpeg', 'jpeg'],
    ['G872104-3.jpeg', 'image/jpeg', 'jpeg'],
    ['G872104-1', 'image/webp', 'webp'],
  ])('%s is a %s image', async (imageId, mime, format) => {
    const res = await getBytes(`/api/group/image/G872104/${imageId}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(mime);
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    const meta = await sharp(res.body as Buffer).metadata();
    expect(meta).toMatchObject({ format, width: 400, height: 400 });
  });

  it('is drawn once and kept on disk under DATA_DIR/cache/images; the same bytes come back with a 304 on revalidation', async () => {
    const first = await getBytes('/api/group/image/G195447/G195447-1.png');
    const files = fs.readdirSync(path.join(t.dataDir, 'cache', 'images'), { recursive: true }).map(String);
    expect(files.some((f) => /G195447-1\.[0-9a-f]{16}\.png$/.test(f))).toBe(true);
    const second = await getBytes('/api/group/image/G195447/G195447-1.png');
    expect(Buffer.compare(first.body, second.body)).toBe(0);
    expect(
      (await getBytes('/api/group/image/G195447/G195447-1.png').set('If-None-Match', first.headers.etag)).status,
    ).toBe(304);
  });

  it('404 for an image the group does not have, 400 for another format or a malformed id', async () => {
    for (const p of [
      '/api/group/image/G872104/G872104-9.webp',
      '/api/group/image/G872104/G195447-1.webp',
      '/api/group/image/G000000/G000000-1.webp',
    ]) {
      const res = await request(t.app.callback()).get(p);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(storefrontError('NOT_FOUND', 404));
    }
    const gif = await request(t.app.callback()).get('/api/group/image/G872104/G872104-1.gif');
    expect(gif.status).toBe(400);
    expect(gif.body).toEqual(storefrontError('INVALID_INPUT', 400));
    expect((await request(t.app.callback()).get('/api/group/image/G872104/a.b.c')).status).toBe(400);
  });
});

describe('GET /public/image/category/<name>.webp', () => {
  it('serves all 27 icons of the contract as webp', async () => {
    for (const name of ICONS) {
      const res = await getBytes(`/public/image/category/${name}.webp`);
      expect([name, res.status, res.headers['content-type']]).toEqual([name, 200, 'image/webp']);
      expect((await sharp(res.body as Buffer).metadata()).format).toBe('webp');
    }
  });

  it('404 for an unknown name or another extension', async () => {
    for (const p of [
      '/public/image/category/caviar.webp',
      '/public/image/category/beef.png',
      '/public/image/category/beef-wagyu.webp',
    ]) {
      const res = await request(t.app.callback()).get(p);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(storefrontError('NOT_FOUND', 404));
    }
  });
});

describe('start-up files', () => {
  it('/app-first-page.json: shop, schema paths, API paths, the icon row and the branches', async () => {
    const res = await request(t.app.callback()).get('/app-first-page.json');
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBeDefined();
    expect(res.body.shop).toMatchObject({ nameEn: 'Sala Market', currency: 'THB' });
    expect(res.body.schema).toEqual({
      config: '/schema/talat/master/webData/config.yaml',
      firstPageCat: '/schema/talat/master/webData/firstPageCat.yaml',
    });
    expect(res.body.api.search).toBe('/api/search2/semantic_search');
    expect(res.body.categories.map((c: { slug: string }) => c.slug)).toEqual(ICONS);
    expect(res.body.categories[11]).toMatchObject({
      slug: 'brand_only',
      kind: 'collection',
      icon: '/public/image/category/brand_only.webp',
      link: '/collection/brand_only',
    });
    expect(res.body.branches).toHaveLength(12);
  });

  it('config.yaml and firstPageCat.yaml are valid YAML built from the data', async () => {
    const config = await request(t.app.callback())
      .get('/schema/talat/master/webData/config.yaml')
      .buffer(true)
      .parse(binary);
    expect(config.status).toBe(200);
    expect(config.headers['content-type']).toMatch(/^application\/yaml/);
    const doc = YAML.parse(config.body.toString('utf8'));
    expect(doc.api.paths.catalogTree).toBe('/api/v2/catalog-tree/catalog-tree');
    expect(doc.auth.signature).toEqual({
      algorithm: 'AWS4-HMAC-SHA256',
      region: 'ap-southeast-1',
      service: 'execute-api',
    });
    expect(doc.branches).toHaveLength(12);

    const cats = await request(t.app.callback())
      .get('/schema/talat/master/webData/firstPageCat.yaml')
      .buffer(true)
      .parse(binary);
    const first = YAML.parse(cats.body.toString('utf8'));
    expect(first.categories).toHaveLength(27);
    expect(first.categories[0]).toMatchObject({
      position: 1,
      slug: 'beef',
      kind: 'aisle',
      nameTh: 'เนื้อวัว',
      link: '/category/beef',
    });
    expect(first.categories[0].children).toHaveLength(5);
    expect(
      (
        await request(t.app.callback())
          .get('/schema/talat/master/webData/firstPageCat.yaml')
          .set('If-None-Match', cats.headers.etag)
      ).status,
    ).toBe(304);
  });

  it('the schema files follow SCHEMA_BASE_PATH and SCHEMA_NAME', async () => {
    const other = t.appWith({ SCHEMA_BASE_PATH: '/cfg', SCHEMA_NAME: 'sala' });
    expect((await request(other.callback()).get('/cfg/sala/master/webData/config.yaml')).status).toBe(200);
    expect((await request(other.callback()).get('/schema/talat/master/webData/config.yaml')).status).toBe(404);
    expect((await request(other.callback()).get('/app-first-page.json')).body.schema.config).toBe(
      '/cfg/sala/master/webData/config.yaml',
    );
  });
});
