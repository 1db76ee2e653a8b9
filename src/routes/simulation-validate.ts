// Validation of simulation requests at the edge (CONTRACT.md sections 4 and 6): one function per
// solver turns the untrusted `params` object into the job's parameters, with the contract's defaults
// filled in, or throws a 400 problem naming the offending field (`field: "params.<name>"`). Each
// reader call below is one schema rule, kept declarative so the same rules can feed OpenAPI.
import { badRequest, ProblemError } from '../errors.js';
import { MAX_KEY_BYTES, NAMESPACE_RE, queryValue, validateKey } from '../entries/identifiers.js';
import { JOB_STATUSES, type JobParams, type JobStatus } from '../jobs/job.js';

export const SOLVERS = ['poisson_2d', 'navier_stokes_2d', 'euler_2d', 'helmholtz_3d'] as const;
export type Solver = (typeof SOLVERS)[number];

/** Every solver: grids of at least 2^9 points per axis (SPEC.md). */
export const MIN_N_BITS = 9;
/** Largest n_bits per solver (CONTRACT.md section 6; SPEC.md's grid sizes). */
export const MAX_N_BITS: Readonly<Record<Solver, number>> = {
  poisson_2d: 14,
  navier_stokes_2d: 12,
  euler_2d: 13,
  helmholtz_3d: 14,
};

/** Bounds that keep one job finite; larger values are a 400. */
export const MAX_STEPS = 1_000_000;
export const MAX_ITERS = 10_000_000;
export const MAX_SEED = 2 ** 32 - 1;
export const MAX_RANK = 4096;
export const MAX_MODES = 64;
/**
 * Longest output_key_prefix in bytes: room for "/<field>/step_<n>" so that every output key stays a
 * valid key (at most 1024 bytes).
 */
export const MAX_PREFIX_BYTES = MAX_KEY_BYTES - 64;

export const SUBMIT_FIELDS = ['solver', 'namespace', 'params', 'output_key_prefix'] as const;
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 1000;

export interface SubmitRequest {
  solver: Solver;
  namespace: string;
  outputKeyPrefix: string;
  params: JobParams;
}

const invalid = (field: string, detail: string): ProblemError => badRequest(detail, { field });

/** Reads one solver's params: typed getters that record what they consumed; done() rejects the rest. */
class ParamReader {
  private readonly used = new Set<string>();
  readonly out: JobParams = {};

  constructor(private readonly raw: Record<string, unknown>) {}

  has(name: string): boolean {
    return this.raw[name] !== undefined && this.raw[name] !== null;
  }

  private take(name: string): unknown {
    this.used.add(name);
    const v = this.raw[name];
    return v === null ? undefined : v;
  }

