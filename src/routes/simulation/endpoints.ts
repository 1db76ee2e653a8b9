// The simulation endpoints (CONTRACT.md sections 6 and 8) and their schemas: one params object per
// solver, built from the engine's param tables (the ranges and defaults the solvers check), so the
// document lists every solver's params and the validator fills them in from the same description.
import { NAMESPACE_RE } from '../../entries/identifiers.js';
import { JOB_LIST_DEFAULT_LIMIT, JOB_LIST_MAX_LIMIT, MAX_PREFIX_BYTES } from '../../limits/input.js';
import { badRequest, ProblemError, quoteValue } from '../../http/errors.js';
import { JOB_STATUSES } from '../../jobs/job.js';
import { MAX_SECONDS, paramTable, type SimParamSpec } from '../../jobs/params.js';
import { s, type ObjectSchema, type Schema } from '../../http/schema/types.js';
import { validate } from '../../http/schema/validate.js';
import type { Endpoint } from '../../http/endpoint.js';
import { key, namespace } from '../fields.js';

export const SOLVERS = ['poisson_2d', 'navier_stokes_2d', 'euler_2d', 'helmholtz_3d'] as const;
export type Solver = (typeof SOLVERS)[number];

const invalid = (field: string, detail: string): ProblemError => badRequest(detail, { field });

/** n_bits out of the solver's range (its table's): grid_too_small below, grid_too_large above (own codes). */
function nBits(solver: Solver, min: number, max: number, description: string): Schema {
  return s.integer(min, max, {
    description,
    invalid(v, field, generic) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return generic;
      const small = v < min;
      return new ProblemError(
        400,
        small ? 'grid_too_small' : 'grid_too_large',
        small
          ? `${field} = ${v} gives a grid below ${2 ** min} points per axis; ${solver} needs n_bits >= ${min}`
          : `${field} = ${v} is above the largest grid of ${solver} (n_bits <= ${max}, ${2 ** max} points per axis)`,
        { field, min_n_bits: min, max_n_bits: max },
      );
    },
  });
}

/** A param of the engine's table as a schema: the same type, range and default the solver checks. */
function paramSchema(solver: Solver, p: SimParamSpec): Schema {
  const description = p.description;
  switch (p.type) {
    case 'integer':
      if (p.name === 'n_bits') return nBits(solver, p.minimum, p.maximum, description);
      return s.integer(p.minimum, p.maximum, { description, ...(p.default !== undefined ? { default: p.default } : {}) });
    case 'number':
      return s.number({
        description,
        ...(p.exclusiveMinimum ? { exclusiveMinimum: p.minimum } : { minimum: p.minimum }),
        ...(p.exclusiveMaximum ? { exclusiveMaximum: p.maximum } : { maximum: p.maximum }),
        ...(p.default !== undefined ? { default: p.default } : {}),
      });
    case 'choice':
      return s.enum(p.choices, { description, default: p.default });
    case 'list':
      // helmholtz_3d `modes`, the one list param: [[kx, ky, kz, amplitude], ...] (the engine checks the numbers).
      return s.array(s.array(s.number(), { minItems: 4, maxItems: 4, itemsText: 'numbers' }), {
        minItems: 1,
        maxItems: p.maxItems,
        itemsText: 'lists of 4 numbers',
        docDefault: [[1, 1, 1, 1.0]],
        description,
      });
  }
}

/** The job system's own param, beside the solver's. */
const maxSeconds = s.integer(MAX_SECONDS.minimum, MAX_SECONDS.maximum, {
  default: MAX_SECONDS.default,
  description:
    'Run-time budget in seconds (time running, not queued or paused); past it the job fails with code time_limit, keeping its snapshots.',
});

