// The storage endpoints (SPEC.md "Storage endpoints", CONTRACT.md section 6) and their request schemas.
import { MAX_REBUILD_WORK_PER_VALUE, MAX_RANK, MAX_SELECTION_WORK_PER_VALUE, MAX_TRAIN_WORK } from '../../engine/limits.js';
import { DTYPES } from '../../engine/types.js';
import { badRequest, type ProblemError } from '../../http/errors.js';
import { s } from '../../http/schema/types.js';
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT, MAX_BATCH_ENTRIES, MAX_CORES, MAX_DIMS } from '../../limits/input.js';
import type { SelectionRequest, SliceRequest } from '../../entries/selection.js';
import type { Endpoint } from '../../http/endpoint.js';
import {
  dataB64,
  domain,
  dtypeSchema,
  key,
  layoutSchema,
  maxRank,
  metadata,
  namespace,
  prefix,
  putResponse,
  getResponse,
  shapeSchema,
  tolerance,
  verdictSchema,
} from '../fields.js';

export const DEVICE_RE = /^cuda:(0|[1-9]\d{0,8})$/;

const STORAGE = 'storage';
// 503 overloaded: the bytes the request would hold (its body, a dense result) are not free in time.
const ENTRY_ERRORS = [400, 402, 403, 404, 413, 415, 503];

/** Unknown fields of storage bodies are ignored (as they always were), so older clients keep working. */
export const putBody = s.object(
  {
    key: key(),
    namespace,
    data_b64: dataB64,
    metadata,
    domain,
    tolerance,
    max_rank: maxRank,
  },
  { additionalProperties: true, required: ['key', 'data_b64'], title: 'PutRequest' },
);

/** The binary form's query string (the payload is the raw body). */
export const putQuery = { key: key(), namespace, domain, tolerance, max_rank: maxRank };

/** A core that is not {data_b64} names itself and its index (`core`), as the header checks do. */
function notACore(_v: unknown, field: string): ProblemError {
  const where = field.replace(/\.data_b64$/, '');
  const core = Number(/\[(\d+)\]$/.exec(where)?.[1]);
  return badRequest(`${where} must be an object with data_b64 (an .npy of shape [r_prev, n, r_next])`, { core });
}

const core = s.object(
  {
    data_b64: s.base64({
      description: `.npy (float32 or float64) of shape [r_prev, n, r_next], each rank at most ${MAX_RANK}.`,
      invalid: notACore,
    }),
  },
  { additionalProperties: true, required: ['data_b64'], invalid: notACore },
);

const CORES_DTYPES = DTYPES.filter((d) => d !== 'bool');
const positiveShape = () => badRequest('shape must be a list of integers >= 1', { field: 'shape' });

/**
 * put_cores: the fields checked here, in this order (namespace first, as put_cores_batch checks its
 * own); the train's rules (ranks, sizes, work) by entries/cores-input.ts from the cores' headers.
 */
export const putCoresBody = s.object(
  {
    namespace,
    key: key(),
    metadata,
    domain,
    dtype: s.enum(CORES_DTYPES, {
      docDefault: 'float32',
      description: 'The dtype serve returns.',
      invalid: (_v, field) => badRequest(`dtype must be one of ${CORES_DTYPES.join(', ')}`, { field }),
    }),
    layout: s.enum(['row_major', 'interleaved'], {
      docDefault: 'row_major',
      invalid: (_v, field) => badRequest('layout must be row_major or interleaved', { field }),
    }),
    cores: s.array(core, {
      minItems: 1,
      maxItems: MAX_CORES,
      description:
        `Cores in order; r_0 = r_d = 1, neighbouring ranks equal, every rank at most ${MAX_RANK}. With layout row_major ` +
        'the mode sizes n are any positive sizes whose product is the size of shape (for shape [2, 3, 4]: [2, 3, 4], [24], ' +
        '[2, 12], ...).',
      invalid: (_v, field) => badRequest(`cores must be a list of 1 to ${MAX_CORES} {data_b64}`, { field }),
    }),
    shape: s.array(s.integer(1, Number.MAX_SAFE_INTEGER, { invalid: positiveShape }), {
      maxItems: MAX_DIMS,
      description: 'Default [product of the n].',
      invalid: (v) =>
        Array.isArray(v) && v.length > MAX_DIMS
          ? badRequest(`shape may have at most ${MAX_DIMS} dimensions`, { field: 'shape' })
          : positiveShape(),
    }),
  },
  { additionalProperties: true, required: ['key', 'cores'], title: 'PutCoresRequest' },
);

