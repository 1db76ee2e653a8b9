// The query endpoints (SPEC.md "Query endpoints", CONTRACT.md section 6) and their request schemas.
// Unknown fields are refused, so a misspelt `metric` cannot silently fall back to the default.
import { checkNesting } from '../../entries/metadata.js';
import { JSON_MAX_DEPTH, MAX_FILTERS, SEARCH_MAX_LIMIT, TOPK_DEFAULT_K, TOPK_MAX_K } from '../../limits/input.js';
import { s } from '../../http/schema/types.js';
import type { Endpoint } from '../../http/endpoint.js';
import { dataB64, domain, key, metric, namespace, tolerance } from '../fields.js';

const QUERY = 'query';

const k = s.integer(1, TOPK_MAX_K, { default: TOPK_DEFAULT_K, description: 'How many results.' });
const filters = s.json({
  maxProperties: MAX_FILTERS,
  description:
    'Top-level metadata keys and the JSON values they must equal (strictly: true is not 1); {} matches every entry. ' +
    `Nested at most ${JSON_MAX_DEPTH} levels of objects and arrays (the filters object is level 1).`,
  refine: (v, field) => {
    checkNesting(v, field);
    return v;
  },
});

export const similarityBody = s.object(
  {
    key_a: key('First key.'),
    key_b: key('Second key.'),
    namespace,
    metric,
  },
  { required: ['key_a', 'key_b'], title: 'SimilarityRequest' },
);

export const topkBody = s.object(
  {
    query_key: key('Key of the stored query entry (left out of the results).'),
    namespace,
    k,
    metric,
    filters,
  },
  { required: ['query_key'], title: 'TopkRequest' },
);

export const topkVectorBody = s.object(
  {
    data_b64: dataB64,
    namespace,
    k,
    metric,
    filters,
    domain,
    tolerance,
  },
  { required: ['data_b64'], title: 'TopkVectorRequest' },
);

export const searchBody = s.object(
  {
    namespace,
    filters,
    limit: s.integer(1, SEARCH_MAX_LIMIT, { default: SEARCH_MAX_LIMIT, description: 'How many matches to return at most.' }),
    offset: s.integer(0, Number.MAX_SAFE_INTEGER, { default: 0, description: 'How many matches (in key order) to skip first.' }),
  },
  { required: ['filters'], title: 'SearchRequest' },
);

const results = s.array(s.array(s.any(), { minItems: 2, maxItems: 2 }), { description: '[key, score] pairs, best first; ties by key.' });
const topkResponse = s.object(
  {
    query_key: s.string(),
    metric: s.string(),
    n_candidates: s.integer(0, Number.MAX_SAFE_INTEGER),
    results,
  },
  { title: 'TopkResponse' },
);
const QUERY_ERRORS = [400, 402, 403, 404, 413, 415];
// 503 overloaded: the bytes the request would hold (its body, a streamed answer) are not free in time.
const HOLDING_ERRORS = [...QUERY_ERRORS, 503];

export const QUERY_ENDPOINTS = {
  similarity: {
    id: 'similarity',
    method: 'post',
    path: '/v1/query/similarity',
    tag: QUERY,
    auth: 'tenant',
    operations: ['similarity'],
    engine: true,
    summary: 'Similarity of two stored entries, from their cores',
    body: { json: similarityBody, limit: 'small', required: true },
    answers: {
      200: {
        description: 'The score.',
        schema: s.object({ key_a: s.string(), key_b: s.string(), namespace: s.string(), metric: s.string(), score: s.number() }),
      },
    },
    problems: QUERY_ERRORS,
  },
  topk: {
    id: 'topk',
    method: 'post',
    path: '/v1/query/topk',
    tag: QUERY,
    auth: 'tenant',
    operations: ['topk'],
    engine: true,
    summary: 'The k entries of a namespace closest to a stored one',
    body: { json: topkBody, limit: 'small', required: true },
    answers: { 200: { description: 'The best candidates.', schema: topkResponse } },
    problems: QUERY_ERRORS,
  },
  topk_vector: {
    id: 'topk_vector',
    method: 'post',
    path: '/v1/query/topk_vector',
    tag: QUERY,
    auth: 'tenant',
    operations: ['topk_vector'],
    engine: true,
    summary: 'The k entries of a namespace closest to an array given in the request',
    body: { json: topkVectorBody, limit: 'payload', required: true },
    answers: { 200: { description: 'The best candidates (query_key is "").', schema: topkResponse } },
    problems: HOLDING_ERRORS,
  },
  search: {
    id: 'search',
    method: 'post',
    path: '/v1/query/search',
    tag: QUERY,
    auth: 'tenant',
    operations: ['search'],
    summary: 'Entries whose metadata matches every filter, in ascending key order, a page at a time',
    body: { json: searchBody, limit: 'small', required: true },
    answers: {
      200: {
        description: 'One page of matches: `count` returned of `total`.',
        schema: s.object({
          namespace: s.string(),
          count: s.integer(0, SEARCH_MAX_LIMIT),
          total: s.integer(0, Number.MAX_SAFE_INTEGER, { description: 'Every match, not only this page.' }),
          results: s.array(s.object({ key: s.string(), metadata: s.json(), version: s.integer(1, Number.MAX_SAFE_INTEGER) })),
        }),
      },
    },
    problems: [400, 402, 403, 415, 503],
  },
} satisfies Record<string, Endpoint>;
