/**
 * Route matching reused per method and path. @koa/router tests every route's regular expression
 * against the path on every request; the answer depends only on the method, the path and the
 * routes, which are fixed once createApp has built the router. So the match of a method and path
 * is remembered (bounded: the oldest of `max` go first). Nothing can be stale: call it after the
 * last route is added.
 */
import type Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import compose, { type ComposedMiddleware } from 'koa-compose';

type Match = ReturnType<Router['match']>;

export function memoizeRouteMatching(router: Router, max = 2000): void {
  const match = router.match.bind(router);
  const seen = new Map<string, Match>();
  router.match = (path: string, method: string): Match => {
    const key = `${method} ${path}`;
    let m = seen.get(key);
    if (m === undefined) {
      m = match(path, method);
      seen.set(key, m);
      if (seen.size > max) seen.delete(seen.keys().next().value!);
    }
    // the router appends to ctx.matched (our `path` array): each request gets its own copy
    return { path: m.path.slice(), pathAndMethod: m.pathAndMethod, route: m.route };
  };
}

/**
 * The router's own middleware (router.routes()), except that the chain of a match (the layers'
 * param setters and their middleware, as @koa/router builds it) is composed once per match rather
 * than on every request (koa-compose's flatten and compose, and a closure per layer, each time).
 * With memoizeRouteMatching a method and path always get the same match, so its chain is kept
 * beside it (a WeakMap: a match the bound evicts takes its chain with it). Same answers, params,
 * ctx.matched, ctx._matchedRoute and ctx.routerPath as router.routes() (test/http/route-match.test.ts).
 */
export function routerMiddleware(router: Router): Middleware {
  if (router.opts.host !== undefined) throw new Error('routerMiddleware: a host-bound router is not supported');
  // a chain captures its path (the layers' params are read from it), so it is kept with that path:
  // memoizeRouteMatching keys a match by method and path, and without it every match is new
  const chains = new WeakMap<
    Match['pathAndMethod'],
    { path: string; chain: ComposedMiddleware<ParameterizedContext> }
  >();
  const chainOf = (path: string, layers: Match['pathAndMethod']) => {
    const kept = chains.get(layers);
    if (kept?.path === path) return kept.chain;
    const fns: Middleware[] = [];
    for (const layer of router.opts.exclusive ? [layers[layers.length - 1]] : layers) {
      fns.push((ctx, next) => {
        ctx.captures = (layer.captures as (p: string, c?: string[]) => string[])(path, ctx.captures);
        const params = layer.params(path, ctx.captures, ctx.params);
        (ctx.request as { params?: typeof params }).params = params;
        ctx.params = params;
        ctx.routerPath = layer.path;
        ctx.routerName = layer.name;
        ctx._matchedRoute = layer.path;
        if (layer.name) ctx._matchedRouteName = layer.name;
        return next();
      });
      fns.push(...(layer.stack as Middleware[]));
    }
    const chain = compose(fns);
    chains.set(layers, { path, chain });
    return chain;
  };
  return (ctx, next) => {
    const path = router.opts.routerPath || ctx.newRouterPath || ctx.path || ctx.routerPath;
    const matched = router.match(path, ctx.method);
    if (ctx.matched) ctx.matched.push(...matched.path);
    else ctx.matched = matched.path;
    ctx.router = router;
    if (!matched.route) return next();
    const layers = matched.pathAndMethod;
    const mostSpecific = layers[layers.length - 1];
    ctx._matchedRoute = mostSpecific.path;
    if (mostSpecific.name) ctx._matchedRouteName = mostSpecific.name;
    return chainOf(path, layers)(ctx, next);
  };
}
