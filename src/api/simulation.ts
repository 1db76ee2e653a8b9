// The simulation endpoints (CONTRACT.md section 6) and their schemas: one params object per solver,
// with the contract's defaults, so the document lists every solver's params and the validator fills
// them in from the same description.
import { MAX_RANK } from '../engine/limits.js';
import { MAX_KEY_BYTES, NAMESPACE_RE } from '../entries/identifiers.js';
import { badRequest, ProblemError } from '../errors.js';
import { JOB_STATUSES } from '../jobs/job.js';
import { s, type ObjectSchema, type Schema } from '../schema/types.js';
import type { Endpoint } from './endpoint.js';
import { key, namespace } from './common.js';

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
export const MAX_MODES = 64;
/**
 * Longest output_key_prefix in bytes: room for "/<field>/step_<n>" so that every output key stays a
 * valid key (at most 1024 bytes).
 */
export const MAX_PREFIX_BYTES = MAX_KEY_BYTES - 64;
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 1000;

const invalid = (field: string, detail: string): ProblemError => badRequest(detail, { field });

/** n_bits: below MIN_N_BITS is grid_too_small, above the solver's largest grid_too_large (own codes). */
function nBits(solver: Solver): Schema {
  const max = MAX_N_BITS[solver];
  return s.integer(MIN_N_BITS, max, {
    description: `log2 of the grid points per axis: ${MIN_N_BITS} (512) to ${max} (${2 ** max}).`,
    invalid(v, field, generic) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return generic;
      if (v < MIN_N_BITS) {
        return new ProblemError(400, 'grid_too_small',
          `${field} = ${v} gives a grid below 512 points per axis; every solver needs n_bits >= ${MIN_N_BITS}`,
          { field, min_n_bits: MIN_N_BITS, max_n_bits: max });
      }
      return new ProblemError(400, 'grid_too_large',
        `${field} = ${v} is above the largest grid of ${solver} (n_bits <= ${max}, ${2 ** max} points per axis)`,
        { field, min_n_bits: MIN_N_BITS, max_n_bits: max });
    },
  });
}

/** Params every solver takes. */
const common = {
  seed: s.integer(0, MAX_SEED, { default: 0, description: 'Seed of the random parts of the set-up.' }),
  snapshot_every: s.integer(1, MAX_STEPS, { description: 'Also store every field each this many steps ({prefix}/{field}/step_{n}).' }),
};
const positive = (description: string) => s.number({ exclusiveMinimum: 0, description });

const params = (properties: Record<string, Schema>, required: string[], o: Partial<ObjectSchema> = {}): ObjectSchema =>
  s.object(properties, { required: ['n_bits', ...required], ...o });

export const SOLVER_PARAMS: Readonly<Record<Solver, ObjectSchema>> = {
  poisson_2d: params({
    n_bits: nBits('poisson_2d'),
    rhs: s.enum(['manufactured', 'gaussians', 'dipole'], { default: 'manufactured', description: 'manufactured: f = 2π² sin πx sin πy.' }),
    tol: s.number({ exclusiveMinimum: 0, exclusiveMaximum: 1, default: 1e-8, description: 'Relative residual at which CG stops.' }),
    max_iters: s.integer(1, MAX_ITERS, { description: 'Cap on CG iterations (default: the solver\'s).' }),
    preconditioner: s.enum(['multigrid', 'none'], { default: 'multigrid' }),
    ...common,
  }, [], { title: 'poisson_2d params' }),
  navier_stokes_2d: params({
    n_bits: nBits('navier_stokes_2d'),
    reynolds: positive('Reynolds number.'),
    steps: s.integer(1, MAX_STEPS, { description: 'Time steps.' }),
    dt: positive('Time step.'),
    max_rank: s.integer(1, MAX_RANK, { default: 64, description: 'Rank cap of the QTT fields.' }),
    initial: s.enum(['taylor_green', 'shear_layer', 'decaying_turbulence'], { default: 'taylor_green' }),
    ...common,
  }, ['reynolds', 'steps', 'dt'], { title: 'navier_stokes_2d params' }),
  euler_2d: params({
    n_bits: nBits('euler_2d'),
    problem: s.enum(['isentropic_vortex', 'sod_x', 'riemann_config3', 'kelvin_helmholtz'], { default: 'isentropic_vortex' }),
    t_end: positive('End time (give t_end or steps, not both).'),
    steps: s.integer(1, MAX_STEPS, { description: 'Time steps (give t_end or steps, not both).' }),
    cfl: s.number({ exclusiveMinimum: 0, maximum: 1, default: 0.4 }),
    ...common,
  }, [], {
    title: 'euler_2d params',
    refine(p, field) {
      const tEnd = p.t_end !== undefined;
      const steps = p.steps !== undefined;
      if (tEnd && steps) throw invalid(`${field}.steps`, `give ${field}.t_end or ${field}.steps, not both`);
      if (!tEnd && !steps) throw invalid(`${field}.t_end`, `${field}.t_end (a number > 0) or ${field}.steps (an integer >= 1) is required`);
      return p;
    },
  }),
  helmholtz_3d: params({
    n_bits: nBits('helmholtz_3d'),
    nu: positive('Diffusion coefficient.'),
    dt: positive('Time step (implicit).'),
    steps: s.integer(1, MAX_STEPS, { description: 'Time steps.' }),
    boundary: s.enum(['periodic', 'dirichlet'], { default: 'periodic' }),
    initial: s.enum(['modes', 'gaussian'], { default: 'modes' }),
    modes: s.array(s.array(s.number(), {
      minItems: 4, maxItems: 4, itemsText: 'numbers',
      refine(t, field) {
        const [kx, ky, kz] = t as number[];
        if (![kx, ky, kz].every((k) => Number.isSafeInteger(k) && k! >= 1)) {
          throw invalid(field, `${field} needs integer wave numbers kx, ky, kz >= 1 ([kx, ky, kz, amplitude])`);
        }
        return t;
      },
    }), {
      minItems: 1, maxItems: MAX_MODES, itemsText: 'lists of 4 numbers', docDefault: [[1, 1, 1, 1.0]],
      description: 'With initial "modes": [[kx, ky, kz, amplitude], ...].',
    }),
    source: s.enum(['none', 'gaussian'], { default: 'none', description: 'A constant source s in (I - ν dt Δ) u⁺ = u + dt s; gaussian: the initial gaussian.' }),
    max_rank: s.integer(1, MAX_RANK, { description: 'Rank cap of the QTT field.' }),
    tol: s.number({ exclusiveMinimum: 0, exclusiveMaximum: 1, description: 'Rounding tolerance.' }),
    ...common,
  }, ['nu', 'dt', 'steps'], {
    title: 'helmholtz_3d params',
    refine(p, field) {
      if (p.initial === 'modes') p.modes ??= [[1, 1, 1, 1.0]];
      else if (p.modes !== undefined) throw invalid(`${field}.modes`, `${field}.modes applies only to initial "modes"`);
      return p;
    },
  }),
};

