// Shared pieces of the simulation HTTP tests: a real server with rate limits out of the way, and
// small clients for submit / status / list that poll a job to the state a test waits for.
import type { StartOptions, TestServer } from '../helpers/server.js';
import { startStorageServer, type Client } from '../storage/helpers.js';

export { clientFor, tenantClient, type Client } from '../storage/helpers.js';

export async function startSimServer(opts: StartOptions = {}): Promise<TestServer> {
  return startStorageServer({ timeoutMs: 60000, ...opts });
}

export interface JobStatusBody {
  job_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  solver: string;
  namespace: string;
  output_key_prefix: string;
  params: Record<string, unknown>;
  progress: { steps_completed: number; steps_total: number; elapsed_s: number };
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  outputs?: string[];
  stats?: Record<string, number>;
  error?: { type: string; title: string; status: number; detail: string; code: string };
}

/** POST /v1/simulation/submit; throws unless 202. */
export async function submit(c: Client, body: Record<string, unknown>): Promise<JobStatusBody> {
  const r = await c.call('POST', '/v1/simulation/submit', { json: body });
  if (r.status !== 202) throw new Error(`submit: ${r.status} ${r.text}`);
  return r.body as JobStatusBody;
}

export async function jobStatus(c: Client, jobId: string): Promise<JobStatusBody> {
  const r = await c.call('GET', `/v1/simulation/status/${encodeURIComponent(jobId)}`);
  if (r.status !== 200) throw new Error(`status ${jobId}: ${r.status} ${r.text}`);
  return r.body as JobStatusBody;
}

/** Poll the job every `everyMs` until `done(status)` holds; returns that status. */
export async function waitFor(
  c: Client,
  jobId: string,
  done: (s: JobStatusBody) => boolean,
  opts: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<JobStatusBody> {
  const t0 = Date.now();
  let last: JobStatusBody | undefined;
  for (;;) {
    last = await jobStatus(c, jobId);
    if (done(last)) return last;
    if (Date.now() - t0 > (opts.timeoutMs ?? 120000)) {
      throw new Error(`timed out waiting for ${opts.what ?? 'the job'}; last status ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 50));
  }
}

export const finished = (s: JobStatusBody): boolean => s.status === 'completed' || s.status === 'failed';

/** Wait for completed (throws with the job's error when it failed). */
export async function waitCompleted(c: Client, jobId: string, timeoutMs = 180000): Promise<JobStatusBody> {
  const s = await waitFor(c, jobId, finished, { timeoutMs, everyMs: 100, what: `job ${jobId} to finish` });
  if (s.status !== 'completed') throw new Error(`job ${jobId} ${s.status}: ${JSON.stringify(s.error)}`);
  return s;
}

/**
 * Params of a poisson_2d run that takes a while: unpreconditioned CG on a source that is not an
 * eigenvector, with a tolerance it cannot reach, so it runs exactly `iters` iterations.
 */
export function slowPoisson(nBits: number, iters: number): Record<string, unknown> {
  return { n_bits: nBits, rhs: 'dipole', preconditioner: 'none', tol: 1e-14, max_iters: iters };
}

/** How many .blob files the server's blob store holds. */
export async function countBlobs(dataDir: string): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  const path = await import('node:path');
  const root = path.join(dataDir, 'blobs');
  let n = 0;
  for (const sub of await readdir(root).catch(() => [] as string[])) {
    n += (await readdir(path.join(root, sub)).catch(() => [] as string[])).filter((f) => f.endsWith('.blob')).length;
  }
  return n;
}
