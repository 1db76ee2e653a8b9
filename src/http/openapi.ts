// The OpenAPI 3.1 document, built from the endpoint descriptions the router is built from.
import { toJsonSchema, type JsonSchema } from './schema/json-schema.js';
import { SPECS } from '../config.js';
import {
  BODY_MAX_DEPTH,
  JSON_BODY_BYTES,
  jsonStructureBytes,
  MAX_BATCH_ENTRIES,
  MAX_HEADER_BYTES,
  NPY_MAX_HEADER_BYTES,
  payloadBodyBytes,
  sizeText,
} from '../limits/input.js';
import { VERSION } from '../runtime/version.js';
import { OPERATIONS, type Operation } from '../gate/operations.js';
import type { Endpoint } from './endpoint.js';
import { s } from './schema/types.js';

/** RFC 9457 problem details (CONTRACT.md section 4). */
const problem = s.object(
  {
    type: s.string({ example: '/problems/invalid_request' }),
    title: s.string(),
    status: s.integer(400, 599),
    detail: s.string(),
    code: s.string({ description: 'Stable machine-readable code (CONTRACT.md section 4).' }),
    field: s.string({ description: 'Path of the offending field, when one is to blame (e.g. params.n_bits).' }),
  },
  { title: 'Problem', additionalProperties: true, required: ['type', 'title', 'status', 'detail', 'code'] },
);

const PROBLEM_TEXT: Record<number, string> = {
  304: 'Not modified',
  400: 'Invalid request (invalid_request, or a code of its own: grid_too_small, grid_too_large, unknown_solver, shape_mismatch)',
  401: 'missing_api_key or invalid_api_key (WWW-Authenticate: Bearer realm="ttstore")',
  402:
    'quota_exceeded: the operation would pass the monthly quota; storage_quota_exceeded (writes): the bytes stored would ' +
    'pass the storage quota (storage_quota_bytes, stored_bytes and requested_bytes fields; nothing is stored, no CU)',
  403: 'namespace_forbidden (tenant endpoints) or admin_only (a tenant key on an admin endpoint)',
  404: 'not_found',
  409: 'tenant_exists or not_compressed',
  413: 'payload_too_large: the body (see its limit) or the decoded payload is over its limit',
  415: 'unsupported_media_type: a content type the endpoint does not take, or a Content-Encoding other than identity',
  429: 'rate_limited: Retry-After header; limit, window_s and retry_after_s fields',
  500: 'internal_error (never a stack trace)',
  501: 'gpu_unsupported',
  503:
    "overloaded: the bytes held for requests in flight are at SVC_GATE_MAX_INFLIGHT_BYTES or the tenant's half of it " +
    '(Retry-After); gpu_unavailable; or the server is shutting down (service_unavailable)',
};

/** The 429 of an engine request (Endpoint.engine) beside the rate limit's. */
const TOO_MANY_IN_FLIGHT = 'too_many_in_flight: the tenant already has SVC_GATE_TENANT_INFLIGHT engine requests in flight (Retry-After: 1)';

const RATE_HEADERS = {
  'X-RateLimit-Limit': 'Requests allowed per window.',
  'X-RateLimit-Remaining': 'Requests left in the current window.',
  'X-RateLimit-Reset': 'Unix seconds at which the oldest counted request leaves the window.',
};

function headersOf(h: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(h).map(([name, description]) => [name, { description, schema: { type: 'string' } }]));
}

function parameters(ep: Endpoint): unknown[] {
  const out: unknown[] = [];
  for (const [name, sc] of Object.entries(ep.pathParams ?? {})) out.push({ name, in: 'path', required: true, schema: toJsonSchema(sc) });
  for (const [name, sc] of Object.entries(ep.query ?? {})) {
    const schema = toJsonSchema(sc);
    out.push({ name, in: 'query', required: false, ...(schema.description ? { description: schema.description } : {}), schema });
  }
  return out;
}

const DEFAULT_MAX_PAYLOAD_BYTES = Number(SPECS.maxPayloadBytes.defaultText);

/** The body limits of an endpoint in words (src/limits/input.ts, which the body reader enforces). */
function bodyLimitText(body: NonNullable<Endpoint['body']>): string {
  const parts = [
    body.limit === 'small'
      ? `The JSON body is at most ${sizeText(JSON_BODY_BYTES)}.`
      : `The JSON body is at most the base64 of the largest payload (SVC_GATE_MAX_PAYLOAD_BYTES plus an .npy header of at most ` +
        `${sizeText(NPY_MAX_HEADER_BYTES)}) plus ${sizeText(JSON_BODY_BYTES)}: ${payloadBodyBytes(DEFAULT_MAX_PAYLOAD_BYTES)} bytes ` +
        `by default; apart from the plain characters of its strings (syntax, numbers and escapes) at most ` +
        `${sizeText(jsonStructureBytes('payload'))} (${sizeText(JSON_BODY_BYTES)} plus ${MAX_BATCH_ENTRIES} entries' metadata).`,
  ];
  if (body.raw)
    parts.push(`A raw body is at most SVC_GATE_MAX_PAYLOAD_BYTES (an .npy: plus its header, at most ${sizeText(NPY_MAX_HEADER_BYTES)}).`);
  parts.push(
    `Larger: 413, answered from Content-Length before the body is read. Objects and arrays nest at most ${BODY_MAX_DEPTH} levels ` +
      'in the whole body (400). A Content-Encoding other than identity: 415.',
  );
  return parts.join(' ');
}

