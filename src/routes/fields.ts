// Field schemas several endpoints share (CONTRACT.md sections 1-3) and the response shapes of entries.
import { DTYPES, METRICS } from '../engine/types.js';
import { NAMESPACE_RE, validateKey, validatePrefix } from '../entries/identifiers.js';
import { validateMetadata } from '../entries/metadata.js';
import { JSON_MAX_DEPTH, MAX_CORES, MAX_KEY_BYTES, METADATA_MAX_BYTES, METADATA_MAX_KEYS, sizeText } from '../limits/input.js';
import { DOMAIN_TOLERANCE, type Domain } from '../entries/oracle.js';
import { MAX_RANK } from '../engine/limits.js';
import { badRequest, ProblemError, quoteValue } from '../http/errors.js';
import { s } from '../http/schema/types.js';

export const DOMAINS = Object.keys(DOMAIN_TOLERANCE) as Domain[];

export const namespace = s.string({
  pattern: NAMESPACE_RE,
  default: 'default',
  description: "Namespace of the tenant (CONTRACT.md section 1); must be in the key's namespace ACL.",
  invalid: (_v, field) => badRequest(`${field} must match ${NAMESPACE_RE.source}`, { field }),
});

/** A rule of the entries layer as a refine hook: its 400 gets the field's path. */
function withField<T>(rule: (v: T, field: string) => T): (v: T, field: string) => T {
  return (v, field) => {
    try {
      return rule(v, field);
    } catch (err) {
      if (err instanceof ProblemError && err.extra.field === undefined) throw badRequest(err.message, { ...err.extra, field });
      throw err;
    }
  };
}

/** A stored key: 1..1024 bytes of UTF-8 (well-formed), no control characters. */
export const key = (description = 'Key of the entry within its namespace.') =>
  s.string({
    description: `${description} 1 to ${MAX_KEY_BYTES} bytes of UTF-8, no control characters (U+0000-U+001F, U+007F).`,
    refine: withField(validateKey),
  });

export const prefix = s.string({
  description: 'Key prefix filter (empty: every key).',
  docDefault: '',
  refine: withField((v: string) => validatePrefix(v)),
});

export const metadata = s.json({
  maxProperties: METADATA_MAX_KEYS,
  description:
    `Arbitrary JSON object, indexed by its top-level names for search and filters: at most ${sizeText(METADATA_MAX_BYTES)} ` +
    `as compact JSON, ${METADATA_MAX_KEYS} top-level names and ${JSON_MAX_DEPTH} levels of objects and arrays (the metadata object is level 1).`,
  refine: withField(validateMetadata),
});

export const domain = s.enum(DOMAINS, {
  description:
    'Oracle hint; sets the tolerance when `tolerance` is absent: ' +
    `${Object.entries(DOMAIN_TOLERANCE)
      .map(([d, t]) => `${d} ${t}`)
      .join(', ')}.`,
  docDefault: 'structured_data',
  invalid: (v, field) =>
    badRequest(`unknown ${field} ${quoteValue(v)}; valid domains: ${DOMAINS.join(', ')}`, { field, valid_domains: DOMAINS }),
});

export const tolerance = s.number({
  minimum: 0,
  exclusiveMaximum: 1,
  description: "Relative Frobenius error target; overrides the domain's.",
});

export const maxRank = s.integer(1, MAX_RANK, {
  description: 'Cap on every bond dimension; with it a weak result is stored rather than passed through.',
});

export const metric = s.enum(METRICS, {
  default: 'cosine',
  description: 'cosine and dot: larger is closer; euclidean: smaller is closer.',
});

export const dataB64 = s.base64({
  description: 'Standard base64 of a NumPy .npy file (an array) or of raw bytes (a blob), CONTRACT.md section 2.',
});

const fingerprint = s.object(
  {
    frobenius_error: s.number(),
    max_abs_error: s.number(),
    relative_error: s.number(),
  },
  { description: 'Errors of what serve returns against the input (CONTRACT.md section 3).' },
);

const verdict = s.enum(['exact', 'safe', 'weak', 'passthrough']);
const dtype = s.enum(DTYPES);
const shape = s.array(s.integer(0, Number.MAX_SAFE_INTEGER), { maxItems: 8 });
const layout = s.enum(['row_major', 'interleaved']);

const entryFields = {
  key: s.string(),
  namespace: s.string(),
  version: s.integer(1, Number.MAX_SAFE_INTEGER),
  kind: s.enum(['array', 'blob']),
  dtype,
  shape,
  layout,
  compressed: s.boolean(),
  compression_ratio: s.number(),
  original_bytes: s.integer(0, Number.MAX_SAFE_INTEGER),
  stored_core_bytes: s.integer(0, Number.MAX_SAFE_INTEGER),
  n_cores: s.integer(0, MAX_CORES),
  ranks: s.array(s.integer(1, MAX_RANK), { description: 'Bond dimensions r_0 .. r_d (empty when passthrough).' }),
  max_rank: s.integer(0, MAX_RANK),
  fingerprint,
  domain: s.string(),
  created_at: s.number({ description: 'Unix seconds.' }),
  verdict,
  tolerance: s.number(),
};

export const putResponse = s.object(entryFields, { title: 'PutResponse' });
export const getResponse = s.object(
  {
    ...entryFields,
    oracle_verdict: verdict,
    total_core_bytes: s.integer(0, Number.MAX_SAFE_INTEGER),
    metadata: s.json(),
  },
  { title: 'GetResponse' },
);

export { dtype as dtypeSchema, shape as shapeSchema, layout as layoutSchema, verdict as verdictSchema };
