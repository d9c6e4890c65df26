/** CORS: the shop's origin (SHOP_ORIGIN) may call the storefront from a browser; nothing else answers CORS. */
import request from 'supertest';
import { storefrontApp, storefrontError, type StorefrontTestApp } from './helpers';

const SHOP = 'https://shop.example';
let t: StorefrontTestApp;
beforeAll(async () => {
  t = await storefrontApp({ SHOP_ORIGIN: `${SHOP}, https://m.shop.example` });
});
afterAll(() => t.close());

const preflight = (path: string, origin: string, method = 'GET', headers?: string) => {
  const r = request(t.app.callback()).options(path).set('Origin', origin).set('Access-Control-Request-Method', method);
  return headers ? r.set('Access-Control-Request-Headers', headers) : r;
};

describe('preflight', () => {
  it.each([
    ['/api/search2/semantic_search', 'GET'],
    ['/api/price/getallgz', 'POST'],
    ['/auth/invalidate/invalidate', 'POST'],
    ['/schema/talat/master/webData/config.yaml', 'GET'],
    ['/app-first-page.json', 'GET'],
  ])('%s (%s) from the shop origin: 204 with the allowed methods and headers', async (path, method) => {
    const res = await preflight(path, SHOP, method, 'content-type, x-api-key');
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(SHOP);
    expect(res.headers['access-control-allow-methods']).toContain(method);
    expect(res.headers['access-control-allow-headers']).toMatch(/Content-Type/);
    expect(res.headers['access-control-allow-headers']).toMatch(/X-API-Key/);
    expect(res.headers['access-control-max-age']).toBe('600');
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('every origin listed in SHOP_ORIGIN is allowed', async () => {
    expect(
      (await preflight('/api/v2/catalog-tree/catalog-tree', 'https://m.shop.example')).headers[
        'access-control-allow-origin'
      ],
    ).toBe('https://m.shop.example');
  });

  it('403 FORBIDDEN from another origin, without CORS headers', async () => {
    for (const origin of ['https://evil.example', 'http://shop.example', `${SHOP}.evil`]) {
      const res = await preflight('/api/search2/semantic_search', origin);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(storefrontError('FORBIDDEN', 403));
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('paths outside the storefront answer no CORS', async () => {
    const res = await preflight('/cardpayment', SHOP, 'POST');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('requests', () => {
  it('the shop origin gets Access-Control-Allow-Origin and the exposed headers, on success and on errors', async () => {
    const ok = await request(t.app.callback()).get('/api/v2/catalog-tree/catalog-tree').set('Origin', SHOP);
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(SHOP);
    expect(ok.headers['access-control-expose-headers']).toMatch(/ETag/);
    expect(ok.headers['access-control-expose-headers']).toMatch(/X-RateLimit-Remaining/);
    const missing = await request(t.app.callback()).get('/api/group/read/G000000').set('Origin', SHOP);
    expect(missing.status).toBe(404);
    expect(missing.headers['access-control-allow-origin']).toBe(SHOP);
  });

  it('another origin gets the answer without Access-Control-Allow-Origin (the browser withholds it)', async () => {
    const res = await request(t.app.callback())
      .get('/api/v2/catalog-tree/catalog-tree')
      .set('Origin', 'https://evil.example');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
  });

  it('payment API paths never carry CORS headers', async () => {
    const res = await request(t.app.callback()).get('/healthz').set('Origin', SHOP);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
