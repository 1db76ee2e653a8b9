// The adversarial suite's view of simulation jobs: a tenant's metered job calls, the simulation CU
// it was charged, and another tenant's short job that measures how long a waiting job waits.
import { http, type TestServer } from '../helpers/server.js';
import { tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

/** Another tenant's short job (a few hundred milliseconds). */
export const SHORT = { solver: 'poisson_2d', params: { n_bits: 9 } };

export interface Job {
  job_id: string;
  status: string;
  started_at: number | null;
  progress: { steps_completed: number; elapsed_s: number };
  error?: { code: string };
}

/** A tenant's view of its jobs, counting the metered calls it makes (0.1 CU each). */
export function jobsOf(server: TestServer, t: CreatedTenant) {
  let metered = 0;
  const call = async (method: string, path: string, json?: unknown) => {
    const r = await http(server.url, method, path, { json, headers: tenantHeaders(t) });
    if (r.status >= 200 && r.status < 300 && !path.endsWith('/submit')) metered++;
    return r;
  };
  const status = async (id: string): Promise<Job> => {
    const r = await call('GET', `/v1/simulation/status/${id}`);
    if (r.status !== 200) throw new Error(`status: ${r.status} ${r.text}`);
    return r.body as Job;
  };
  return {
    get metered() {
      return metered;
    },
    submit: (body: unknown) => call('POST', '/v1/simulation/submit', body),
    cancel: (id: string) => call('POST', `/v1/simulation/cancel/${id}`),
    status,
    async until(id: string, done: (j: Job) => boolean, timeoutMs: number, what: string): Promise<Job> {
      const t0 = Date.now();
      for (;;) {
        const j = await status(id);
        if (done(j)) return j;
        if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(j)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

export const ended = (j: Job) => j.status === 'completed' || j.status === 'failed';

export async function simulationCu(server: TestServer, t: CreatedTenant): Promise<number> {
  const r = await http(server.url, 'GET', `/gate/admin/usage/${t.tenant_id}`, {
    headers: { authorization: `Bearer ${server.serviceKey}` },
  });
  return r.body.breakdown.simulation as number;
}

/** Another tenant's short job: how long after its submission it started, and how it ended. */
export async function shortJobOf(b: ReturnType<typeof jobsOf>): Promise<{ startWaitS: number; done: Job }> {
  const submittedAt = Date.now() / 1000;
  const id = (await b.submit(SHORT)).body.job_id as string;
  const began = await b.until(id, (j) => j.started_at !== null, 10000, "the other tenant's job to start");
  const done = await b.until(id, ended, 20000, "the other tenant's job to end");
  return { startWaitS: began.started_at! - submittedAt, done };
}