  /** An integer in [min, max]; `def` fills it when absent, `required` makes absence a 400. */
  int(name: string, min: number, max: number, opts: { required?: boolean; def?: number } = {}): void {
    const v = this.take(name);
    if (v === undefined) {
      if (opts.required) throw invalid(`params.${name}`, `params.${name} is required (an integer in [${min}, ${max}])`);
      if (opts.def !== undefined) this.out[name] = opts.def;
      return;
    }
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) {
      throw invalid(`params.${name}`, `params.${name} must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
    }
    this.out[name] = v;
  }

  /** A finite number with exclusive lower bound `gt` and inclusive/exclusive upper bound. */
  num(name: string, range: { gt?: number; ge?: number; lt?: number; le?: number }, opts: { required?: boolean; def?: number } = {}): void {
    const v = this.take(name);
    const text = [
      range.gt !== undefined ? `> ${range.gt}` : '', range.ge !== undefined ? `>= ${range.ge}` : '',
      range.lt !== undefined ? `< ${range.lt}` : '', range.le !== undefined ? `<= ${range.le}` : '',
    ].filter(Boolean).join(' and ');
    const what = `a finite number${text ? ` ${text}` : ''}`;
    if (v === undefined) {
      if (opts.required) throw invalid(`params.${name}`, `params.${name} is required (${what})`);
      if (opts.def !== undefined) this.out[name] = opts.def;
      return;
    }
    const ok = typeof v === 'number' && Number.isFinite(v)
      && (range.gt === undefined || v > range.gt) && (range.ge === undefined || v >= range.ge)
      && (range.lt === undefined || v < range.lt) && (range.le === undefined || v <= range.le);
    if (!ok) throw invalid(`params.${name}`, `params.${name} must be ${what}, got ${JSON.stringify(v)}`);
    this.out[name] = v;
  }

  /** One of `values`; `def` (the first value unless given otherwise) when absent. */
  oneOf<T extends string>(name: string, values: readonly T[], def: T | undefined = values[0]): T | undefined {
    const v = this.take(name);
    if (v === undefined) {
      if (def !== undefined) this.out[name] = def;
      return def;
    }
    if (typeof v !== 'string' || !(values as readonly string[]).includes(v)) {
      throw invalid(`params.${name}`, `params.${name} must be one of ${values.join(', ')}, got ${JSON.stringify(v)}`);
    }
    this.out[name] = v;
    return v as T;
  }

  /** A list of 1..maxItems tuples of numbers, each checked by `item` (which returns a problem text or null). */
  tuples(name: string, length: number, maxItems: number, item: (t: number[]) => string | null, def?: number[][]): void {
    const v = this.take(name);
    if (v === undefined) {
      if (def !== undefined) this.out[name] = def;
      return;
    }
    const shape = `a list of 1 to ${maxItems} lists of ${length} numbers`;
    if (!Array.isArray(v) || v.length === 0 || v.length > maxItems) throw invalid(`params.${name}`, `params.${name} must be ${shape}`);
    v.forEach((t: unknown, i) => {
      if (!Array.isArray(t) || t.length !== length || !t.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw invalid(`params.${name}[${i}]`, `params.${name}[${i}] must be a list of ${length} finite numbers`);
      }
      const problem = item(t as number[]);
      if (problem) throw invalid(`params.${name}[${i}]`, `params.${name}[${i}] ${problem}`);
    });
    this.out[name] = v as number[][];
  }

  /** Refuse every param no rule consumed (a typo must not silently fall back to a default). */
  done(solver: Solver): JobParams {
    const unknown = Object.keys(this.raw).filter((k) => !this.used.has(k));
    if (unknown.length > 0) {
      const allowed = [...this.used].join(', ');
      throw invalid(`params.${unknown[0]}`,
        `unknown param${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `params.${k}`).join(', ')} for ${solver}; allowed: ${allowed}`);
    }
    return this.out;
  }
}

/** n_bits: an integer, at least MIN_N_BITS (grid_too_small) and at most the solver's largest (grid_too_large). */
function nBits(p: ParamReader, raw: Record<string, unknown>, solver: Solver): void {
  const v = raw.n_bits;
  const max = MAX_N_BITS[solver];
  if (v === undefined || v === null) throw invalid('params.n_bits', `params.n_bits is required (an integer in [${MIN_N_BITS}, ${max}] for ${solver})`);
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw invalid('params.n_bits', `params.n_bits must be an integer in [${MIN_N_BITS}, ${max}], got ${JSON.stringify(v)}`);
  }
  if (v < MIN_N_BITS) {
    throw new ProblemError(400, 'grid_too_small',
      `params.n_bits = ${v} gives a grid below 512 points per axis; every solver needs n_bits >= ${MIN_N_BITS}`,
      { field: 'params.n_bits', min_n_bits: MIN_N_BITS, max_n_bits: max });
  }
  if (v > max) {
    throw new ProblemError(400, 'grid_too_large',
      `params.n_bits = ${v} is above the largest grid of ${solver} (n_bits <= ${max}, ${2 ** max} points per axis)`,
      { field: 'params.n_bits', min_n_bits: MIN_N_BITS, max_n_bits: max });
  }
  p.int('n_bits', MIN_N_BITS, max, { required: true });
}

/** Params every solver takes: seed (default 0) and snapshot_every (optional; no snapshots when absent). */
function common(p: ParamReader): void {
  p.int('seed', 0, MAX_SEED, { def: 0 });
  p.int('snapshot_every', 1, MAX_STEPS);
}

export function poisson2d(raw: Record<string, unknown>): JobParams {
  const p = new ParamReader(raw);
  nBits(p, raw, 'poisson_2d');
  p.oneOf('rhs', ['manufactured', 'gaussians', 'dipole']);
  p.num('tol', { gt: 0, lt: 1 }, { def: 1e-8 });
  p.int('max_iters', 1, MAX_ITERS);
  p.oneOf('preconditioner', ['multigrid', 'none']);
  common(p);
  return p.done('poisson_2d');
}

export function navierStokes2d(raw: Record<string, unknown>): JobParams {
  const p = new ParamReader(raw);
  nBits(p, raw, 'navier_stokes_2d');
  p.num('reynolds', { gt: 0 }, { required: true });
  p.int('steps', 1, MAX_STEPS, { required: true });
  p.num('dt', { gt: 0 }, { required: true });
  p.int('max_rank', 1, MAX_RANK, { def: 64 });
  p.oneOf('initial', ['taylor_green', 'shear_layer', 'decaying_turbulence']);
  common(p);
  return p.done('navier_stokes_2d');
}

export function euler2d(raw: Record<string, unknown>): JobParams {
  const p = new ParamReader(raw);
  nBits(p, raw, 'euler_2d');
  p.oneOf('problem', ['isentropic_vortex', 'sod_x', 'riemann_config3', 'kelvin_helmholtz']);
  const tEnd = p.has('t_end');
  const steps = p.has('steps');
  if (tEnd && steps) throw invalid('params.steps', 'give params.t_end or params.steps, not both');
  if (!tEnd && !steps) throw invalid('params.t_end', 'params.t_end (a number > 0) or params.steps (an integer >= 1) is required');
  p.num('t_end', { gt: 0 });
  p.int('steps', 1, MAX_STEPS);
  p.num('cfl', { gt: 0, le: 1 }, { def: 0.4 });
  common(p);
  return p.done('euler_2d');
}

export function helmholtz3d(raw: Record<string, unknown>): JobParams {
  const p = new ParamReader(raw);
  nBits(p, raw, 'helmholtz_3d');
  p.num('nu', { gt: 0 }, { required: true });
  p.num('dt', { gt: 0 }, { required: true });
  p.int('steps', 1, MAX_STEPS, { required: true });
  p.oneOf('boundary', ['periodic', 'dirichlet']);
  const initial = p.oneOf('initial', ['modes', 'gaussian']);
  if (initial === 'modes') {
    p.tuples('modes', 4, MAX_MODES, ([kx, ky, kz]) =>
      [kx, ky, kz].every((k) => Number.isSafeInteger(k) && k! >= 1) ? null : 'needs integer wave numbers kx, ky, kz >= 1 ([kx, ky, kz, amplitude])',
    [[1, 1, 1, 1.0]]);
  } else if (p.has('modes')) {
    throw invalid('params.modes', 'params.modes applies only to initial "modes"');
  }
  p.int('max_rank', 1, MAX_RANK);
  p.num('tol', { gt: 0, lt: 1 });
  common(p);
  return p.done('helmholtz_3d');
}

export const SOLVER_PARAMS: Readonly<Record<Solver, (raw: Record<string, unknown>) => JobParams>> = {
  poisson_2d: poisson2d,
  navier_stokes_2d: navierStokes2d,
  euler_2d: euler2d,
  helmholtz_3d: helmholtz3d,
};

function isSolver(v: unknown): v is Solver {
  return typeof v === 'string' && (SOLVERS as readonly string[]).includes(v);
}

function namespaceField(v: unknown): string {
  if (v === undefined || v === null) return 'default';
  if (typeof v !== 'string' || !NAMESPACE_RE.test(v)) throw invalid('namespace', `namespace must match ${NAMESPACE_RE.source}`);
  return v;
}

/** output_key_prefix: a valid key (CONTRACT.md section 1) short enough for every output key. */
function prefixField(v: unknown, solver: Solver): string {
  if (v === undefined || v === null) return solver;
  const field = 'output_key_prefix';
  try {
    validateKey(v, field);
  } catch (err) {
    throw err instanceof ProblemError ? invalid(field, err.message) : err;
  }
  const bytes = Buffer.byteLength(v as string, 'utf8');
  if (bytes > MAX_PREFIX_BYTES) throw invalid(field, `${field} is ${bytes} bytes of UTF-8; at most ${MAX_PREFIX_BYTES} are allowed`);
  return v as string;
}

/** POST /v1/simulation/submit body -> a validated request (400 naming the field otherwise). */
export function parseSubmit(body: Record<string, unknown>): SubmitRequest {
  const unknown = Object.keys(body).filter((k) => !(SUBMIT_FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    throw invalid(unknown[0]!, `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; allowed: ${SUBMIT_FIELDS.join(', ')}`);
  }
  const solver = body.solver;
  if (solver === undefined || solver === null) throw invalid('solver', `solver is required: one of ${SOLVERS.join(', ')}`);
  if (!isSolver(solver)) {
    throw new ProblemError(400, 'unknown_solver', `unknown solver ${JSON.stringify(solver)}; solvers: ${SOLVERS.join(', ')}`,
      { field: 'solver', solvers: [...SOLVERS] });
  }
  const namespace = namespaceField(body.namespace);
  const raw = body.params;
  if (raw === undefined || raw === null) throw invalid('params', `params is required: an object with at least n_bits`);
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalid('params', 'params must be a JSON object');
  const params = SOLVER_PARAMS[solver](raw as Record<string, unknown>);
  const outputKeyPrefix = prefixField(body.output_key_prefix, solver);
  return { solver, namespace, outputKeyPrefix, params };
}

export interface ListQuery {
  namespace?: string;
  status?: JobStatus;
  limit: number;
}

/** GET /v1/simulation/list query: namespace, status, limit (1..1000, default 50). */
export function parseListQuery(query: Record<string, string | string[] | undefined>): ListQuery {
  const out: ListQuery = { limit: LIST_DEFAULT_LIMIT };
  const limit = queryValue(query, 'limit');
  if (limit !== undefined) {
    const n = /^\d{1,7}$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= LIST_MAX_LIMIT)) throw invalid('limit', `limit must be an integer in [1, ${LIST_MAX_LIMIT}], got ${JSON.stringify(limit)}`);
    out.limit = n;
  }
  const ns = queryValue(query, 'namespace');
  if (ns !== undefined) {
    if (!NAMESPACE_RE.test(ns)) throw invalid('namespace', `namespace must match ${NAMESPACE_RE.source}`);
    out.namespace = ns;
  }
  const status = queryValue(query, 'status');
  if (status !== undefined) {
    if (!(JOB_STATUSES as readonly string[]).includes(status)) {
      throw invalid('status', `status must be one of ${JOB_STATUSES.join(', ')}`);
    }
    out.status = status as JobStatus;
  }
  return out;
}
