// The simulation routes (CONTRACT.md sections 6 and 8), each behind the gate's tenantGate: validate
// (the submit schema with its rule hook, then the solver's own checks), authorize (ACL 403 on the output namespace,
// quota 402), then hand the job to the scheduler. Job ids are opaque: an unknown id and another
// tenant's id are the same 404.
import type { Context, Middleware } from 'koa';
import type { Api } from '../../http/endpoint.js';
import { SIMULATION_ENDPOINTS as EP } from './endpoints.js';
import { notFound } from '../../http/errors.js';
import { gateOf } from '../../gate/context.js';
import type { JobView } from '../../jobs/job.js';
import type { JobScheduler } from '../../jobs/scheduler.js';
import { solverUnavailable, type SimRunner } from '../../jobs/runner.js';
import type { JobParams } from '../../jobs/job.js';
import { parseBody, parseParams, type QueryInput } from '../../http/schema/validate.js';
import { listQuery, submitBody, type Solver } from './endpoints.js';

export interface SimulationDeps {
  scheduler: JobScheduler;
  /** Which solvers this build runs (engine.solvers()). */
  runner: Pick<SimRunner, 'solvers'>;
}

const MAX_JOB_ID_LENGTH = 128;

export interface SubmitRequest {
  solver: Solver;
  namespace: string;
  outputKeyPrefix: string;
  params: JobParams;
}

/** POST /v1/simulation/submit body -> a validated request (400 naming the field otherwise). */
export function parseSubmit(body: unknown): SubmitRequest {
  const b = parseBody(submitBody, body);
  return { solver: b.solver, namespace: b.namespace, outputKeyPrefix: b.output_key_prefix ?? b.solver, params: b.params as JobParams };
}

/** GET /v1/simulation/list query: namespace, status, limit (1..1000, default 50). */
export function parseListQuery(query: QueryInput) {
  return parseParams(listQuery, query);
}

export function registerSimulationRoutes(api: Api, deps: SimulationDeps): void {
  api.mount(EP.simulation_submit, submitHandler(deps));
  api.mount(
    EP.simulation_status,
    jobHandler('simulation_status', (t, id) => deps.scheduler.status(t, id)),
  );
  api.mount(
    EP.simulation_cancel,
    jobHandler('simulation_cancel', (t, id) => deps.scheduler.cancel(t, id)),
  );
  api.mount(EP.simulation_list, listHandler(deps));
}

function submitHandler(deps: SimulationDeps): Middleware {
  return async function submit(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const req = parseSubmit(ctx.request.body);
    const available = deps.runner.solvers();
    // The solver's own checks, before anything is charged or stored.
    if (available.includes(req.solver)) deps.scheduler.checkParams(req.solver, req.params);
    await gate.authorize(req.namespace, 'simulation_submit');
    if (!available.includes(req.solver)) throw solverUnavailable(req.solver, available);
    const row = await deps.scheduler.submit({
      tenantId: tenant.tenantId,
      solver: req.solver,
      namespace: req.namespace,
      outputKeyPrefix: req.outputKeyPrefix,
      params: req.params,
    });
    ctx.status = 202;
    ctx.set('Location', `/v1/simulation/status/${encodeURIComponent(row.job_id)}`);
    ctx.body = {
      job_id: row.job_id,
      solver: row.solver,
      status: row.status,
      namespace: row.namespace,
      output_key_prefix: row.output_key_prefix,
      params: req.params,
      created_at: row.created_at,
    };
  };
}

/**
 * A route on one job of the tenant (status, cancel): `act` gives the job's view, or undefined for an
 * unknown id or another tenant's job (the same 404).
 */
function jobHandler(
  op: 'simulation_status' | 'simulation_cancel',
  act: (tenantId: string, jobId: string) => Promise<JobView | undefined>,
): Middleware {
  return async function oneJob(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const jobId = String(ctx.params.job_id ?? '');
    await gate.authorize(null, op);
    const view = jobId.length <= MAX_JOB_ID_LENGTH ? await act(tenant.tenantId, jobId) : undefined;
    if (!view) throw notFound(`no simulation job ${JSON.stringify(jobId)}`);
    ctx.body = view;
  };
}

function listHandler(deps: SimulationDeps): Middleware {
  return async function list(ctx: Context): Promise<void> {
    const { tenant, gate } = gateOf(ctx);
    const q = parseListQuery(ctx.query);
    await gate.authorize(q.namespace ?? null, 'simulation_list');
    const jobs = await deps.scheduler.list(tenant.tenantId, q);
    ctx.body = { jobs, count: jobs.length };
  };
}
