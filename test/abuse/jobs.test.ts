// The adversarial suite, simulation jobs (CONTRACT.md section 8, "Simulation jobs"): a tenant's
// endless job shares the solver in turns and pays for its run time, a t_end that would run for years
// is refused at submission, and a tenant flooding the queue is held to its cap; meanwhile another
// tenant's small requests stay fast and the server's memory stays put.
import { expect } from 'chai';
import { http, type TestServer } from '../helpers/server.js';
import { tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';
import { startSimServer } from '../simulation/helpers.js';
import { booksOf, tenant, underAttack, VICTIM_WORST_MS } from './harness.js';
import { ended, jobsOf, shortJobOf, SHORT, simulationCu } from './jobs-client.js';

const QUANTUM_S = 1;
/** Section 8's attack: navier_stokes_2d for 1e6 steps on a small grid (512², a few hours of steps). */
const ENDLESS = { solver: 'navier_stokes_2d', params: { n_bits: 9, reynolds: 100, steps: 1_000_000, dt: 0.001 } };
const MiB = 1 << 20;

describe('abuse: simulation jobs', function () {
  this.timeout(90000);
  let server: TestServer;
  let victim: CreatedTenant;

  before(async () => {
    server = await startSimServer({ env: { SVC_GATE_JOB_QUANTUM_S: String(QUANTUM_S) } });
    victim = await tenant(server);
    // The one-off set-up of navier_stokes_2d at 512² (its projection kernel, built once per process)
    // is paid here, not inside the timed attacks.
    const warm = jobsOf(server, await tenant(server));
    const w = await warm.submit({ ...ENDLESS, params: { ...ENDLESS.params, steps: 1 } });
    await warm.until(w.body.job_id, ended, 60000, 'the warm-up job');
  });
  after(async () => {
    await server.destroy();
  });

  /** The attacker and another tenant with a job to run, each with its view of its jobs. */
  const twoTenants = async () => {
    const attacker = await tenant(server);
    const other = await tenant(server);
    return { attacker, other, a: jobsOf(server, attacker), b: jobsOf(server, other) };
  };

  it("an endless navier_stokes_2d job takes turns: another tenant's job starts within about one quantum, the long one runs on paying for its run time, and is cancelled", async () => {
    const { attacker, other, a, b } = await twoTenants();
    const out = await underAttack(server, victim, async () => {
      const t0 = performance.now();
      const sub = await a.submit(ENDLESS);
      const submitMs = performance.now() - t0;
      const id = sub.body.job_id as string;
      const first = await a.until(id, (j) => j.status === 'running' && j.progress.steps_completed > 0, 20000, 'the long job to run');
      const short = await shortJobOf(b);
      const resumed = await a.until(
        id,
        (j) => j.status === 'running' && j.progress.steps_completed > first.progress.steps_completed,
        10000,
        'the long job to run on',
      );
      // Past 10 s of run time, a second period of run time has been charged.
      await a.until(id, (j) => j.progress.elapsed_s > 10.5, 20000, 'ten seconds of run time');
      const t1 = Date.now();
      expect((await a.cancel(id)).status).to.equal(200);
      const last = await a.until(id, ended, 5000, 'the cancel to take effect');
      return { sub, submitMs, startWaitS: short.startWaitS, shortDone: short.done, resumed, last, cancelMs: Date.now() - t1 };
    });
    const r = out.result;
    console.log(
      `      submit ${r.submitMs.toFixed(0)} ms; other tenant's job started after ${r.startWaitS.toFixed(2)} s; cancel ${r.cancelMs} ms;` +
        ` victim worst ${out.victim.worstMs.toFixed(0)} ms over ${out.victim.requests} requests; memory +${(out.memory.growthBytes / MiB).toFixed(0)} MiB`,
    );
    expect(r.sub.status).to.equal(202);
    expect(r.submitMs).to.be.below(1000);
    expect(r.startWaitS, "the other tenant's job started within about one quantum").to.be.below(QUANTUM_S + 2);
    expect(r.shortDone.status).to.equal('completed');
    expect(r.resumed.progress.steps_completed).to.be.above(0);
    expect(r.last.status).to.equal('failed');
    expect(r.last.error).to.include({ code: 'cancelled' });
    expect(r.cancelMs).to.be.below(5000);
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.worstMs).to.be.below(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.below(512 * MiB);
    // The long job paid 5 CU, then 1 CU before each started 10 s of run time (status calls 0.1 each).
    const runCu = (await simulationCu(server, attacker)) - 5 - a.metered * 0.1;
    expect(runCu).to.be.closeTo(Math.round(runCu), 1e-6);
    expect(Math.round(runCu)).to.equal(Math.floor(r.last.progress.elapsed_s / 10) + 1);
    expect(Math.round(runCu)).to.be.at.least(2);
    expect((await booksOf(server, attacker)).keys.default, 'a cancelled job without snapshots stores nothing').to.equal(0);
    expect((await booksOf(server, other)).keys.default, "the other tenant's job stored its fields").to.equal(2);
  });

  it('euler_2d with t_end 1e6 is refused at submission: 400 naming params.t_end, at once, no CU, no job', async () => {
    const attacker = await tenant(server);
    const before = await booksOf(server, attacker);
    const out = await underAttack(server, victim, () =>
      jobsOf(server, attacker).submit({ solver: 'euler_2d', params: { n_bits: 9, t_end: 1e6 } }),
    );
    expect(out.result.status).to.equal(400);
    expect(out.result.body).to.include({ code: 'invalid_request', field: 'params.t_end' });
    expect(out.answerMs).to.be.below(500);
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.worstMs).to.be.below(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.below(128 * MiB);
    expect(await booksOf(server, attacker)).to.deep.equal(before);
    expect(await simulationCu(server, attacker)).to.equal(0);
    const list = await http(server.url, 'GET', '/v1/simulation/list', { headers: tenantHeaders(attacker) });
    expect(list.body.count).to.equal(0);
  });

  it("a tenant flooding the queue is held to 16 queued jobs (429 too_many_jobs, no CU), and another tenant's job still starts within about one quantum", async () => {
    const { attacker, a, b } = await twoTenants();
    const out = await underAttack(server, victim, async () => {
      const first = (await a.submit(ENDLESS)).body.job_id as string;
      await a.until(first, (j) => j.status === 'running', 20000, 'the first job to run');
      const statuses: number[] = [];
      const ids: string[] = [first];
      for (let i = 0; i < 20; i++) {
        const r = await a.submit(SHORT);
        statuses.push(r.status);
        if (r.status === 202) ids.push(r.body.job_id);
        else expect(r.body).to.include({ code: 'too_many_jobs' });
      }
      const cuAfterFlood = await simulationCu(server, attacker);
      const meteredAtFlood = a.metered;
      const short = await shortJobOf(b);
      for (const id of ids) await a.cancel(id);
      return { statuses, cuAfterFlood, meteredAtFlood, startWaitS: short.startWaitS, shortDone: short.done };
    });
    const r = out.result;
    expect(r.statuses.filter((s) => s === 202)).to.have.length(16);
    expect(r.statuses.filter((s) => s === 429)).to.have.length(4);
    // 17 accepted jobs at 5 CU each, the running one's run time (1 CU a started 10 s), status calls 0.1 each
    const runCu = r.cuAfterFlood - 17 * 5 - r.meteredAtFlood * 0.1;
    expect(runCu).to.be.closeTo(Math.round(runCu), 1e-6);
    expect(Math.round(runCu)).to.be.within(1, 2);
    expect(r.startWaitS).to.be.below(QUANTUM_S + 2);
    expect(r.shortDone.status).to.equal('completed');
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.worstMs).to.be.below(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.below(512 * MiB);
  });
});
