// Every way a simulation request is refused, over HTTP against a real server: problem+json 400s that
// name the field, the order of checks (validate before ACL), ACL 403 before any work, 404 for unknown
// and foreign jobs, 501 for a solver this build lacks. Refused requests queue nothing and cost nothing.
import { expect } from 'chai';
import { engine } from '../../src/engine/index.js';
import { SOLVERS } from '../../src/routes/simulation/endpoints.js';
import type { TestServer } from '../helpers/server.js';
import { admin } from '../helpers/tenants.js';
import { startSimServer, submit, tenantClient, waitCompleted, type Client } from './helpers.js';

describe('simulation: refused requests', () => {
  let server: TestServer;
  let a: Client;
  let b: Client;
  let jobOfA: string;

  before(async () => {
    server = await startSimServer();
    a = await tenantClient(server, ['default', 'sims']);
    b = await tenantClient(server, ['default']);
    jobOfA = (await submit(a, { solver: 'poisson_2d', params: { n_bits: 9 } })).job_id;
  });
  after(async () => {
    await server.destroy();
  });

  const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number, code: string, field?: string) => {
    expect(r.status, JSON.stringify(r.body)).to.equal(status);
    expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(r.body).to.include({ status, code, type: `/problems/${code}` });
    expect(r.body.title).to.be.a('string');
    if (field !== undefined) {
      expect(r.body.field).to.equal(field);
      expect(r.body.detail).to.contain(field);
    }
  };

  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['n_bits below 9', { solver: 'poisson_2d', params: { n_bits: 8 } }, 'grid_too_small', 'params.n_bits'],
    ['n_bits above poisson_2d largest', { solver: 'poisson_2d', params: { n_bits: 15 } }, 'grid_too_large', 'params.n_bits'],
    ['n_bits above euler_2d largest', { solver: 'euler_2d', params: { n_bits: 14, steps: 1 } }, 'grid_too_large', 'params.n_bits'],
    [
      'n_bits above navier_stokes_2d largest',
      { solver: 'navier_stokes_2d', params: { n_bits: 13, reynolds: 1, steps: 1, dt: 0.1 } },
      'grid_too_large',
      'params.n_bits',
    ],
    ['an unknown solver', { solver: 'wave_1d', params: { n_bits: 9 } }, 'unknown_solver', 'solver'],
    ['no params', { solver: 'poisson_2d' }, 'invalid_request', 'params'],
    ['a missing n_bits', { solver: 'poisson_2d', params: {} }, 'invalid_request', 'params.n_bits'],
    ['a bad param value', { solver: 'poisson_2d', params: { n_bits: 9, tol: 2 } }, 'invalid_request', 'params.tol'],
    ['an unknown param', { solver: 'poisson_2d', params: { n_bits: 9, iterations: 5 } }, 'invalid_request', 'params.iterations'],
    [
      'a missing required param',
      { solver: 'navier_stokes_2d', params: { n_bits: 9, steps: 1, dt: 0.1 } },
      'invalid_request',
      'params.reynolds',
    ],
    [
      'a bad output_key_prefix',
      { solver: 'poisson_2d', params: { n_bits: 9 }, output_key_prefix: 'a\u0001b' },
      'invalid_request',
      'output_key_prefix',
    ],
    ['a bad namespace', { solver: 'poisson_2d', params: { n_bits: 9 }, namespace: '../x' }, 'invalid_request', 'namespace'],
  ];
  for (const [what, body, code, field] of cases) {
    it(`answers ${what} with 400 ${code} naming ${field}`, async () => {
      expectProblem(await a.call('POST', '/v1/simulation/submit', { json: body }), 400, code, field);
    });
  }

  it('answers malformed JSON with 400 and a non-JSON body with 415', async () => {
    expectProblem(
      await a.call('POST', '/v1/simulation/submit', { body: '{"solver":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_request',
    );
    expectProblem(
      await a.call('POST', '/v1/simulation/submit', { body: 'solver=poisson_2d', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });

  it('answers a namespace outside the ACL with 403 before any work, after validation', async () => {
    const before = (await a.call('GET', '/v1/simulation/list')).body.count;
    const r = await b.call('POST', '/v1/simulation/submit', { json: { solver: 'poisson_2d', namespace: 'sims', params: { n_bits: 9 } } });
    expectProblem(r, 403, 'namespace_forbidden');
    expect((await b.call('GET', '/v1/simulation/list')).body).to.deep.equal({ jobs: [], count: 0 });
    // an invalid request to a forbidden namespace is a 400: validation comes first
    expectProblem(
      await b.call('POST', '/v1/simulation/submit', { json: { solver: 'poisson_2d', namespace: 'sims', params: { n_bits: 8 } } }),
      400,
      'grid_too_small',
      'params.n_bits',
    );
    expectProblem(await b.call('GET', '/v1/simulation/list?namespace=sims'), 403, 'namespace_forbidden');
    expect((await a.call('GET', '/v1/simulation/list')).body.count).to.equal(before);
  });

  it("answers an unknown job id and another tenant's job id with 404, and lists only the tenant's own jobs", async () => {
    expectProblem(await a.call('GET', '/v1/simulation/status/job_doesnotexist0000'), 404, 'not_found');
    expectProblem(await a.call('GET', `/v1/simulation/status/${'x'.repeat(300)}`), 404, 'not_found');
    expectProblem(await b.call('GET', `/v1/simulation/status/${jobOfA}`), 404, 'not_found');
    expect((await a.call('GET', `/v1/simulation/status/${jobOfA}`)).status).to.equal(200);
    const listB = await b.call('GET', '/v1/simulation/list');
    expect(listB.body.jobs.map((j: { job_id: string }) => j.job_id)).to.not.include(jobOfA);
  });

  it('answers bad list parameters with 400 naming them', async () => {
    expectProblem(await a.call('GET', '/v1/simulation/list?limit=0'), 400, 'invalid_request', 'limit');
    expectProblem(await a.call('GET', '/v1/simulation/list?limit=1001'), 400, 'invalid_request', 'limit');
    expectProblem(await a.call('GET', '/v1/simulation/list?status=finished'), 400, 'invalid_request', 'status');
    expect((await a.call('GET', '/v1/simulation/list?limit=1000')).status).to.equal(200);
  });

  it('needs a tenant key, and answers wrong methods with 405', async () => {
    const r = await fetch(`${server.url}/v1/simulation/list`);
    expect(r.status).to.equal(401);
    const m = await a.call('DELETE', `/v1/simulation/status/${jobOfA}`);
    expect(m.status).to.equal(405);
  });

  it('answers a solver of SPEC.md that this engine build lacks with 501 solver_unavailable', async function () {
    const offered = engine.solvers();
    const missing = SOLVERS.find((s) => !offered.includes(s));
    if (!missing) this.skip();
    const params: Record<string, Record<string, unknown>> = {
      poisson_2d: { n_bits: 9 },
      navier_stokes_2d: { n_bits: 9, reynolds: 100, steps: 1, dt: 0.003 },
      euler_2d: { n_bits: 9, steps: 1 },
      helmholtz_3d: { n_bits: 9, nu: 0.1, dt: 0.01, steps: 1 },
    };
    const r = await a.call('POST', '/v1/simulation/submit', { json: { solver: missing, params: params[missing!] } });
    expectProblem(r, 501, 'solver_unavailable');
    expect(r.body.available_solvers).to.deep.equal(offered);
  });

  it('charges CU only for 2xx simulation requests', async () => {
    const c = await tenantClient(server, ['default']);
    const usage = async () => (await admin(server, 'GET', `/gate/admin/usage/${c.tenantId}`)).body.breakdown.simulation as number;
    expect(await usage()).to.equal(0);
    await c.call('POST', '/v1/simulation/submit', { json: { solver: 'poisson_2d', params: { n_bits: 8 } } });
    await c.call('POST', '/v1/simulation/submit', { json: { solver: 'poisson_2d', namespace: 'sims', params: { n_bits: 9 } } });
    await c.call('GET', `/v1/simulation/status/${jobOfA}`);
    expect(await usage()).to.equal(0);
    const job = await submit(c, { solver: 'poisson_2d', params: { n_bits: 9 } });
    await waitCompleted(c, job.job_id);
    // 5 CU at submission, 1 CU for the first started 10 s of run time, 0.1 for each status poll.
    const before = await usage();
    const polls = Math.round((before - 6.0) * 10);
    expect(polls).to.be.at.least(1);
    expect(before).to.be.closeTo(6.0 + polls / 10, 1e-9);
    expect((await c.call('GET', `/v1/simulation/status/${job.job_id}`)).status).to.equal(200);
    expect((await c.call('GET', '/v1/simulation/list')).status).to.equal(200);
    expect(await usage()).to.be.closeTo(before + 0.2, 1e-9);
  });
});
