// GET /openapi.json and GET /docs (no auth): the API reference, built once at start from the same
// endpoint descriptions the router is built from.
import { ADMIN_ENDPOINTS } from '../admin/endpoints.js';
import { renderDocsPage } from '../../http/docs-page.js';
import type { Api } from '../../http/endpoint.js';
import { openApiDocument } from '../../http/openapi.js';

export function registerReferenceRoutes(api: Api): void {
  const doc = openApiDocument();
  const json = JSON.stringify(doc);
  const html = renderDocsPage(doc);
  api.mount(ADMIN_ENDPOINTS.openapi, async (ctx) => {
    ctx.type = 'application/json';
    ctx.body = json;
  });
  api.mount(ADMIN_ENDPOINTS.docs, async (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html;
  });
}
