// Validation of simulation requests at the edge (CONTRACT.md sections 4 and 6), from the schemas of
// src/api/simulation.ts: the untrusted body becomes the job's parameters with the contract's defaults
// filled in, or a 400 problem naming the offending field (`field: "params.<name>"`).
import { badRequest } from '../../http/errors.js';
import type { JobParams, JobStatus } from '../../jobs/job.js';
import { parseBody, parseParams, validate, type QueryInput } from '../../http/schema/validate.js';
import { listQuery, MAX_PREFIX_BYTES, SOLVER_PARAMS, submitBody, type Solver } from './endpoints.js';

export { MAX_N_BITS, MAX_PREFIX_BYTES, MIN_N_BITS, SOLVERS, SOLVER_PARAMS, type Solver } from './endpoints.js';

export interface SubmitRequest {
  solver: Solver;
  namespace: string;
  outputKeyPrefix: string;
  params: JobParams;
}

/** POST /v1/simulation/submit body -> a validated request (400 naming the field otherwise). */
export function parseSubmit(body: unknown): SubmitRequest {
  const b = parseBody<{ solver: Solver; namespace: string; params: Record<string, unknown>; output_key_prefix?: string }>(submitBody, body);
  const params = validate(SOLVER_PARAMS[b.solver], b.params, 'params', true) as JobParams;
  const prefix = b.output_key_prefix ?? b.solver;
  const bytes = Buffer.byteLength(prefix, 'utf8');
  if (bytes > MAX_PREFIX_BYTES) {
    throw badRequest(`output_key_prefix is ${bytes} bytes of UTF-8; at most ${MAX_PREFIX_BYTES} are allowed`, { field: 'output_key_prefix' });
  }
  return { solver: b.solver, namespace: b.namespace, outputKeyPrefix: prefix, params };
}

export interface ListQuery {
  namespace?: string;
  status?: JobStatus;
  limit: number;
}

/** GET /v1/simulation/list query: namespace, status, limit (1..1000, default 50). */
export function parseListQuery(query: QueryInput): ListQuery {
  return parseParams<ListQuery>(listQuery, query);
}

