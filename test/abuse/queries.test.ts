// Attacks of issue #19 on the query endpoints (CONTRACT.md section 8, "Engine work ... is admitted per
// tenant in fair turns"): top-Ks over the heaviest trains put_cores allows, as many at once as a
// tenant may send, from one tenant and from two, while another tenant's requests go on. Similarity
// and top-K are engine requests: counted against the tenant's in-flight limit (429, no CU past it),
// scored in chunks of bounded work, each in the tenant's turn, so another tenant's heavy work waits
// at most for one chunk, never for a whole query, and its light work for neither.
import { expect } from 'chai';
import { http, startServer, type Reply, type TestServer } from '../helpers/server.js';
import { tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';
import { booksOf, tenant, underAttack, VICTIM_WORST_MS } from './harness.js';
import { heaviest } from './trains-input.js';

const MiB = 1 << 20;
/** Heavy candidates of each attacker's namespace, beside its query and the query's twin. */
const HEAVY = 5;

describe('abuse: queries over the heaviest legal trains', function () {
  this.timeout(120000);
  let server: TestServer;
  let victim: CreatedTenant;
  let attackers: CreatedTenant[];
  /** One warm top-K alone (HEAVY + 1 chunks, one after another). */
  let wholeQueryMs = 0;

  const post = (t: CreatedTenant, path: string, json: unknown): Promise<Reply> =>
    http(server.url, 'POST', path, { json, headers: tenantHeaders(t) });
  const topk = (t: CreatedTenant) => post(t, '/v1/query/topk', { query_key: 'query', k: 3 });

  before(async () => {
    server = await startServer();
    victim = await tenant(server);
    attackers = [await tenant(server), await tenant(server)];
    // Each attacker stores a query, its twin (the same cores under another key) and HEAVY other
    // trains, every one of them at the work limit: scoring one against the query is one chunk.
    const query = JSON.stringify(heaviest('query', 1));
    for (const a of attackers) {
      for (const body of [
        query,
        query.replace('"key":"query"', '"key":"twin"'),
        ...Array.from({ length: HEAVY }, (_, j) => JSON.stringify(heaviest(`heavy-${j}`, 100 + 50 * j))),
      ]) {
        const r = await http(server.url, 'POST', '/v1/put_cores', {
          body,
          headers: { ...tenantHeaders(a), 'content-type': 'application/json' },
        });
        expect(r.status, r.text).to.equal(200);
      }
      // Loaded into the core cache once, so the attacks below measure the scoring.
      expect((await topk(a)).status).to.equal(200);
    }
    // A whole query alone, warm: what another tenant would wait for if a query took one turn.
    const t0 = performance.now();
    expectRanked(await topk(attackers[0]!));
    wholeQueryMs = performance.now() - t0;
  });
  after(async () => {
    await server?.destroy();
  });

  /** The answer a top-K over the attacker's namespace must give: the twin first, at cosine 1, then two others. */
  function expectRanked(r: Reply): void {
    expect(r.status, r.text).to.equal(200);
    expect(r.body.n_candidates).to.equal(HEAVY + 1);
    const results = r.body.results as Array<[string, number]>;
    expect(results).to.have.length(3);
    expect(results[0]![0]).to.equal('twin');
    expect(results[0]![1]).to.be.closeTo(1, 1e-9);
    expect(results[1]![1]).to.be.at.least(results[2]![1]);
    expect(results[1]![0]).to.match(/^heavy-/);
  }

  it("a tenant's top-Ks over heavy trains, as many as it may send, leave the other tenant in bound; more get 429", async () => {
    const [a] = attackers as [CreatedTenant];
    const before = await booksOf(server, a);
    const out = await underAttack(server, victim, () => Promise.all(Array.from({ length: 6 }, () => topk(a))));
    const statuses = out.result.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([200, 200, 200, 200, 429, 429]);
    for (const r of out.result) {
      if (r.status === 200) expectRanked(r);
      else expect(r.body.code).to.equal('too_many_in_flight');
    }
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.worstMs).to.be.lessThan(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.lessThan(512 * MiB);
    // The four answered cost 1 CU each; the two refused nothing.
    expect((await booksOf(server, a)).cusUsed - before.cusUsed).to.be.closeTo(4, 1e-9);
    console.log(
      `      6 top-Ks at once over ${HEAVY + 1} heavy trains: answered in ${out.answerMs.toFixed(0)} ms, victim worst ` +
        `${out.victim.worstMs.toFixed(0)} ms (median ${out.victim.medianMs.toFixed(0)}), peak memory growth ${(out.memory.growthBytes / MiB).toFixed(0)} MiB`,
    );
  });

  it("two tenants' top-Ks fill every heavy slot, and the other tenant's small requests run beside them", async () => {
    // Each tenant takes one heavy slot (all but one), so together they hold both, each with a chunk
    // as heavy as put_cores allows; the victim's small put and serve are light work, with slots of
    // their own, so they wait for neither chunk.
    const timed = async (a: CreatedTenant) => {
      const t0 = performance.now();
      const r = await topk(a);
      return { r, ms: performance.now() - t0 };
    };
    const out = await underAttack(server, victim, () => Promise.all(attackers.flatMap((a) => [timed(a), timed(a), timed(a)])));
    for (const { r } of out.result) expectRanked(r);
    const fastest = Math.min(...out.result.map((x) => x.ms));
    console.log(
      `      2 tenants x 3 top-Ks over ${HEAVY + 1} heavy trains: answered in ${fastest.toFixed(0)} to ${out.answerMs.toFixed(0)} ms ` +
        `(one alone ${wholeQueryMs.toFixed(0)} ms), victim worst ${out.victim.worstMs.toFixed(0)} ms (median ${out.victim.medianMs.toFixed(0)}), ` +
        `peak memory growth ${(out.memory.growthBytes / MiB).toFixed(0)} MiB`,
    );
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.worstMs).to.be.lessThan(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.lessThan(512 * MiB);
  });

  it('similarity and top-K count against the in-flight limit: past it 429 too_many_in_flight, Retry-After 1, no CU', async () => {
    const [a] = attackers as [CreatedTenant];
    const before = await booksOf(server, a);
    const running = Array.from({ length: 4 }, () => topk(a));
    // The four are scoring (seconds of work in one slot) when the next requests come.
    await new Promise((r) => setTimeout(r, 200));
    const refused = await Promise.all([
      post(a, '/v1/query/similarity', { key_a: 'query', key_b: 'twin' }),
      topk(a),
      post(a, '/v1/query/topk_vector', { data_b64: 'AAAA' }),
    ]);
    for (const r of refused) {
      expect(r.status, r.text).to.equal(429);
      expect(r.body.code).to.equal('too_many_in_flight');
      expect(r.headers.get('retry-after')).to.equal('1');
    }
    for (const r of await Promise.all(running)) expectRanked(r);
    expect((await booksOf(server, a)).cusUsed - before.cusUsed).to.be.closeTo(4, 1e-9);
    // Once they are answered, the tenant's similarity runs again.
    const sim = await post(a, '/v1/query/similarity', { key_a: 'query', key_b: 'twin' });
    expect(sim.status, sim.text).to.equal(200);
    expect(sim.body.score).to.be.closeTo(1, 1e-9);
  });
});
