/** Per-branch inventory and the gzip price file: caching, invalidation on change, gzip round trips. */
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { binary, rawRequest, storefrontApp, storefrontError, type StorefrontTestApp } from './helpers';

let t: StorefrontTestApp;
beforeAll(async () => {
  t = await storefrontApp();
});
afterAll(() => t.close());

describe('GET /api/inventory2/{branchId}', () => {
  it('quantity of every product at the branch, with ETag and Cache-Control', async () => {
    const res = await request(t.app.callback()).get('/api/inventory2/B001?timestamp=1795334634576');
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBeDefined();
    expect(res.headers['cache-control']).toBe('public, max-age=30');
    expect(res.body.branchId).toBe('B001');
    expect(Object.keys(res.body.products)).toHaveLength(970);
    const row = await t.stack.db('inventory').where({ branch_id: 'B001', product_id: 'G872104-1' }).first();
    expect(res.body.products['G872104-1']).toBe(row.quantity);
    const zero = Object.values(res.body.products as Record<string, number>).filter((q) => q === 0).length;
    expect(zero).toBeGreaterThan(0); // about 8% of lines are out of stock
  });

  it('304 on If-None-Match, whatever the cache-busting timestamp; a stock change gives a new ETag at once', async () => {
    const first = await request(t.app.callback()).get('/api/inventory2/B002?timestamp=1');
    expect(
      (await request(t.app.callback()).get('/api/inventory2/B002?timestamp=2').set('If-None-Match', first.headers.etag))
        .status,
    ).toBe(304);
    const before = await t.stack.db('inventory').where({ branch_id: 'B002', product_id: 'G195447-1' }).first();
    await t.stack
      .db('inventory')
      .where({ branch_id: 'B002', product_id: 'G195447-1' })
      .update({ quantity: before.quantity + 7, updated_at: t.stack.db.fn.now() });
    try {
      const after = await request(t.app.callback())
        .get('/api/inventory2/B002?timestamp=3')
        .set('If-None-Match', first.headers.etag);
      expect(after.status).toBe(200);
      expect(after.body.products['G195447-1']).toBe(before.quantity + 7);
      expect(after.headers.etag).not.toBe(first.headers.etag);
    } finally {
      await t.stack
        .db('inventory')
        .where({ branch_id: 'B002', product_id: 'G195447-1' })
        .update({ quantity: before.quantity });
    }
  });

  it('404 NOT_FOUND for an unknown branch; 400 for a timestamp that is not a number or an unknown parameter', async () => {
    const missing = await request(t.app.callback()).get('/api/inventory2/B999');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(storefrontError('NOT_FOUND', 404));
    expect(missing.body.body.details).toEqual({ branchId: 'B999' });
    expect((await request(t.app.callback()).get('/api/inventory2/B001?timestamp=yesterday')).body).toEqual(
      storefrontError('INVALID_INPUT', 400),
    );
    expect((await request(t.app.callback()).get('/api/inventory2/B001?branch=B002')).body).toEqual(
      storefrontError('INVALID_INPUT', 400),
    );
  });
});

describe('POST /api/price/getallgz', () => {
  const post = () => request(t.app.callback()).post('/api/price/getallgz').set('Content-Type', 'application/json');

  it('answers gzip-encoded JSON (Content-Type application/json, Content-Encoding gzip) that an HTTP client decompresses', async () => {
    const res = await post().send({});
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers.etag).toMatch(/-gz"$/);
    expect(res.body.currency).toBe('THB');
    expect(Object.keys(res.body.prices)).toHaveLength(970);
    expect(res.body.prices['G872104-1']).toBe(1290);
  });

  it('the bytes on the wire are one gzip stream of that JSON', async () => {
    const raw = await rawRequest(t.app, {
      method: 'POST',
      path: '/api/price/getallgz',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(Number(raw.headers['content-length'])).toBe(raw.body.length);
    expect(JSON.parse(gunzipSync(raw.body).toString('utf8')).prices['G872104-2']).toBe(2490);
  });

  it('Accept: application/gzip gives the .gz file itself; Accept-Encoding: identity gives plain JSON', async () => {
    const file = await post().set('Accept', 'application/gzip').send({}).buffer(true).parse(binary);
    expect(file.headers['content-type']).toBe('application/gzip');
    expect(file.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(gunzipSync(file.body).toString('utf8')).prices['G872104-3']).toBe(4890);

    const plain = await rawRequest(t.app, {
      method: 'POST',
      path: '/api/price/getallgz',
      headers: { 'Content-Type': 'application/json', 'Accept-Encoding': 'identity' },
      body: '{}',
    });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.body.toString('utf8')).prices['G872104-3']).toBe(4890);
  });

  it('304 on If-None-Match; a price change is in the very next answer with a new ETag', async () => {
    const first = await post().send({ timestamp: 1 });
    expect((await post().set('If-None-Match', first.headers.etag).send({ timestamp: 2 })).status).toBe(304);
    const before = await t.stack.db('prices').where({ product_id: 'G872104-1' }).first();
    await t.stack
      .db('prices')
      .where({ product_id: 'G872104-1' })
      .update({ price_satang: 119900, updated_at: t.stack.db.fn.now() });
    try {
      const after = await post().set('If-None-Match', first.headers.etag).send({});
      expect(after.status).toBe(200);
      expect(after.headers.etag).not.toBe(first.headers.etag);
      expect(after.body.prices['G872104-1']).toBe(1199);
      expect((await request(t.app.callback()).get('/api/group/read/G872104')).body.variants[0].price).toBe(1199);
    } finally {
      await t.stack.db('prices').where({ product_id: 'G872104-1' }).update({ price_satang: before.price_satang });
    }
    expect((await post().send({})).body.prices['G872104-1']).toBe(1290);
  });

  it('400 for an unknown field, 415 for a body that is not JSON', async () => {
    expect((await post().send({ branch: 'B001' })).body).toEqual(storefrontError('INVALID_INPUT', 400));
    const text = await request(t.app.callback())
      .post('/api/price/getallgz')
      .set('Content-Type', 'text/plain')
      .send('all please');
    expect(text.status).toBe(415);
    expect(text.body).toEqual(storefrontError('UNSUPPORTED_MEDIA_TYPE', 415));
  });

  it('405 METHOD_NOT_ALLOWED for GET', async () => {
    const res = await request(t.app.callback()).get('/api/price/getallgz');
    expect(res.status).toBe(405);
    expect(res.body).toEqual(storefrontError('METHOD_NOT_ALLOWED', 405));
  });
});
