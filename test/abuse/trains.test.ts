// Attacks of issue #19 on put_cores (CONTRACT.md section 8): ranks far above the largest max_rank, a
// legal rank on too little data, and a split that would be ruinous to compare are all answered 400
// from the .npy headers, fast, storing nothing and costing nothing, while another tenant's requests
// go on; the largest train the work limit allows is stored without stalling that tenant.
import { expect } from 'chai';
import { MAX_RANK } from '../../src/engine/limits.js';
import { http, type TestServer } from '../helpers/server.js';
import { tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';
import { arena, booksOf, underAttack, VICTIM_WORST_MS } from './harness.js';
import { core, heaviest, qtt } from './trains-input.js';

const MiB = 1 << 20;

describe('abuse: put_cores ranks and mode splits', function () {
  this.timeout(120000);
  let server: TestServer;
  let victim: CreatedTenant;
  let attacker: CreatedTenant;

  before(async () => {
    ({ server, victim, attacker } = await arena());
  });
  after(async () => {
    await server.destroy();
  });

  /** POST a body serialised beforehand (so the attacker's client does not pause the victim's loop). */
  const post = (path: string, json: string) =>
    http(server.url, 'POST', path, { body: json, headers: { ...tenantHeaders(attacker), 'content-type': 'application/json' } });
  const putCores = (body: unknown) => {
    const json = JSON.stringify(body);
    return () => post('/v1/put_cores', json);
  };

  /**
   * The attack is refused with 400 within `answerMs`, the victim unaffected, the books unchanged, and
   * the server's memory grown by no more than a few copies of the body it had to read.
   */
  async function refused(body: unknown, answerMs: number, detail: RegExp): Promise<void> {
    const bodyBytes = JSON.stringify(body).length;
    const before = await booksOf(server, attacker);
    const out = await underAttack(server, victim, putCores(body));
    expect(out.result.status, out.result.text).to.equal(400);
    expect(out.result.body.code).to.equal('invalid_request');
    expect(out.result.body.detail).to.match(detail);
    expect(out.answerMs).to.be.lessThan(answerMs);
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.worstMs).to.be.lessThan(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.lessThan(64 * MiB + 4 * bodyBytes);
    expect(await booksOf(server, attacker)).to.deep.equal(before);
  }

  for (const R of [16384, 65536]) {
    it(`refuses ranks of ${R} ([1, 1, ${R}], [${R}, 1, 1]) from the headers, naming the core`, async () => {
      const body = { key: `rank-${R}`, cores: [core(1, 1, R), core(R, 1, 1)] };
      await refused(body, 1000, new RegExp(`cores\\[0\\].*at most ${MAX_RANK}`));
      const r = await putCores(body)();
      expect(r.body.core).to.equal(0);
    });
  }

  it('refuses legal ranks whose norm alone would hold the engine for seconds', async () => {
    // A QTT of 2^21 values with ranks up to 1024 (19 MiB of cores): its norm is 8e9 multiply-adds.
    await refused({ key: 'heavy', cores: qtt(21, 1024, 5) }, 3000, /multiply-adds/);
  });

  it("refuses a tiny train whose split would be ruinous to compare in the engine's", async () => {
    // Shape [3 * 2^22] as 22 modes of 2 and then a 3: the engine's split starts with the 3, so
    // comparing it means merging every core and splitting again: a rank-1 train of 47 values.
    const modes = [...new Array<number>(22).fill(2), 3];
    await refused(
      { key: 'ruinous-split', cores: modes.map((n, k) => core(1, n, 1, k + 1)) },
      1000,
      /comparison in the engine's mode split \[3, 2, 2/,
    );
  });

  it('stores the heaviest train the work limit allows without stalling the victim', async () => {
    const body = heaviest('heaviest', 2);
    const before = await booksOf(server, attacker);
    const out = await underAttack(server, victim, putCores(body));
    expect(out.result.status, out.result.text).to.equal(200);
    expect(out.result.body.max_rank).to.equal(1024);
    expect(out.answerMs).to.be.lessThan(10000);
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.worstMs).to.be.lessThan(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.lessThan(512 * MiB);
    const after = await booksOf(server, attacker);
    expect(after.keys.default).to.equal(before.keys.default + 1);
    // The stored train is served and compared like any other.
    const serve = await http(server.url, 'POST', '/v1/serve', { json: { key: 'heaviest' }, headers: tenantHeaders(attacker) });
    expect(serve.status).to.equal(200);
    const sim = await http(server.url, 'POST', '/v1/query/similarity', {
      json: { key_a: 'heaviest', key_b: 'heaviest', metric: 'cosine' },
      headers: tenantHeaders(attacker),
    });
    expect(sim.status, sim.text).to.equal(200);
    expect(sim.body.score).to.be.closeTo(1, 1e-9);
    console.log(
      `      heaviest legal train (ranks ${out.result.body.ranks.join(', ')}): answered in ${out.answerMs.toFixed(0)} ms, victim worst ` +
        `${out.victim.worstMs.toFixed(0)} ms, peak memory growth ${(out.memory.growthBytes / MiB).toFixed(0)} MiB`,
    );
  });

  it('refuses a batch whose norms together pass the work limit, naming the entry', async () => {
    const json = JSON.stringify({ entries: [heaviest('batch-0', 3), heaviest('batch-1', 4)] });
    const before = await booksOf(server, attacker);
    const out = await underAttack(server, victim, () => post('/v1/put_cores_batch', json));
    expect(out.result.status, out.result.text).to.equal(400);
    expect(out.result.body).to.include({ code: 'invalid_request', index: 1 });
    expect(out.answerMs).to.be.lessThan(5000);
    expect(out.victim.worstMs).to.be.lessThan(VICTIM_WORST_MS);
    expect(await booksOf(server, attacker)).to.deep.equal(before);
  });
});