/** Rules between params that a schema cannot state, beside the engine's own checks at submission. */
const REFINE: Partial<Record<Solver, Partial<ObjectSchema>>> = {
  euler_2d: {
    refine(p, field) {
      const tEnd = p.t_end !== undefined;
      const steps = p.steps !== undefined;
      if (tEnd && steps) throw invalid(`${field}.steps`, `give ${field}.t_end or ${field}.steps, not both`);
      if (!tEnd && !steps) throw invalid(`${field}.t_end`, `${field}.t_end (a number > 0) or ${field}.steps (an integer >= 1) is required`);
      return p;
    },
  },
  helmholtz_3d: {
    refine(p, field) {
      if (p.initial === 'modes') p.modes ??= [[1, 1, 1, 1.0]];
      else if (p.modes !== undefined) throw invalid(`${field}.modes`, `${field}.modes applies only to initial "modes"`);
      return p;
    },
  },
};

function solverSchema(solver: Solver): ObjectSchema {
  const table = paramTable(solver);
  const properties: Record<string, Schema> = {};
  for (const p of table) properties[p.name] = paramSchema(solver, p);
  properties[MAX_SECONDS.name] = maxSeconds;
  return s.object(properties, {
    required: table.filter((p) => p.required).map((p) => p.name),
    title: `${solver} params`,
    ...REFINE[solver],
  });
}

/** Each solver's params schema, built from the engine's table (so the edge and the solver agree). */
export const SOLVER_PARAMS: Readonly<Record<Solver, ObjectSchema>> = Object.fromEntries(
  SOLVERS.map((solver) => [solver, solverSchema(solver)]),
) as Record<Solver, ObjectSchema>;

/** Largest n_bits per solver (CONTRACT.md section 6; SPEC.md's grid sizes), from the same tables. */
export const MAX_N_BITS: Readonly<Record<Solver, number>> = Object.fromEntries(
  SOLVERS.map((solver) => {
    const n = SOLVER_PARAMS[solver].properties.n_bits as { maximum: number };
    return [solver, n.maximum];
  }),
) as Record<Solver, number>;

/**
 * A submit's rules beyond its fields, as the schema's hook: its params checked against the solver's
 * own schema (defaults filled in), and the output prefix's length in bytes.
 */
function submitRules(b: Record<string, unknown>): Record<string, unknown> {
  const solver = b.solver as Solver;
  const params = validate(SOLVER_PARAMS[solver], b.params, 'params', true);
  const bytes = Buffer.byteLength((b.output_key_prefix as string | undefined) ?? solver, 'utf8');
  if (bytes > MAX_PREFIX_BYTES) {
    throw badRequest(`output_key_prefix is ${bytes} bytes of UTF-8; at most ${MAX_PREFIX_BYTES} are allowed`, {
      field: 'output_key_prefix',
    });
  }
  return { ...b, params };
}

export const submitBody = s.object(
  {
    solver: s.enum(SOLVERS, {
      invalid: (v, field, generic) =>
        v === undefined || v === null
          ? generic
          : new ProblemError(400, 'unknown_solver', `unknown solver ${quoteValue(v)}; solvers: ${SOLVERS.join(', ')}`, {
              field,
              solvers: [...SOLVERS],
            }),
    }),
    namespace,
    params: s.json({ description: 'Solver params; n_bits for every solver (see the variants).' }),
    output_key_prefix: key(`Prefix of the output keys (default: the solver name); at most ${MAX_PREFIX_BYTES} bytes.`),
  },
  {
    required: ['solver', 'params'],
    refine: submitRules,
    title: 'SubmitRequest',
    oneOf: SOLVERS.map((solver) => ({
      title: solver,
      schema: s.object(
        { solver: s.enum([solver]), params: SOLVER_PARAMS[solver] },
        { additionalProperties: true, required: ['solver', 'params'] },
      ),
    })),
  },
);

export const listQuery = {
  namespace: s.string({ pattern: NAMESPACE_RE, description: 'Only jobs writing to this namespace.' }),
  status: s.enum(JOB_STATUSES),
  limit: s.integer(1, JOB_LIST_MAX_LIMIT, { default: JOB_LIST_DEFAULT_LIMIT }),
};