/** One entry of put_cores_batch: a put_cores body, checked on its own (its problems carry its index). */
export const putCoresEntry: typeof putCoresBody = {
  ...putCoresBody,
  invalid: () => badRequest('each entry must be a JSON object'),
};

export const putCoresBatchBody = s.object(
  {
    namespace,
    entries: s.array(putCoresEntry, { minItems: 1, maxItems: MAX_BATCH_ENTRIES }),
  },
  { additionalProperties: true, required: ['entries'], title: 'PutCoresBatchRequest' },
);

/** s.any with the type its refine hook returns (what the handler reads). */
const typed =
  <T>() =>
  (o: Parameters<typeof s.any>[0]) =>
    s.any(o) as ReturnType<typeof s.any> & { '~value'?: T };
const isIndex = (x: unknown): x is number => Number.isSafeInteger(x);
const badLevel = () => badRequest('level must be an integer >= 0, or a list of them (one per axis)', { field: 'level' });
const badPoints = (field: string) => badRequest('points must be a non-empty list of index tuples (one integer per axis)', { field });
const badRegion = (field: string) =>
  badRequest('region must be a list of [start, stop, step] per axis (integers or null; null for a whole axis)', { field });

/** serve's selection fields (target dense): CONTRACT-style words in docs/api.md "Reading parts of an entry". */
const selectionFields = {
  level: typed<SelectionRequest['level']>()({
    description:
      'Coarse view: an integer per axis, or one for every axis; averages 2^level consecutive cells along each axis ' +
      "(400 when an axis's size has fewer factors of 2). Applied before region and points, which index the coarse grid.",
    example: 4,
    refine: (v: unknown): SelectionRequest['level'] => {
      if (isIndex(v) && v >= 0) return v;
      if (Array.isArray(v) && v.length <= MAX_DIMS && v.every((x) => isIndex(x) && x >= 0)) return v as number[];
      throw badLevel();
    },
  }),
  region: typed<SliceRequest[]>()({
    description:
      'One NumPy slice [start, stop, step] per axis (shorter lists and null entries take the defaults, negative indices ' +
      'count from the end, null is the whole axis; missing trailing axes are whole): the answer is array[slices].',
    example: [[0, 64], null, [null, null, -2]],
    refine: (v: unknown, field: string): SliceRequest[] => {
      if (!Array.isArray(v) || v.length > MAX_DIMS) throw badRegion(field);
      v.forEach((sl, a) => {
        if (sl === null) return;
        if (!Array.isArray(sl) || sl.length > 3 || !sl.every((x) => x === null || isIndex(x))) throw badRegion(`${field}[${a}]`);
      });
      return v as SliceRequest[];
    },
  }),
  // Checked in one loop (the generic validator names every item's path: tens of ms for 10,000 points).
  points: typed<number[][]>()({
    description:
      'Index tuples (one integer per axis, negative from the end): the answer is a 1-D array of their values in the order given. ' +
      `A selection may cost ${MAX_TRAIN_WORK.toExponential(2)} multiply-adds, or ${MAX_SELECTION_WORK_PER_VALUE} per value it returns.`,
    example: [
      [0, 0],
      [10, -1],
    ],
    refine: (v: unknown, field: string): number[][] => {
      if (!Array.isArray(v) || v.length === 0) throw badPoints(field);
      for (let i = 0; i < v.length; i++) {
        const p: unknown = v[i];
        if (!Array.isArray(p) || p.length > MAX_DIMS) throw badPoints(`${field}[${i}]`);
        for (let a = 0; a < p.length; a++) if (!isIndex(p[a])) throw badPoints(`${field}[${i}]`);
      }
      return v as number[][];
    },
  }),
};

export const serveBody = s.object(
  {
    key: key(),
    namespace,
    version: s.integer(1, Number.MAX_SAFE_INTEGER, { description: 'Default: the latest.' }),
    target: s.enum(['dense', 'gpu', 'cores'], {
      default: 'dense',
      invalid: (_v, field) => badRequest('target must be dense, gpu or cores', { field }),
    }),
    device: s.string({
      pattern: DEVICE_RE,
      docDefault: 'cuda:0',
      description: 'GPU device when target is gpu.',
      invalid: (_v, field) => badRequest('device must look like cuda:<int>, e.g. cuda:0', { field }),
    }),
    ...selectionFields,
  },
  { additionalProperties: true, required: ['key'], title: 'ServeRequest' },
);

export const versionQuery = {
  version: s.integer(1, Number.MAX_SAFE_INTEGER, { description: 'A version number; default: the latest.' }),
};

