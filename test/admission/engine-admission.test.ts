// CONTRACT.md section 8, engine work: slots given in fair turns across tenants (per-tenant queues,
// round-robin, a tenant's queue never in front of another tenant's request) and the cap on a
// tenant's engine requests in flight; light work in a lane of its own beside the heavy.
import { expect } from 'chai';
import { EngineAdmission, type Turn } from '../../src/admission/engine-admission.js';
import { LIGHT_TURN_WORK } from '../../src/engine/limits.js';
import { ProblemError } from '../../src/http/errors.js';

/** Engine work the test finishes by hand; `log` records the order in which work started. */
function harness(admission: EngineAdmission) {
  const log: string[] = [];
  const finishers = new Map<string, { ok(): void; fail(err: Error): void }>();
  const submit = (name: string, turn: Turn, estimatedWork?: number): Promise<string> =>
    admission.run(
      turn,
      () =>
        new Promise<string>((resolve, reject) => {
          log.push(name);
          finishers.set(name, { ok: () => resolve(name), fail: reject });
        }),
      estimatedWork,
    );
  const finish = async (name: string, err?: Error) => {
    const f = finishers.get(name);
    if (!f) throw new Error(`${name} is not running`);
    finishers.delete(name);
    if (err) f.fail(err);
    else f.ok();
    await settle();
  };
  const running = () => [...finishers.keys()].sort();
  return { log, submit, finish, running };
}

/** Lets every promise reaction queued so far run. */
const settle = () => new Promise((r) => setImmediate(r));
const A: Turn = { owner: 'a' };
const B: Turn = { owner: 'b' };
const C: Turn = { owner: 'c' };

describe('admission: engine work in fair turns', () => {
  it('runs at most `slots` engine calls at once and starts the next as one finishes', async () => {
    const admission = new EngineAdmission({ slots: 2 });
    const h = harness(admission);
    for (const [n, t] of [
      ['a1', A],
      ['b1', B],
      ['c1', C],
    ] as const)
      void h.submit(n, t);
    await settle();
    expect(h.running()).to.deep.equal(['a1', 'b1']);
    expect(admission.stats()).to.include({ running: 2, waiting: 1 });
    await h.finish('a1');
    expect(h.running()).to.deep.equal(['b1', 'c1']);
    expect(admission.stats()).to.include({ running: 2, waiting: 0 });
  });

  it("keeps one slot for the other tenants: a lone tenant runs one call at a time, another tenant's starts at once", async () => {
    const admission = new EngineAdmission({ slots: 2 });
    const h = harness(admission);
    for (let i = 1; i <= 5; i++) void h.submit(`a${i}`, A);
    await settle();
    expect(h.running()).to.deep.equal(['a1']);
    void h.submit('b1', B);
    await settle();
    expect(h.running()).to.deep.equal(['a1', 'b1']);
    await h.finish('a1');
    expect(h.running()).to.deep.equal(['a2', 'b1']);
  });

  it('a tenant that arrives behind a long queue of another tenant gets the next free slot', async () => {
    const admission = new EngineAdmission({ slots: 2, ownerSlots: 2 });
    const h = harness(admission);
    for (let i = 1; i <= 10; i++) void h.submit(`a${i}`, A);
    await settle();
    const victim = h.submit('b1', B);
    await settle();
    await h.finish('a1');
    expect(h.running()).to.deep.equal(['a2', 'b1']); // not a3: b1 waited only for work already running
    await h.finish('b1');
    expect(await victim).to.equal('b1');
    expect(h.log.slice(0, 3)).to.deep.equal(['a1', 'a2', 'b1']);
  });

  it('serves waiting tenants round-robin, one turn each, whatever their queue lengths', async () => {
    const admission = new EngineAdmission({ slots: 1 });
    const h = harness(admission);
    void h.submit('a0', A);
    await settle();
    for (let i = 1; i <= 4; i++) void h.submit(`a${i}`, A);
    for (let i = 1; i <= 2; i++) void h.submit(`b${i}`, B);
    void h.submit('c1', C);
    await settle();
    for (const n of ['a0', 'b1', 'c1', 'a1', 'b2', 'a2', 'a3']) await h.finish(n);
    // a had the last turn (a0), so b and c go first; then one turn each while more than one waits
    expect(h.log).to.deep.equal(['a0', 'b1', 'c1', 'a1', 'b2', 'a2', 'a3', 'a4']);
  });

  it("with one slot, a tenant behind another tenant's queue waits only for the work running", async () => {
    const admission = new EngineAdmission({ slots: 1 });
    const h = harness(admission);
    for (let i = 1; i <= 5; i++) void h.submit(`a${i}`, A);
    await settle();
    void h.submit('b1', B);
    await settle();
    await h.finish('a1');
    expect(h.running()).to.deep.equal(['b1']);
  });

  it('gives a freed slot to the waiting tenant with the fewest slots in use', async () => {
    const admission = new EngineAdmission({ slots: 2, ownerSlots: 2 });
    const h = harness(admission);
    void h.submit('a1', A);
    void h.submit('b1', B);
    await settle();
    void h.submit('a2', A); // a waits first ...
    void h.submit('c1', C); // ... but c has nothing running
    await settle();
    await h.finish('b1');
    expect(h.running()).to.deep.equal(['a1', 'c1']);
  });

  it('gives the slot back when the work fails, and the failure reaches its caller', async () => {
    const admission = new EngineAdmission({ slots: 1 });
    const h = harness(admission);
    const failing = h.submit('a1', A).then(
      () => null,
      (e: Error) => e.message,
    );
    const next = h.submit('b1', B);
    await settle();
    await h.finish('a1', new Error('engine failed'));
    expect(await failing).to.equal('engine failed');
    expect(h.running()).to.deep.equal(['b1']);
    await h.finish('b1');
    expect(await next).to.equal('b1');
    expect(admission.stats()).to.include({ running: 0, waiting: 0 });
  });

  it('drops a waiting turn whose client went away, without running it, and the queue goes on', async () => {
    const admission = new EngineAdmission({ slots: 1 });
    const h = harness(admission);
    void h.submit('a1', A);
    const gone = new AbortController();
    const abandoned = h.submit('b1', { owner: 'b', signal: gone.signal });
    void h.submit('c1', C);
    await settle();
    gone.abort();
    const err = await abandoned.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ProblemError);
    expect((err as ProblemError).status).to.equal(503);
    expect(admission.stats()).to.include({ running: 1, waiting: 1 });
    await h.finish('a1');
    expect(h.running()).to.deep.equal(['c1']);
    expect(h.log).to.not.include('b1');
  });

  it('never runs work whose client is already gone', async () => {
    const admission = new EngineAdmission({ slots: 1 });
    let ran = false;
    const err = await admission
      .run({ owner: 'a', signal: AbortSignal.abort() }, async () => {
        ran = true;
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).to.be.instanceOf(ProblemError);
    expect(ran).to.equal(false);
    expect(admission.stats()).to.include({ running: 0, waiting: 0 });
  });
});

