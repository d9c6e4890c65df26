/**
 * Route matching reused per method and path (src/http/route-match.ts): the same routes, params,
 * 404 and 405 as without it, on first and later requests, and past the bound.
 */
import Router from '@koa/router';
import Koa from 'koa';
import request from 'supertest';
import { memoizeRouteMatching } from '../../src/http/route-match';

function app(memo: boolean, max?: number) {
  const router = new Router();
  const sub = new Router();
  sub.get('/orders/:id', (ctx) => void (ctx.body = { id: ctx.params.id, route: ctx._matchedRoute }));
  sub.post('/orders/:id', (ctx) => void (ctx.body = { posted: ctx.params.id }));
  sub.get('/orders/:id/items/:item', (ctx) => void (ctx.body = { id: ctx.params.id, item: ctx.params.item }));
  router.use(sub.routes());
  router.get('/plain', (ctx) => void (ctx.body = { plain: true }));
  if (memo) memoizeRouteMatching(router, max);
  const koa = new Koa();
  koa.use(router.routes());
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
  for (const max of [undefined, 2]) {
    const { server } = app(true, max);
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
