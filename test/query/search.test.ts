// POST /v1/query/search: every match and only matches, ascending key order, latest versions, a page at a time.
import { expect } from 'chai';
import type { TestServer } from '../helpers/server.js';
import { b64, startStorageServer, tenantClient, type Client } from '../storage/helpers.js';
import { expectProblem, search } from './helpers.js';

describe('query: metadata search', function () {
  this.timeout(120000);
  let server: TestServer;
  let c: Client;
  const put = async (key: string, metadata: Record<string, unknown>, namespace?: string) => {
    const r = await c.put({ key, namespace, data_b64: b64(Buffer.from(`data of ${key}`)), metadata });
    expect(r.status, r.text).to.equal(200);
    return r.body;
  };
  const keysOf = (r: { body: { results: Array<{ key: string }> } }) => r.body.results.map((x) => x.key);

  before(async () => {
    server = await startStorageServer();
    c = await tenantClient(server, ['default', 'other']);
    // 60 entries, inserted out of order; every third is a "run", colours cycle.
    const order = Array.from({ length: 60 }, (_, i) => (i * 37) % 60);
    for (const i of order) {
      await put(`item-${String(i).padStart(3, '0')}`, {
        kind: i % 3 === 0 ? 'run' : 'other',
        colour: ['red', 'green', 'blue', 'red'][i % 4],
        n: i % 5,
        flag: i % 2 === 0,
        nested: { a: i % 2, b: [1, 2] },
      });
    }
    await put('item-000', { kind: 'run', colour: 'red', n: 0, flag: true, nested: { a: 0, b: [1, 2] } }, 'other');
  });
  after(async () => {
    await server.destroy();
  });

  it('returns every match and only matches, in ascending key order, with metadata and version', async () => {
    const r = await search(c, { filters: { kind: 'run' } });
    expect(r.status, r.text).to.equal(200);
    const want = Array.from({ length: 60 }, (_, i) => i)
      .filter((i) => i % 3 === 0)
      .map((i) => `item-${String(i).padStart(3, '0')}`);
    expect(r.body.namespace).to.equal('default');
    expect(r.body.count).to.equal(want.length);
    expect(keysOf(r)).to.deep.equal(want);
    expect(r.body.results[1]).to.deep.equal({
      key: 'item-003',
      version: 1,
      metadata: { kind: 'run', colour: 'red', n: 3, flag: false, nested: { a: 1, b: [1, 2] } },
    });
  });

  it('several filters must all hold; equality is strict JSON equality, objects regardless of key order', async () => {
    const both = await search(c, { filters: { kind: 'run', colour: 'red' } });
    expect(keysOf(both)).to.deep.equal([
      'item-000',
      'item-003',
      'item-012',
      'item-015',
      'item-024',
      'item-027',
      'item-036',
      'item-039',
      'item-048',
      'item-051',
    ]);
    expect((await search(c, { filters: { flag: 1 } })).body.count).to.equal(0);
    expect((await search(c, { filters: { n: '1' } })).body.count).to.equal(0);
    expect((await search(c, { filters: { n: 1 } })).body.count).to.equal(12);
    expect((await search(c, { filters: { n: 1.0 } })).body.count).to.equal(12);
    expect((await search(c, { filters: { flag: true } })).body.count).to.equal(30);
    const nested = await search(c, { filters: { nested: { b: [1, 2], a: 1 } } });
    expect(nested.body.count).to.equal(30);
    expect((await search(c, { filters: { nested: { a: 1 } } })).body.count).to.equal(0);
    expect((await search(c, { filters: { nested: { a: 1, b: [2, 1] } } })).body.count).to.equal(0);
    expect((await search(c, { filters: { missing: null } })).body.count).to.equal(0);
    expect((await search(c, { filters: { kind: 'walk' } })).body).to.deep.equal({ namespace: 'default', count: 0, total: 0, results: [] });
  });

  it('empty filters match every entry; namespaces are separate', async () => {
    const all = await search(c, { filters: {} });
    expect(all.body.count).to.equal(60);
    const other = await search(c, { namespace: 'other', filters: { kind: 'run' } });
    expect(keysOf(other)).to.deep.equal(['item-000']);
  });

  it('answers from the latest version only, and leaves deleted entries out', async () => {
    await put('moving', { stage: 'draft', owner: 'ann' });
    expect(keysOf(await search(c, { filters: { stage: 'draft' } }))).to.deep.equal(['moving']);
    await put('moving', { stage: 'final', owner: 'ann' });
    expect((await search(c, { filters: { stage: 'draft' } })).body.count).to.equal(0);
    const fin = await search(c, { filters: { stage: 'final' } });
    expect(fin.body.results).to.deep.equal([{ key: 'moving', version: 2, metadata: { stage: 'final', owner: 'ann' } }]);
    expect((await c.call('DELETE', '/v1/delete/default/moving')).status).to.equal(200);
    expect((await search(c, { filters: { owner: 'ann' } })).body.count).to.equal(0);
    await put('moving', { stage: 'again', owner: 'ann' });
    const again = await search(c, { filters: { owner: 'ann' } });
    expect(again.body.results).to.deep.equal([{ key: 'moving', version: 3, metadata: { stage: 'again', owner: 'ann' } }]);
  });

  it('pages with limit and offset in key order; total counts every match, count the page; bad bounds are 400', async () => {
    const whole = await search(c, { filters: { kind: 'run' } });
    expect(whole.body).to.include({ count: 20, total: 20 });
    const paged: string[] = [];
    for (let offset = 0; offset < 20; offset += 7) {
      const page = await search(c, { filters: { kind: 'run' }, limit: 7, offset });
      expect(page.body, `offset ${offset}`).to.include({ count: Math.min(7, 20 - offset), total: 20 });
      paged.push(...keysOf(page));
    }
    expect(paged).to.deep.equal(keysOf(whole));
    const everything = await search(c, { filters: {} });
    const tail = await search(c, { filters: {}, limit: 3, offset: everything.body.total - 2 });
    expect(tail.body).to.include({ count: 2, total: everything.body.total });
    expect(keysOf(tail)).to.deep.equal(keysOf(everything).slice(-2));
    expect((await search(c, { filters: { kind: 'run' }, offset: 500 })).body).to.include({ count: 0, total: 20 });
    for (const bounds of [{ limit: 0 }, { limit: 10001 }, { limit: 2.5 }, { limit: '10' }, { offset: -1 }, { offset: 0.5 }]) {
      const r = await search(c, { filters: {}, ...bounds });
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.field).to.equal(Object.keys(bounds)[0]);
    }
  });

  it('filters are required and must be an object; unknown fields are 400', async () => {
    for (const body of [
      {},
      { filters: null },
      { filters: [] },
      { filters: 'kind=run' },
      { filters: {}, k: 3 },
      { filters: {}, namespace: '' },
    ]) {
      expectProblem(await search(c, body), 400, 'invalid_request');
    }
  });
});
