// CONTRACT.md section 8, memory: the bytes held for requests in flight stay under the limit, no tenant
// holds more than half of it, and a growth that does not fit waits briefly, then gets 503 overloaded.
import { expect } from 'chai';
import { ByteBudget } from '../../src/admission/byte-budget.js';
import { ProblemError } from '../../src/http/errors.js';

const WAIT_MS = 80;
const budget = () => new ByteBudget({ limit: 1000, waitMs: WAIT_MS });

async function refusal(p: Promise<unknown>): Promise<ProblemError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected a refusal').to.be.instanceOf(ProblemError);
  return err as ProblemError;
}

describe('admission: the byte budget of requests in flight', () => {
  it('lets one tenant hold up to half of the limit, and no more, even alone', async () => {
    const b = budget();
    const h = b.open('a');
    await h.grow(400);
    await h.grow(100);
    expect(h.bytes).to.equal(500);
    expect(h.tryGrow(1)).to.equal(false);
    expect(b.stats()).to.include({ held: 500, share: 500, limit: 1000 });
  });

  it('makes a growth past the share wait, then answers 503 overloaded with Retry-After', async () => {
    const b = budget();
    await b.open('a').grow(450);
    const t0 = performance.now();
    const p = await refusal(b.open('a').grow(100));
    const waited = performance.now() - t0;
    expect(p.status).to.equal(503);
    expect(p.code).to.equal('overloaded');
    expect(p.headers['Retry-After']).to.equal('1');
    expect(waited).to.be.within(WAIT_MS - 5, WAIT_MS + 200);
    expect(b.stats()).to.include({ held: 450, waiting: 0, refused: 1 });
  });

  it('refuses at once what one request could never hold', async () => {
    const b = budget();
    const t0 = performance.now();
    const p = await refusal(b.open('a').grow(501));
    expect(performance.now() - t0).to.be.lessThan(WAIT_MS / 2);
    expect(p.code).to.equal('overloaded');
    const h = b.open('a');
    await h.grow(300);
    await refusal(h.grow(201)); // with what it already keeps, never within the share
    expect(b.stats().held).to.equal(300);
  });

  it('grants a waiting growth as soon as another hold of the tenant is released', async () => {
    const b = budget();
    const first = b.open('a');
    await first.grow(400);
    const second = b.open('a');
    const growing = second.grow(300);
    setTimeout(() => first.release(), 10);
    await growing;
    expect(second.bytes).to.equal(300);
    expect(b.stats().held).to.equal(300);
  });

  it('leaves other tenants unaffected by a tenant at its share', async () => {
    const b = budget();
    await b.open('a').grow(500);
    const t0 = performance.now();
    await b.open('b').grow(500);
    expect(performance.now() - t0).to.be.lessThan(WAIT_MS / 2);
    expect(b.stats().held).to.equal(1000);
  });

  it('keeps all tenants together under the limit', async () => {
    const b = new ByteBudget({ limit: 1000, waitMs: WAIT_MS });
    await b.open('a').grow(500);
    await b.open('b').grow(400);
    const c = b.open('c');
    expect(c.tryGrow(101)).to.equal(false);
    await refusal(c.grow(101));
    await c.grow(100);
    expect(b.stats().held).to.equal(1000);
  });

  it('gives back everything on release, once; shrink gives back a part', async () => {
    const b = budget();
    const h = b.open('a');
    await h.grow(300);
    h.shrink(100);
    expect(b.stats().held).to.equal(200);
    h.release();
    h.release();
    expect(h.bytes).to.equal(0);
    expect(b.stats().held).to.equal(0);
    expect(h.tryGrow(1)).to.equal(false);
  });

  it('takes nothing for a growth whose client went away while it waited', async () => {
    const b = budget();
    const other = b.open('a');
    await other.grow(500);
    const gone = new AbortController();
    const h = b.open('a');
    const growing = h.grow(100, gone.signal);
    setTimeout(() => gone.abort(), 10);
    const t0 = performance.now();
    expect((await refusal(growing)).code).to.equal('overloaded');
    expect(performance.now() - t0).to.be.lessThan(WAIT_MS);
    other.release();
    expect(b.stats()).to.include({ held: 0, waiting: 0 });
  });

  it('keeps nothing for a hold released while its growth waited', async () => {
    const b = budget();
    const other = b.open('a');
    await other.grow(500);
    const h = b.open('a');
    const growing = h.grow(200);
    h.release();
    other.release();
    await growing;
    expect(h.bytes).to.equal(0);
    expect(b.stats().held).to.equal(0);
  });
});