export const listQuery = {
  prefix,
  limit: s.integer(1, LIST_MAX_LIMIT, { default: LIST_DEFAULT_LIMIT }),
  offset: s.integer(0, Number.MAX_SAFE_INTEGER, { default: 0 }),
};

const pathNamespace = s.string({ description: 'Namespace (percent-encoded).' });
const pathKey = s.string({ description: 'Key, percent-encoded: a key a/b travels as a%2Fb.' });

export const STORAGE_ENDPOINTS = {
  put: {
    id: 'put',
    method: 'post',
    path: '/v1/put',
    tag: STORAGE,
    auth: 'tenant',
    operations: ['put'],
    engine: true,
    summary: 'Compress and store an array or blob',
    description:
      'JSON with data_b64, or the binary form: the .npy (application/x-npy) or the bytes of a blob ' +
      '(application/octet-stream) as the body, the other fields as query parameters (which apply to the binary ' +
      'form only) and metadata as a JSON object in the X-Ttstore-Metadata header.',
    query: putQuery,
    body: {
      json: putBody,
      limit: 'payload',
      required: true,
      raw: { 'application/x-npy': 'A NumPy .npy file (an array).', 'application/octet-stream': 'Raw bytes (always a blob).' },
    },
    answers: { 200: { description: 'Stored as a new version.', schema: putResponse } },
    problems: ENTRY_ERRORS,
  },
  put_cores: {
    id: 'put_cores',
    method: 'post',
    path: '/v1/put_cores',
    tag: STORAGE,
    auth: 'tenant',
    operations: ['put_cores'],
    summary: 'Store a tensor train given as its cores',
    description:
      `Checked from the cores' .npy headers before their data is read: ranks above ${MAX_RANK} are a 400 naming the ` +
      `core (\`core\`). So is a train whose work in one engine call would pass ${MAX_TRAIN_WORK.toExponential(2)} multiply-adds ` +
      "(about a tenth of a second): its norm sum_k n_k r_k r_k+1 (r_k + r_k+1), or bringing it into the engine's mode split " +
      'of the shape (where similarity and top-K compare it with other entries of that shape); a dense rebuild may also take ' +
      `${MAX_REBUILD_WORK_PER_VALUE} per value of the array. A train that would hold more values in the engine's split ` +
      'than the payload limit allows for cores is a 413. What is stored is the cores ' +
      'as given: serve target cores returns them, serve dense rebuilds the array bit for bit from them. Its dense form may be ' +
      'larger than the payload limit; such an entry is read in parts (serve with region, level or points).',
    body: { json: putCoresBody, limit: 'payload', required: true },
    answers: { 200: { description: 'Stored as a new version (verdict exact).', schema: putResponse } },
    problems: ENTRY_ERRORS,
  },
  put_cores_batch: {
    id: 'put_cores_batch',
    method: 'post',
    path: '/v1/put_cores_batch',
    tag: STORAGE,
    auth: 'tenant',
    operations: ['put_cores_batch'],
    summary: `Store up to ${MAX_BATCH_ENTRIES} trains at once, all or nothing`,
    description:
      'The first invalid entry gives 400 with `index`; every entry as put_cores, and the norms of all entries ' +
      `together at most ${MAX_TRAIN_WORK.toExponential(2)} multiply-adds. The bytes of all the cores are checked against the ` +
      'storage quota at once (402 storage_quota_exceeded stores none). A large batch is written in pieces that stay ' +
      'invisible until one final step makes every entry visible together.',
    body: { json: putCoresBatchBody, limit: 'payload', required: true },
    answers: {
      200: {
        description: 'All stored.',
        schema: s.object({ namespace: s.string(), count: s.integer(1, MAX_BATCH_ENTRIES), results: s.array(putResponse) }),
      },
    },
    problems: ENTRY_ERRORS,
  },
  get: {
    id: 'get',
    method: 'get',
    path: '/v1/get/{namespace}/{key}',
    tag: STORAGE,
    auth: 'tenant',
    operations: ['get'],
    summary: 'Fingerprint and metadata of an entry, without reconstructing it',
    description: 'Always an ETag; If-None-Match gives 304 (free). With ?version= the answer is immutable and cacheable.',
    pathParams: { namespace: pathNamespace, key: pathKey },
    query: versionQuery,
    answers: {
      200: {
        description: 'The entry.',
        schema: getResponse,
        headers: { ETag: 'Validator of this version.', 'Cache-Control': 'immutable with ?version=' },
      },
      304: { description: 'Not modified (If-None-Match matched).' },
    },
    problems: [400, 402, 403, 404],
  },
  serve: {
    id: 'serve',
    method: 'post',
    path: '/v1/serve',
    tag: STORAGE,
    auth: 'tenant',
    operations: ['serve_dense', 'serve_cores', 'serve_gpu'],
    engine: true,
    summary: 'Reconstruct an entry (dense), hand out its cores, or place them on a GPU',
    description:
      'target dense answers JSON with data_b64 (an .npy, or the bytes of a blob); with Accept: application/x-npy ' +
      '(or application/octet-stream for a blob) the body is the bytes themselves, the facts in X-Ttstore-* headers. ' +
      'With level, region or points (target dense, arrays only) only that part is computed, from the cores, and its shape is ' +
      'the shape answered; its output is capped by the payload limit (413), which a whole dense serve of a larger entry ' +
      'also answers.',
    body: { json: serveBody, limit: 'small', required: true },
    answers: {
      200: {
        description:
          'dense: {key, namespace, version, target, kind, dtype, shape, layout, verdict, fingerprint, data_b64}; ' +
          'cores: {key, namespace, version, target, dtype, shape, layout, ranks, cores: [{shape, data_b64}]}; ' +
          'gpu: {key, namespace, version, target, device, placed, resident_before, gpu_core_bytes, n_cores, ranks}.',
        schema: s.object(
          {
            key: s.string(),
            namespace: s.string(),
            version: s.integer(1, Number.MAX_SAFE_INTEGER),
            target: s.enum(['dense', 'gpu', 'cores']),
            kind: s.enum(['array', 'blob']),
            dtype: dtypeSchema,
            shape: shapeSchema,
            layout: layoutSchema,
            verdict: verdictSchema,
            fingerprint: s.json(),
            data_b64: s.base64(),
            ranks: s.array(s.integer(1, MAX_RANK)),
            cores: s.array(s.object({ shape: shapeSchema, data_b64: s.base64() })),
            device: s.string(),
            placed: s.boolean(),
            resident_before: s.boolean(),
            gpu_core_bytes: s.integer(0, Number.MAX_SAFE_INTEGER),
            n_cores: s.integer(0, MAX_CORES),
          },
          { title: 'ServeResponse' },
        ),
        content: {
          'application/x-npy': { description: 'The array as an .npy file (C order).' },
          'application/octet-stream': { description: "The bytes of a blob (or an array's raw data)." },
        },
      },
    },
    problems: [400, 402, 403, 404, 409, 413, 415, 501, 503],
  },
  delete: {
    id: 'delete',
    method: 'delete',
    path: '/v1/delete/{namespace}/{key}',
    tag: STORAGE,
    auth: 'tenant',
    operations: ['delete'],
    summary: 'Soft-delete every version of a key',
    pathParams: { namespace: pathNamespace, key: pathKey },
    answers: {
      200: {
        description: 'Deleted; purged after the retention period.',
        schema: s.object({
          key: s.string(),
          namespace: s.string(),
          deleted: s.boolean(),
          versions: s.integer(1, Number.MAX_SAFE_INTEGER),
          purge_after: s.number({ description: 'Unix seconds.' }),
        }),
      },
    },
    problems: [400, 402, 403, 404],
  },
  list: {
    id: 'list',
    method: 'get',
    path: '/v1/list/{namespace}',
    tag: STORAGE,
    auth: 'tenant',
    operations: ['list'],
    summary: 'Latest versions of the keys of a namespace, in ascending byte order',
    pathParams: { namespace: pathNamespace },
    query: listQuery,
    answers: {
      200: {
        description: 'One page of keys.',
        schema: s.object({
          namespace: s.string(),
          prefix: s.string(),
          keys: s.array(
            s.object({
              key: s.string(),
              version: s.integer(1, Number.MAX_SAFE_INTEGER),
              created_at: s.number(),
              verdict: verdictSchema,
              compressed: s.boolean(),
              original_bytes: s.integer(0, Number.MAX_SAFE_INTEGER),
              stored_core_bytes: s.integer(0, Number.MAX_SAFE_INTEGER),
            }),
          ),
          count: s.integer(0, LIST_MAX_LIMIT),
          total: s.integer(0, Number.MAX_SAFE_INTEGER),
          limit: s.integer(1, LIST_MAX_LIMIT),
          offset: s.integer(0, Number.MAX_SAFE_INTEGER),
        }),
      },
    },
    problems: [400, 402, 403],
  },
} satisfies Record<string, Endpoint>;