export const submitBody = s.object({
  solver: s.enum(SOLVERS, {
    invalid: (v, field, generic) => (v === undefined || v === null ? generic
      : new ProblemError(400, 'unknown_solver', `unknown solver ${JSON.stringify(v)}; solvers: ${SOLVERS.join(', ')}`,
        { field, solvers: [...SOLVERS] })),
  }),
  namespace,
  params: s.json({ description: 'Solver params; n_bits for every solver (see the variants).' }),
  output_key_prefix: key(`Prefix of the output keys (default: the solver name); at most ${MAX_PREFIX_BYTES} bytes.`),
}, {
  required: ['solver', 'params'],
  title: 'SubmitRequest',
  oneOf: SOLVERS.map((solver) => ({
    title: solver,
    schema: s.object({ solver: s.enum([solver]), params: SOLVER_PARAMS[solver] }, { additionalProperties: true, required: ['solver', 'params'] }),
  })),
});

export const listQuery = {
  namespace: s.string({ pattern: NAMESPACE_RE, description: 'Only jobs writing to this namespace.' }),
  status: s.enum(JOB_STATUSES),
  limit: s.integer(1, LIST_MAX_LIMIT, { default: LIST_DEFAULT_LIMIT }),
};

const progress = s.object({ steps_completed: s.integer(0, Number.MAX_SAFE_INTEGER), steps_total: s.integer(0, Number.MAX_SAFE_INTEGER), elapsed_s: s.number() });
export const jobResponse = s.object({
  job_id: s.string(), status: s.enum(JOB_STATUSES), solver: s.enum(SOLVERS), namespace: s.string(), output_key_prefix: s.string(),
  params: s.json(), progress, created_at: s.number(), started_at: s.number(), finished_at: s.number(),
  outputs: s.array(s.string(), { description: 'Output keys (completed jobs).' }),
  stats: s.json({ description: 'Scalar facts of the run (completed jobs).' }),
  error: s.json({ description: 'A problem object (failed jobs).' }),
}, { title: 'Job' });

const SIMULATION = 'simulation';

export const SIMULATION_ENDPOINTS = {
  simulation_submit: {
    id: 'simulation_submit', method: 'post', path: '/v1/simulation/submit', tag: SIMULATION, auth: 'tenant', cu: 5,
    summary: 'Queue a simulation job; its output fields are stored as entries',
    body: { json: submitBody, required: true },
    answers: {
      202: {
        description: 'Queued.',
        headers: { Location: 'The status URL of the job.' },
        schema: s.object({
          job_id: s.string(), solver: s.enum(SOLVERS), status: s.enum(JOB_STATUSES), namespace: s.string(),
          output_key_prefix: s.string(), params: s.json(), created_at: s.number(),
        }),
      },
    },
    problems: [400, 402, 403, 415, 503],
  },
  simulation_status: {
    id: 'simulation_status', method: 'get', path: '/v1/simulation/status/{job_id}', tag: SIMULATION, auth: 'tenant', cu: 0.1,
    summary: 'A job of the tenant, with live progress',
    pathParams: { job_id: s.string({ description: 'As submit returned it.' }) },
    answers: { 200: { description: 'The job.', schema: jobResponse } },
    problems: [402, 404],
  },
  simulation_list: {
    id: 'simulation_list', method: 'get', path: '/v1/simulation/list', tag: SIMULATION, auth: 'tenant', cu: 0.1,
    summary: 'The tenant\'s jobs, newest first',
    query: listQuery,
    answers: { 200: { description: 'Jobs.', schema: s.object({ jobs: s.array(jobResponse), count: s.integer(0, LIST_MAX_LIMIT) }) } },
    problems: [400, 402, 403],
  },
} satisfies Record<string, Endpoint>;