/** An endpoint's CU in words: `1`, or per choice (`dense 0.5, cores 0.5, gpu 2.0` for serve_dense, ...). */
function costText(ep: Endpoint, ops: readonly Operation[]): string {
  if (ops.length === 1) return String(OPERATIONS[ops[0]!].cu);
  return ops.map((op) => `${op.replace(`${ep.id}_`, '')} ${OPERATIONS[op].cu.toFixed(1)}`).join(', ');
}

function operation(ep: Endpoint): Record<string, unknown> {
  const statuses = new Set<number>([...(ep.problems ?? [])]);
  if (ep.auth === 'tenant') [401, 429].forEach((c) => statuses.add(c));
  if (ep.auth === 'admin') [401, 403].forEach((c) => statuses.add(c));
  statuses.add(500);
  const responses: Record<string, unknown> = {};
  for (const [status, a] of Object.entries(ep.answers)) {
    const content: Record<string, unknown> = {};
    if (a.schema) content['application/json'] = { schema: toJsonSchema(a.schema, { open: true }) };
    for (const [type, c] of Object.entries(a.content ?? {}))
      content[type] = c.description ? { schema: { description: c.description } } : {};
    const headers = { ...(ep.auth === 'tenant' ? RATE_HEADERS : {}), ...(a.headers ?? {}) };
    responses[status] = {
      description: a.description,
      ...(Object.keys(headers).length > 0 ? { headers: headersOf(headers) } : {}),
      ...(Object.keys(content).length > 0 ? { content } : {}),
    };
  }
  for (const status of [...statuses].sort()) {
    responses[String(status)] = {
      description: status === 429 && ep.engine ? `${PROBLEM_TEXT[429]}; or ${TOO_MANY_IN_FLIGHT}` : (PROBLEM_TEXT[status] ?? 'Problem'),
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  const op: Record<string, unknown> = {
    operationId: ep.id,
    summary: ep.summary,
    ...(ep.description || ep.operations
      ? {
          description: [ep.description, ep.operations ? `Cost: ${costText(ep, ep.operations)} CU (2xx only).` : '']
            .filter(Boolean)
            .join('\n\n'),
        }
      : {}),
    tags: [ep.tag],
    security: ep.auth === 'tenant' ? [{ apiKey: [] }, { bearerApiKey: [] }] : ep.auth === 'admin' ? [{ serviceKey: [] }] : [],
  };
  const params = parameters(ep);
  if (params.length > 0) op.parameters = params;
  if (ep.body) {
    const content: Record<string, unknown> = {};
    if (ep.body.json) content['application/json'] = { schema: toJsonSchema(ep.body.json) };
    for (const [type, description] of Object.entries(ep.body.raw ?? {})) {
      content[type] = { schema: { type: 'string', contentMediaType: type, description } };
    }
    op.requestBody = { description: bodyLimitText(ep.body), required: ep.body.required ?? false, content };
  }
  op.responses = responses;
  return op;
}

/** The document (plain JSON data) of `endpoints` (src/routes/index.ts: all of them), in their order. */
export function openApiDocument(endpoints: readonly Endpoint[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const ep of endpoints) (paths[ep.path] ??= {})[ep.method] = operation(ep);
  const problemSchema: JsonSchema = toJsonSchema(problem, { open: true });
  return {
    openapi: '3.1.0',
    info: {
      title: 'ttstore',
      version: VERSION,
      summary: 'Multi-tenant compressed tensor store',
      description:
        'Arrays and blobs stored as quantized tensor trains; similarity search on the cores; simulations ' +
        'whose outputs are entries. Errors are RFC 9457 problem details. In request bodies an optional field ' +
        `given as null is the same as an absent one. The request's header lines are at most ${sizeText(MAX_HEADER_BYTES)} together ` +
        '(more: 431 request_header_fields_too_large, and the connection closes).',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'storage', description: 'Entries: put, get, serve, delete, list (tenant key).' },
      { name: 'query', description: 'Similarity, top-K and metadata search on the stored cores (tenant key).' },
      { name: 'simulation', description: 'Solver jobs whose outputs are stored as entries (tenant key).' },
      { name: 'account', description: "The caller's own usage and namespaces (tenant key)." },
      { name: 'admin', description: 'Tenants, keys, plans and usage (service key).' },
      { name: 'operations', description: 'Health, metrics and this reference.' },
    ],
    paths,
    components: {
      schemas: { Problem: problemSchema },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'A tenant API key (takes precedence over Authorization).' },
        bearerApiKey: { type: 'http', scheme: 'bearer', description: 'A tenant API key as Authorization: Bearer.' },
        serviceKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'The service key (SVC_GATE_ENGINE_SERVICE_KEY) as Authorization: Bearer.',
        },
      },
    },
  };
}
