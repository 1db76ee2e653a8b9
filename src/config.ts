// Every SVC_GATE_* variable, parsed in one place with types and ranges. A bad value stops start-up
// with a message that names the variable (CONTRACT.md section 7).
import os from 'node:os';
import path from 'node:path';
import { parseS3Url } from './store/blob-url.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

interface Spec<T> {
  name: string;
  description: string;
  defaultText: string;
  parse(raw: string | undefined): T;
}

function intVar(name: string, def: number, min: number, max: number, description: string): Spec<number> {
  return {
    name,
    description,
    defaultText: String(def),
    parse(raw) {
      if (raw === undefined || raw === '') return def;
      if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
      const v = Number(raw.trim());
      if (!Number.isSafeInteger(v) || v < min || v > max) {
        throw new ConfigError(`${name} must be an integer in [${min}, ${max}], got ${raw}`);
      }
      return v;
    },
  };
}

/** A string setting; a `secret` one is never shown in a message, even when it is malformed. */
function stringVar(
  name: string,
  def: string | undefined,
  description: string,
  check?: (v: string) => string | null,
  secret = false,
): Spec<string | undefined> {
  return {
    name,
    description,
    defaultText: def ?? '(unset)',
    parse(raw) {
      const v = raw === undefined || raw === '' ? def : raw;
      if (v !== undefined && check) {
        const problem = check(v);
        if (problem) throw new ConfigError(secret ? `${name} ${problem} (its value is not shown)` : `${name} ${problem}, got "${v}"`);
      }
      return v;
    },
  };
}

function enumVar<T extends string>(name: string, def: T, values: readonly T[], description: string): Spec<T> {
  return {
    name,
    description,
    defaultText: def,
    parse(raw) {
      const v = raw === undefined || raw === '' ? def : raw;
      if (!(values as readonly string[]).includes(v)) {
        throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${v}"`);
      }
      return v as T;
    },
  };
}

/** What a node does (SVC_GATE_ROLES): `api` serves the HTTP API, `worker` runs simulation jobs from the shared queue. */
export const NODE_ROLES = ['api', 'worker'] as const;
export type NodeRoles = { api: boolean; worker: boolean };

function rolesVar(name: string, description: string): Spec<NodeRoles> {
  return {
    name,
    description,
    defaultText: NODE_ROLES.join(','),
    parse(raw) {
      const v = raw === undefined || raw.trim() === '' ? NODE_ROLES.join(',') : raw;
      const roles = v.split(',').map((r) => r.trim());
      const bad = roles.find((r) => !(NODE_ROLES as readonly string[]).includes(r));
      if (bad !== undefined || new Set(roles).size !== roles.length) {
        throw new ConfigError(`${name} must be a comma-separated list of distinct roles among ${NODE_ROLES.join(', ')}, got "${v}"`);
      }
      return { api: roles.includes('api'), worker: roles.includes('worker') };
    },
  };
}

const GiB = 1024 ** 3;