const progress = s.object({
  steps_completed: s.integer(0, Number.MAX_SAFE_INTEGER),
  steps_total: s.integer(0, Number.MAX_SAFE_INTEGER),
  elapsed_s: s.number(),
});
export const jobResponse = s.object(
  {
    job_id: s.string(),
    status: s.enum(JOB_STATUSES),
    solver: s.enum(SOLVERS),
    namespace: s.string(),
    output_key_prefix: s.string(),
    params: s.json(),
    progress,
    created_at: s.number(),
    started_at: s.number(),
    finished_at: s.number(),
    outputs: s.array(s.string(), { description: 'Output keys (completed jobs; a failed job that kept snapshots lists them).' }),
    stats: s.json({ description: 'Scalar facts of the run (completed jobs).' }),
    error: s.json({ description: 'A problem object (failed jobs).' }),
  },
  { title: 'Job' },
);

const SIMULATION = 'simulation';

export const SIMULATION_ENDPOINTS = {
  simulation_submit: {
    id: 'simulation_submit',
    method: 'post',
    path: '/v1/simulation/submit',
    tag: SIMULATION,
    auth: 'tenant',
    operations: ['simulation_submit'],
    summary: 'Queue a simulation job; its output fields are stored as entries',
    description:
      'Every param is checked here, as the solver checks it (a job never fails for a param this accepted). ' +
      "Jobs run in fair turns across tenants: a job that has run for SVC_GATE_JOB_QUANTUM_S while another tenant's job " +
      'waits goes back to `queued` with its progress kept and resumes in its next turn. A job costs 5 CU here plus 1 CU ' +
      'for each started 10 s of run time, charged as it runs (it fails with quota_exceeded when the monthly quota runs out). ' +
      'A tenant holds at most SVC_GATE_JOBS_QUEUED_PER_TENANT queued jobs (429 too_many_jobs).',
    body: { json: submitBody, limit: 'small', required: true },
    answers: {
      202: {
        description: 'Queued.',
        headers: { Location: 'The status URL of the job.' },
        schema: s.object({
          job_id: s.string(),
          solver: s.enum(SOLVERS),
          status: s.enum(JOB_STATUSES),
          namespace: s.string(),
          output_key_prefix: s.string(),
          params: s.json(),
          created_at: s.number(),
        }),
      },
    },
    problems: [400, 402, 403, 415, 429, 503],
  },
  simulation_status: {
    id: 'simulation_status',
    method: 'get',
    path: '/v1/simulation/status/{job_id}',
    tag: SIMULATION,
    auth: 'tenant',
    operations: ['simulation_status'],
    summary: 'A job of the tenant, with live progress',
    pathParams: { job_id: s.string({ description: 'As submit returned it.' }) },
    answers: { 200: { description: 'The job.', schema: jobResponse } },
    problems: [402, 404],
  },
  simulation_cancel: {
    id: 'simulation_cancel',
    method: 'post',
    path: '/v1/simulation/cancel/{job_id}',
    tag: SIMULATION,
    auth: 'tenant',
    operations: ['simulation_cancel'],
    summary: 'Cancel a job of the tenant',
    description:
      'A queued job fails at once; a running or paused one within 5 s. Either ends `failed` with error code ' +
      '`cancelled`, keeping the snapshots it stored (listed in `outputs`). A job already completed or failed: 409 job_finished.',
    pathParams: { job_id: s.string({ description: 'As submit returned it.' }) },
    answers: { 200: { description: 'The job, as status shows it after the cancel.', schema: jobResponse } },
    problems: [402, 404, 409],
  },
  simulation_list: {
    id: 'simulation_list',
    method: 'get',
    path: '/v1/simulation/list',
    tag: SIMULATION,
    auth: 'tenant',
    operations: ['simulation_list'],
    summary: "The tenant's jobs, newest first",
    query: listQuery,
    answers: { 200: { description: 'Jobs.', schema: s.object({ jobs: s.array(jobResponse), count: s.integer(0, JOB_LIST_MAX_LIMIT) }) } },
    problems: [400, 402, 403],
  },
} satisfies Record<string, Endpoint>;
