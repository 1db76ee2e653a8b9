// GET /openapi.json, GET /docs and GET / (no auth): the API reference, built once at start from the
// same endpoint descriptions the router is built from.
import type { Api } from '../../http/endpoint.js';
import { renderDocsPage } from '../../http/docs-page.js';
import { openApiDocument } from '../../http/openapi.js';
import { VERSION } from '../../runtime/version.js';
import { ENDPOINTS } from '../index.js';
import { REFERENCE_ENDPOINTS as EP } from './endpoints.js';
import { CONSOLE_ENDPOINTS } from '../console/endpoints.js';

export function registerReferenceRoutes(api: Api): void {
  const doc = openApiDocument(ENDPOINTS);
  const json = JSON.stringify(doc);
  const html = renderDocsPage(doc);
  const pointer = {
    service: 'ttstore',
    version: VERSION,
    docs: EP.docs.path,
    openapi: EP.openapi.path,
    console: CONSOLE_ENDPOINTS.page.path,
  };
  api.mount(EP.openapi, async (ctx) => {
    ctx.type = 'application/json';
    ctx.body = json;
  });
  api.mount(EP.docs, async (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html;
  });
  api.mount(EP.root, async (ctx) => {
    ctx.body = pointer;
  });
}
