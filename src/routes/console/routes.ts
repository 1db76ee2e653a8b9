// GET /console and its assets (no auth): the page is revalidated on every load (a new build takes
// effect at once), the content-hashed assets are cached for good. The Content-Security-Policy allows
// this origin only, so neither an injected script nor a request to another host can carry a key away.
import type { Context } from 'koa';
import type { Api } from '../../http/endpoint.js';
import { ProblemError } from '../../http/errors.js';
import { CONSOLE_ENDPOINTS as EP } from './endpoints.js';
import { loadConsoleBuild, type ConsoleBuild, type ConsoleFile } from './assets.js';

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function send(ctx: Context, f: ConsoleFile, cacheControl: string): void {
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('ETag', f.etag);
  if (ctx.get('If-None-Match') === f.etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = f.type;
  ctx.body = f.body;
}

export function registerConsoleRoutes(api: Api, build: ConsoleBuild | null = loadConsoleBuild()): void {
  const missing = () => new ProblemError(404, 'not_found', 'the console is not built here: run `npm run build:console`');
  api.mount(EP.page, async (ctx) => {
    if (!build) throw missing();
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    send(ctx, build.index, 'no-cache');
  });
  api.mount(EP.asset, async (ctx) => {
    const f = build?.assets.get(ctx.params.file);
    if (!f) throw build ? new ProblemError(404, 'not_found', `no console file ${ctx.params.file}`) : missing();
    send(ctx, f, 'public, max-age=31536000, immutable');
  });
}