describe('admission: engine requests in flight per tenant', () => {
  it('answers 429 too_many_in_flight with Retry-After 1 past the limit, without touching other tenants', () => {
    const admission = new EngineAdmission({ tenantInflight: 4 });
    const tickets = Array.from({ length: 4 }, () => admission.enter('a'));
    let refusal: unknown;
    try {
      admission.enter('a');
    } catch (err) {
      refusal = err;
    }
    expect(refusal).to.be.instanceOf(ProblemError);
    const p = refusal as ProblemError;
    expect(p.status).to.equal(429);
    expect(p.code).to.equal('too_many_in_flight');
    expect(p.headers).to.deep.equal({ 'Retry-After': '1' });
    expect(() => admission.enter('b')).to.not.throw();
    expect(admission.stats()).to.include({ inFlight: 5, refused: 1 });
    tickets[0]!.leave();
    expect(() => admission.enter('a')).to.not.throw();
  });

  it('counts a request once however often it leaves', () => {
    const admission = new EngineAdmission({ tenantInflight: 2 });
    const t = admission.enter('a');
    admission.enter('a');
    t.leave();
    t.leave();
    admission.enter('a');
    expect(() => admission.enter('a')).to.throw(ProblemError);
    expect(admission.stats().inFlight).to.equal(2);
  });
});

describe('admission: light work (at most LIGHT_TURN_WORK) in a lane of its own', () => {
  it('runs beside heavy work that holds every heavy slot, never behind it', async () => {
    const admission = new EngineAdmission({ slots: 2, lightSlots: 2 });
    const h = harness(admission);
    for (let i = 1; i <= 3; i++) {
      void h.submit(`a${i}`, A);
      void h.submit(`b${i}`, B);
    }
    await settle();
    expect(h.running()).to.deep.equal(['a1', 'b1']);
    void h.submit('c-small', C, LIGHT_TURN_WORK);
    void h.submit('c-big', C, LIGHT_TURN_WORK + 1);
    await settle();
    expect(h.running()).to.deep.equal(['a1', 'b1', 'c-small']);
    expect(admission.stats()).to.deep.include({ running: 3, waiting: 5, light: { slots: 2, running: 1, waiting: 0 } });
    await h.finish('a1');
    expect(h.running()).to.deep.equal(['b1', 'c-big', 'c-small']); // c has nothing heavy running: its turn before a2
  });

  it('takes work of unknown size as heavy', async () => {
    const admission = new EngineAdmission({ slots: 1 });
    const h = harness(admission);
    void h.submit('a1', A);
    void h.submit('b1', B);
    await settle();
    expect(h.running()).to.deep.equal(['a1']);
    expect(admission.stats().heavy).to.deep.equal({ slots: 1, running: 1, waiting: 1 });
  });

  it("gives its slots in fair turns too: one tenant's light work leaves a light slot for the others", async () => {
    const admission = new EngineAdmission({ slots: 2, lightSlots: 2 });
    const h = harness(admission);
    for (let i = 1; i <= 4; i++) void h.submit(`a${i}`, A, 1);
    await settle();
    expect(h.running()).to.deep.equal(['a1']);
    void h.submit('b1', B, 1);
    await settle();
    expect(h.running()).to.deep.equal(['a1', 'b1']);
    await h.finish('a1');
    expect(h.running()).to.deep.equal(['a2', 'b1']);
  });
});
