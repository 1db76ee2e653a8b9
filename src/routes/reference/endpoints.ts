// The API reference itself (no authentication): the OpenAPI document, the page for people, and at /
// a pointer to both, so that a client who knows only the address finds its way.
import type { Endpoint } from '../../http/endpoint.js';
import { s } from '../../http/schema/types.js';

export const REFERENCE_ENDPOINTS = {
  openapi: {
    id: 'openapi',
    method: 'get',
    path: '/openapi.json',
    tag: 'operations',
    auth: 'none',
    summary: 'This document (OpenAPI 3.1)',
    answers: { 200: { description: 'The OpenAPI document.', schema: s.json() } },
  },
  docs: {
    id: 'docs',
    method: 'get',
    path: '/docs',
    tag: 'operations',
    auth: 'none',
    summary: 'The API reference for people (HTML, self-contained)',
    answers: { 200: { description: 'An HTML page.', content: { 'text/html': {} } } },
  },
  root: {
    id: 'root',
    method: 'get',
    path: '/',
    tag: 'operations',
    auth: 'none',
    summary: 'Where the API reference and the web console are',
    answers: {
      200: {
        description: 'The service name and version, and the paths of the reference and the console.',
        schema: s.object({ service: s.string(), version: s.string(), docs: s.string(), openapi: s.string(), console: s.string() }),
      },
    },
  },
} satisfies Record<string, Endpoint>;