export const SPECS = {
  host: stringVar('SVC_GATE_HOST', '127.0.0.1', 'Address the HTTP server listens on', (v) =>
    /^[A-Za-z0-9.:_%-]{1,253}$/.test(v) ? null : 'must be an IP address or a host name',
  ),
  port: intVar('SVC_GATE_PORT', 8080, 0, 65535, 'TCP port (0: any free port, logged at start)'),
  dataDir: stringVar('SVC_GATE_DATA_DIR', './data', 'Directory of the SQLite database and blob files'),
  databaseUrl: stringVar(
    'SVC_GATE_DATABASE_URL',
    undefined,
    'Metadata in PostgreSQL (postgres://user:password@host:port/db); unset: SQLite in the data dir',
    (v) => (/^postgres(ql)?:\/\/[^\s]+$/.test(v) ? null : 'must be a postgres:// URL'),
    true,
  ),
  serviceKey: stringVar(
    'SVC_GATE_ENGINE_SERVICE_KEY',
    undefined,
    'Admin service key; unset: generated at first start into <data dir>/service.key (mode 0600)',
    (v) => (v.length < 16 ? 'must be at least 16 characters' : null),
    true,
  ),
  defaultRateLimitRequests: intVar(
    'SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS',
    100,
    1,
    10_000_000,
    'Rate limit (requests per window) for enterprise tenants and records without one',
  ),
  defaultRateLimitWindowS: intVar('SVC_GATE_DEFAULT_RATE_LIMIT_WINDOW_S', 60, 1, 86_400, 'Rate-limit window in seconds for the same'),
  enterpriseMonthlyQuota: intVar('SVC_GATE_ENTERPRISE_MONTHLY_QUOTA', 10_000_000, 0, 1e15, 'Monthly CU quota of enterprise tenants'),
  maxPayloadBytes: intVar(
    'SVC_GATE_MAX_PAYLOAD_BYTES',
    268_435_456,
    1,
    4 * GiB,
    'Largest decoded array or blob payload, bytes (larger: 413)',
  ),
  compressionThresholdBytes: intVar(
    'SVC_GATE_COMPRESSION_THRESHOLD_BYTES',
    4096,
    0,
    4 * GiB,
    'Payloads whose data is smaller are stored as they are (verdict passthrough)',
  ),
  retentionDays: intVar(
    'SVC_GATE_RETENTION_DAYS',
    30,
    0,
    36_500,
    'Days tombstones and deactivated tenants are kept before compaction purges them',
  ),
  simConcurrency: intVar('SVC_GATE_SIM_CONCURRENCY', 1, 1, 64, 'Simulation jobs running at once'),
  coreCacheBytes: intVar('SVC_GATE_CORE_CACHE_BYTES', GiB, 0, 1024 * GiB, 'Byte budget of the in-memory cache of decoded cores'),
  logLevel: enumVar('SVC_GATE_LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'Log level'),
  shutdownGraceS: intVar('SVC_GATE_SHUTDOWN_GRACE_S', 10, 0, 3600, 'Seconds in-flight requests get to finish on SIGTERM/SIGINT'),
  shutdownDelayS: intVar(
    'SVC_GATE_SHUTDOWN_DELAY_S',
    0,
    0,
    300,
    'On SIGTERM/SIGINT, seconds the node goes on serving, with /gate/health answering 503 "draining", before it stops accepting: time for a balancer that health-checks it to stop choosing it; 0: it stops accepting at once',
  ),
  shutdownIdleS: intVar(
    'SVC_GATE_SHUTDOWN_IDLE_S',
    0,
    0,
    60,
    'On SIGTERM/SIGINT, seconds idle keep-alive connections stay open for a load balancer to close them (set it above its upstream keep-alive timeout); 0: closed at once',
  ),
  engineThreads: intVar('SVC_GATE_ENGINE_THREADS', 0, 0, 1024, 'Engine (OpenMP/BLAS) threads; 0: one per core'),
  engineBackend: enumVar(
    'SVC_GATE_ENGINE_BACKEND',
    'auto',
    ['auto', 'cpu', 'cuda'] as const,
    'Engine backend: auto (CUDA when a usable device is found, else CPU), cpu, or cuda (start-up fails without a device)',
  ),
  tenantInflight: intVar(
    'SVC_GATE_TENANT_INFLIGHT',
    4,
    1,
    1024,
    'Engine requests (compress, reconstruct, dense serve, similarity, top-K) one tenant may have in flight; more: 429 too_many_in_flight',
  ),
  maxInflightBytes: {
    ...intVar(
      'SVC_GATE_MAX_INFLIGHT_BYTES',
      Math.floor(os.totalmem() / 4),
      1 << 20,
      1024 * 1024 * GiB,
      'Bytes held for requests in flight (bodies, dense results, base64 copies); no tenant holds more than half while another has requests in flight',
    ),
    defaultText: 'a quarter of physical memory',
  },
  jobsQueuedPerTenant: intVar(
    'SVC_GATE_JOBS_QUEUED_PER_TENANT',
    16,
    1,
    100_000,
    'Queued simulation jobs one tenant may hold, running ones not counted; more: 429 too_many_jobs',
  ),
  jobQuantumS: intVar(
    'SVC_GATE_JOB_QUANTUM_S',
    10,
    1,
    86_400,
    "Seconds a simulation job runs before it yields to another tenant's waiting job",
  ),
  enterpriseStorageQuotaBytes: intVar(
    'SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES',
    -1,
    -1,
    Number.MAX_SAFE_INTEGER,
    'Stored bytes allowed to enterprise tenants without their own storage_quota_bytes; -1: unlimited',
  ),
  gpuCacheBytes: intVar(
    'SVC_GATE_GPU_CACHE_BYTES',
    4 * GiB,
    0,
    1024 * GiB,
    'Byte budget per device for entry cores placed on a GPU (serve target gpu), least recently used first out',
  ),
  // Several nodes, one store (docs/deploy.md): blobs in shared storage, rate limits and cache invalidation in Redis.
  blobUrl: stringVar(
    'SVC_GATE_BLOB_URL',
    undefined,
    'Where blobs live when nodes share them: s3://bucket/prefix (S3-compatible storage) or an absolute folder path every node mounts; unset: <SVC_GATE_DATA_DIR>/blobs',
    (v) =>
      parseS3Url(v) !== null || (!v.startsWith('s3:') && path.isAbsolute(v)) ? null : 'must be s3://bucket/prefix or an absolute path',
  ),
  blobSweepGraceS: intVar(
    'SVC_GATE_BLOB_SWEEP_GRACE_S',
    3600,
    60,
    30 * 86_400,
    'With SVC_GATE_BLOB_URL: the start-up sweep removes only unclaimed blobs older than this, so writes in flight on other nodes are safe',
  ),
  s3Endpoint: stringVar('SVC_GATE_S3_ENDPOINT', undefined, 'Endpoint URL of the S3-compatible server (unset: AWS S3)', (v) =>
    /^https?:\/\/[^\s/]+\/?$/.test(v) ? null : 'must be an http(s)://host[:port] URL',
  ),
  s3Region: stringVar('SVC_GATE_S3_REGION', 'us-east-1', 'Region of the S3 bucket', (v) =>
    /^[a-z0-9-]{1,40}$/.test(v) ? null : 'must be a region name such as us-east-1',
  ),
  s3ForcePathStyle: enumVar(
    'SVC_GATE_S3_FORCE_PATH_STYLE',
    'true',
    ['true', 'false'] as const,
    'Bucket in the URL path (most S3-compatible servers) rather than the host name',
  ),
  s3AccessKeyId: stringVar(
    'SVC_GATE_S3_ACCESS_KEY_ID',
    undefined,
    "S3 access key id (unset: the SDK's AWS_ACCESS_KEY_ID, profile or role)",
    (v) => (/^[\x21-\x7e]{1,256}$/.test(v) ? null : 'must be 1-256 printable characters'),
  ),
  s3SecretAccessKey: stringVar(
    'SVC_GATE_S3_SECRET_ACCESS_KEY',
    undefined,
    'S3 secret access key, with SVC_GATE_S3_ACCESS_KEY_ID',
    (v) => (/^[\x21-\x7e]{1,256}$/.test(v) ? null : 'must be 1-256 printable characters'),
    true,
  ),
  roles: rolesVar(
    'SVC_GATE_ROLES',
    'What this node does: api (serves the HTTP API; without it only health and metrics), worker (runs simulation jobs from the shared queue), or both',
  ),
  redisUrl: stringVar(
    'SVC_GATE_REDIS_URL',
    undefined,
    'redis://[:password@]host:port[/db]: rate limits shared by every node and cache invalidation across nodes; unset: per process',
    (v) => (/^rediss?:\/\/\S+$/.test(v) ? null : 'must be a redis:// or rediss:// URL'),
    true,
  ),
} as const;

type SpecValue<S> = S extends Spec<infer T> ? T : never;
type Parsed = { [K in keyof typeof SPECS]: SpecValue<(typeof SPECS)[K]> };

export interface Config extends Omit<Parsed, 'host' | 'dataDir'> {
  host: string;
  /** Absolute path. */
  dataDir: string;
}

/** Parse the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const out: Record<string, unknown> = {};
  for (const [field, spec] of Object.entries(SPECS)) {
    out[field] = (spec as Spec<unknown>).parse(env[spec.name]);
  }
  const parsed = out as Parsed;
  if ((parsed.s3AccessKeyId === undefined) !== (parsed.s3SecretAccessKey === undefined)) {
    throw new ConfigError('SVC_GATE_S3_ACCESS_KEY_ID and SVC_GATE_S3_SECRET_ACCESS_KEY are set together or not at all');
  }
  return { ...parsed, host: parsed.host ?? '127.0.0.1', dataDir: path.resolve(parsed.dataDir ?? './data') };
}

/** SVC_GATE_* names in `env` that no setting reads (a typo would otherwise pass silently). */
export function unknownVariables(env: NodeJS.ProcessEnv = process.env): string[] {
  const known = new Set(Object.values(SPECS).map((s) => s.name));
  return Object.keys(env)
    .filter((k) => k.startsWith('SVC_GATE_') && !known.has(k))
    .sort();
}

/** `--help` text: every variable with its default. */
export function helpText(): string {
  const rows = Object.values(SPECS).map((s) => `  ${s.name.padEnd(40)} ${s.description} (default: ${s.defaultText})`);
  return [
    'ttstore: compressed tensor store',
    '',
    'Usage: npm start [-- --help]   (or: node dist/src/main.js [--help])',
    '',
    'Environment (a bad value stops start-up with a message naming the variable):',
    ...rows,
    '',
    'Signals: SIGTERM or SIGINT stop accepting, let in-flight requests finish within SVC_GATE_SHUTDOWN_GRACE_S,',
    're-queue running simulation jobs, close the database and exit 0. A second signal exits at once (code 1).',
    '',
    'Operations: GET /gate/health (open), GET /gate/metrics (service key, Prometheus), GET /openapi.json and /docs (open).',
    '',
  ].join('\n');
}
