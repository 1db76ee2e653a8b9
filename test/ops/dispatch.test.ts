// Route dispatch (src/http/dispatch.ts) must answer every request as the router's own routes() does.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import { dispatch } from '../../src/http/dispatch.js';

function routerUnderTest(): Router {
  const router = new Router();
  const seen = (ctx: Context) => ({ route: ctx._matchedRoute, name: ctx._matchedRouteName ?? null, params: ctx.params });
  const gate = async (ctx: Context, next: Next) => {
    ctx.set('X-Gate', 'passed');
    await next();
    ctx.set('X-After', String(ctx.status));
  };
  router.get('get', '/v1/get/:namespace/:key', gate, async (ctx) => {
    ctx.body = seen(ctx);
  });
  router.post('put', '/v1/put', gate, async (ctx) => {
    ctx.body = seen(ctx);
  });
  router.delete('del', '/v1/delete/:namespace/:key', async (ctx) => {
    ctx.body = seen(ctx);
  });
  router.get('list', '/v1/list/:namespace', async (ctx) => {
    ctx.body = seen(ctx);
  });
  router.get('health', '/gate/health', async (ctx) => {
    ctx.body = seen(ctx);
  });
  router.get('fails', '/boom', async () => {
    throw new Error('boom');
  });
  return router;
}

async function serve(useDispatch: boolean): Promise<{ url: string; close: () => void }> {
  const router = routerUnderTest();
  const app = new Koa();
  app.silent = true;
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.status = 500;
      ctx.body = { error: (err as Error).message };
    }
  });
  app.use(useDispatch ? dispatch(router) : router.routes());
  app.use(router.allowedMethods());
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

function request(url: string, method: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url + path, { method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('route dispatch', () => {
  const cases: Array<[string, string]> = [
    ['GET', '/v1/get/default/a%2Fb'],
    ['GET', '/v1/get/ns/%E2%82%AC'],
    ['GET', '/v1/get/ns/%ZZ'],
    ['HEAD', '/v1/get/ns/k'],
    ['GET', '/v1/get/ns/k/'],
    ['GET', '/v1/get/ns'],
    ['GET', '/v1/get/ns/k/extra'],
    ['POST', '/v1/get/ns/k'],
    ['OPTIONS', '/v1/get/ns/k'],
    ['PROPFIND', '/v1/get/ns/k'],
    ['POST', '/v1/put'],
    ['GET', '/v1/put'],
    ['PUT', '/v1/put'],
    ['DELETE', '/v1/delete/ns/k'],
    ['GET', '/v1/list/ns?prefix=a'],
    ['GET', '/gate/health'],
    ['DELETE', '/gate/health'],
    ['GET', '/nope'],
    ['OPTIONS', '/nope'],
    ['GET', '/boom'],
    ['GET', '/V1/PUT'],
    ['GET', '//gate/health'],
  ];

  it('answers every request as router.routes() does: status, body, Allow, headers set by the chain', async () => {
    const theirs = await serve(false);
    const ours = await serve(true);
    try {
      for (const [method, path] of cases) {
        const a = await request(theirs.url, method, path);
        const b = await request(ours.url, method, path);
        const what = `${method} ${path}`;
        expect(b.status, what).to.equal(a.status);
        expect(b.body, what).to.equal(a.body);
        for (const h of ['allow', 'x-gate', 'x-after', 'content-type']) expect(b.headers[h], `${what}: ${h}`).to.equal(a.headers[h]);
      }
    } finally {
      theirs.close();
      ours.close();
    }
  });
});
