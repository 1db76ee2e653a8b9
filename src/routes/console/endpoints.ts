// The web console (docs/console.md): a single-page app built by Vite into dist/console and served
// as static files, with no authentication of its own: it signs in through the public API like any client.
import type { Endpoint } from '../../http/endpoint.js';
import { s } from '../../http/schema/types.js';

export const CONSOLE_ENDPOINTS = {
  page: {
    id: 'console',
    method: 'get',
    path: '/console',
    tag: 'operations',
    auth: 'none',
    summary: 'The web console (HTML; it signs in with an API key or the service key, kept in sessionStorage)',
    answers: { 200: { description: 'The console page.', content: { 'text/html': {} } } },
    problems: [404],
  },
  asset: {
    id: 'console_asset',
    method: 'get',
    path: '/console/assets/{file}',
    tag: 'operations',
    auth: 'none',
    summary: "A file of the console's build (content-hashed name, cached for good)",
    pathParams: { file: s.string({ description: 'A file name from the console page.' }) },
    answers: { 200: { description: 'The file (JavaScript, CSS, ...).', content: { 'application/octet-stream': {} } } },
    problems: [404],
  },
} satisfies Record<string, Endpoint>;
