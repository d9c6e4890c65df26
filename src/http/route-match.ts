/**
 * Route matching reused per method and path. @koa/router tests every route's regular expression
 * against the path on every request (54 routes: 6-15 us a request here, bench:hotpaths); the
 * answer depends only on the method, the path and the routes, which are fixed once createApp has
 * built the router. So the match of a method and path is remembered (bounded: the oldest of
 * `max` go first). Nothing can be stale: call it after the last route is added.
 */
import type Router from '@koa/router';

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
