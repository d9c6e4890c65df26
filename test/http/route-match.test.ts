/**
 * Route matching reused per method and path (src/http/route-match.ts): the same routes, params,
 * 404 and 405 as without it, on first and later requests, and past the bound; and the router's
 * middleware with each match's chain composed once (routerMiddleware): the same answers as
 * router.routes().
 */
import Router from '@koa/router';
import Koa from 'koa';
import request from 'supertest';
import { memoizeRouteMatching, routerMiddleware } from '../../src/http/route-match';

function app(memo: boolean, max?: number, composedOnce = false) {
  const router = new Router();
  const sub = new Router();
  sub.get('/orders/:id', (ctx) => void (ctx.body = { id: ctx.params.id, route: ctx._matchedRoute }));
  sub.post('/orders/:id', (ctx) => void (ctx.body = { posted: ctx.params.id }));
  sub.get('/orders/:id/items/:item', (ctx) => void (ctx.body = { id: ctx.params.id, item: ctx.params.item }));
  router.use(sub.routes());
  router.get('/plain', (ctx) => void (ctx.body = { plain: true }));
  if (memo) memoizeRouteMatching(router, max);
  const koa = new Koa();
  koa.use(composedOnce ? routerMiddleware(router) : router.routes());
  koa.use(router.allowedMethods());
  return { server: koa.callback(), router };
}

const paths = ['/orders/1', '/orders/2/items/x', '/plain', '/nope', '/orders/', '/orders/1/items'];
const methods = ['GET', 'POST', 'PUT', 'HEAD'];

it('matches as the router does, first time and again', () => {
  const plain = app(false).router;
  const memo = app(true).router;
  const shape = (m: ReturnType<Router['match']>) => ({
    path: m.path.map((l) => l.path),
    pathAndMethod: m.pathAndMethod.map((l) => `${l.methods.join('|')} ${l.path}`),
    route: m.route,
  });
  for (let round = 0; round < 2; round++)
    for (const p of paths) for (const m of methods) expect(shape(memo.match(p, m))).toEqual(shape(plain.match(p, m)));
});

it('a caller that appends to the matched layers does not change what the next request gets', () => {
  const { router } = app(true);
  const first = router.match('/orders/1', 'GET');
  const n = first.path.length;
  first.path.push(...first.path);
  expect(router.match('/orders/1', 'GET').path).toHaveLength(n);
});

it('answers with each request its own params, 404 and 405, also past the bound', async () => {
  for (const [max, composedOnce] of [
    [undefined, false],
    [2, false],
    [undefined, true],
    [2, true],
  ] as const) {
    const { server } = app(true, max, composedOnce);
    for (const id of ['a', 'b', 'a', 'c', 'b']) {
      const res = await request(server).get(`/orders/${id}`);
      expect(res.body).toEqual({ id, route: '/orders/:id' });
      expect((await request(server).get(`/orders/${id}/items/${id}2`)).body).toEqual({ id, item: `${id}2` });
    }
    expect((await request(server).post('/orders/z')).body).toEqual({ posted: 'z' });
    for (let i = 0; i < 2; i++) {
      const res = await request(server).put('/orders/z');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('HEAD, GET, POST');
      expect((await request(server).get('/nope')).status).toBe(404);
    }
  }
});

/** a router with a prefix middleware whose params the route sees (two matched layers), as seen by the handler */
function layered(composedOnce: boolean, memo: boolean) {
  const router = new Router();
  router.use('/shops/:shop', async (ctx, next) => {
    ctx.state.seen = [`mw:${ctx.params.shop}:${ctx.routerPath}`];
    await next();
  });
  router.get('/shops/:shop/orders/:id', (ctx) => {
    ctx.body = {
      params: ctx.params,
      requestParams: (ctx.request as unknown as { params: unknown }).params,
      seen: ctx.state.seen,
      matchedRoute: ctx._matchedRoute,
      routerPath: ctx.routerPath,
      matched: (ctx.matched as { path: string }[]).map((l) => l.path),
    };
  });
  if (memo) memoizeRouteMatching(router);
  const koa = new Koa();
  koa.use(composedOnce ? routerMiddleware(router) : router.routes());
  koa.use(router.allowedMethods());
  return koa.callback();
}

it('routerMiddleware answers as router.routes() does: params, layers run in order, matched routes', async () => {
  for (const memo of [false, true]) {
    const plain = layered(false, memo);
    const once = layered(true, memo);
    for (const path of ['/shops/a/orders/1', '/shops/b/orders/2', '/shops/a/orders/1', '/shops/a', '/shops/a/x']) {
      for (const method of ['get', 'post', 'delete'] as const) {
        const [p, o] = [await request(plain)[method](path), await request(once)[method](path)];
        expect({ status: o.status, body: o.body, allow: o.headers.allow }).toEqual({
          status: p.status,
          body: p.body,
          allow: p.headers.allow,
        });
      }
    }
    expect((await request(once).get('/shops/b/orders/2')).body).toMatchObject({
      params: { shop: 'b', id: '2' },
      seen: ['mw:b:/shops/:shop'],
      matchedRoute: '/shops/:shop/orders/:id',
    });
  }
});

it('routerMiddleware composes the chain of a match once, not on every request', async () => {
  const router = new Router();
  let composed = 0;
  const stack = [(ctx: Koa.Context) => void (ctx.body = { id: ctx.params.id })];
  router.get('/orders/:id', ...stack);
  memoizeRouteMatching(router);
  // count the reads of each layer's stack: @koa/router reads it on every request to compose the chain
  for (const layer of router.stack) {
    const own = layer.stack;
    Object.defineProperty(layer, 'stack', { get: () => (composed++, own) });
  }
  const koa = new Koa();
  koa.use(routerMiddleware(router));
  const server = koa.callback();
  for (const id of ['a', 'b', 'a', 'a', 'b']) expect((await request(server).get(`/orders/${id}`)).body).toEqual({ id });
  expect(composed).toBe(2); // once per path, not once per request (5)
});
