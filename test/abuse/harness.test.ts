// The instruments of the adversarial suite, checked on a quiet server: without an attack the victim's
// requests all succeed quickly, and a harmless "attack" neither grows memory nor changes the books.
import { expect } from 'chai';
import { startServer, type TestServer } from '../helpers/server.js';
import type { CreatedTenant } from '../helpers/tenants.js';
import { booksOf, tenant, underAttack, VICTIM_WORST_MS } from './harness.js';

describe('abuse harness: a quiet server', () => {
  let server: TestServer;
  let victim: CreatedTenant;
  let other: CreatedTenant;

  before(async () => {
    server = await startServer();
    victim = await tenant(server);
    other = await tenant(server);
  });
  after(async () => {
    await server.destroy();
  });

  it('the victim loops small requests well inside the bound and the books stay as they were', async () => {
    const before = await booksOf(server, other);
    const out = await underAttack(server, victim, () => new Promise((r) => setTimeout(r, 500)), 500);
    expect(out.victim.failures).to.deep.equal([]);
    expect(out.victim.requests).to.be.greaterThan(5);
    expect(out.victim.worstMs).to.be.lessThan(VICTIM_WORST_MS);
    expect(out.memory.growthBytes).to.be.lessThan(256 << 20);
    expect(await booksOf(server, other)).to.deep.equal(before);
  });
});
