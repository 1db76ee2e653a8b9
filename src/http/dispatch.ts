// Dispatch of a request to its route: the routes registered on a @koa/router Router (each layer's
// path template, methods, regexp and middleware chain), matched and run without the router's own
// per-request work. Its routes() tests the regexp of every layer, collects the matches, builds a
// middleware chain of closures for them and composes it (flattening it) on every request, then
// decodes every path parameter; on a metadata GET that was about 5% of the server's CPU. Here the
// layers are grouped by method once, each route's chain is composed once, and the first route whose
// path and method match runs.
//
// What stays the router's: registration (Api.mount), the route list (router.stack, which the OpenAPI
// document is checked against), the filling of ctx.params (Layer.params) and allowedMethods() for
// 405, 501 and OPTIONS, which reads ctx.matched (set here, to the layers whose path matches, when no
// route takes the method).
import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import compose from 'koa-compose';

type Layer = Router['stack'][number];
type Run = (ctx: Context, next: Next) => Promise<unknown>;

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

interface Route {
  layer: Layer;
  run: Run;
}

/** The middleware that runs `router`'s routes (use it where router.routes() would go). */
export function dispatch(router: Router): Middleware {
  let byMethod = new Map<string, Route[]>();
  let built = -1; // router.stack.length the table was built from
  const table = (): Map<string, Route[]> => {
    if (built === router.stack.length) return byMethod;
    const next = new Map<string, Route[]>();
    for (const layer of router.stack) {
      if (layer.methods.length === 0) throw new Error(`dispatch serves routes only; ${String(layer.path)} is router middleware`);
      const route = { layer, run: compose(layer.stack as Middleware[]) as Run };
      for (const method of layer.methods) {
        let list = next.get(method);
        if (!list) next.set(method, (list = []));
        list.push(route);
      }
    }
    byMethod = next;
    built = router.stack.length;
    return byMethod;
  };

  return function routes(ctx: Context, next: Next): Promise<unknown> {
    const path = ctx.path;
    const candidates = table().get(ctx.method);
    if (candidates) {
      for (const { layer, run } of candidates) {
        const m = layer.regexp.exec(path);
        if (m === null) continue;
        ctx._matchedRoute = layer.path;
        if (layer.name) ctx._matchedRouteName = layer.name;
        // as the router fills them: each captured segment percent-decoded (left as is if malformed)
        ctx.params = layer.paramNames.length === 0 ? NO_PARAMS : layer.params(path, m.slice(1), {});
        (ctx.request as { params?: Record<string, string> }).params = ctx.params;
        return run(ctx, next);
      }
    }
    (ctx as Context & { matched?: Layer[] }).matched = router.stack.filter((layer) => layer.regexp.test(path));
    return next();
  };
}
