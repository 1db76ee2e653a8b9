// The cluster scripts/cluster.sh starts: nginx round-robin over three nodes. Needs its exports
// (TTSTORE_URL, TTSTORE_SERVICE_KEY, TTSTORE_NODE_URLS).
import { expect } from 'chai';
import { http } from '../test/helpers/server.js';
import { createTenant, tenantHeaders } from '../test/helpers/tenants.js';

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is unset: run \`bash scripts/cluster.sh start\` and export what it prints`);
  return v;
}

describe('cluster: three nodes behind nginx (scripts/cluster.sh start)', () => {
  const front = { url: need('TTSTORE_URL'), serviceKey: need('TTSTORE_SERVICE_KEY') };
  const nodes = need('TTSTORE_NODE_URLS').split(',');

  it("admits exactly a starter tenant's 10 of 30 concurrent requests through the balancer", async () => {
    const t = await createTenant(front, { plan: 'starter' });
    await new Promise((r) => setTimeout(r, 200)); // every node learns of the tenant
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => http(front.url, 'GET', '/v1/list/default', { headers: tenantHeaders(t) })),
    );
    expect(replies.filter((r) => r.status === 200).length).to.equal(10);
    expect(replies.filter((r) => r.status === 429).length).to.equal(20);
  });

  it('a put through the balancer is served by every node at once', async () => {
    const t = await createTenant(front);
    await new Promise((r) => setTimeout(r, 200));
    for (let v = 1; v <= 3; v++) {
      const put = await http(front.url, 'POST', '/v1/put', {
        json: { key: 'k', data_b64: Buffer.from(`v${v}`).toString('base64') },
        headers: tenantHeaders(t),
      });
      expect(put.status).to.equal(200);
      for (const node of nodes) {
        const served = await http(node, 'POST', '/v1/serve', { json: { key: 'k' }, headers: tenantHeaders(t) });
        expect(served.status).to.equal(200);
        expect(Buffer.from(served.body.data_b64, 'base64').toString()).to.equal(`v${v}`);
      }
    }
  });

  it('3 nodes x 20 concurrent puts to one key give versions 1..60, no gap, no duplicate', async () => {
    const t = await createTenant(front, { plan: 'pro' });
    await new Promise((r) => setTimeout(r, 200));
    // 20 concurrent puts per node: more than a tenant may have in flight on one node (CONTRACT 8), so
    // each one is retried on 429 too_many_in_flight as a client would, until it is acknowledged.
    const put = async (node: string, body: string) => {
      for (;;) {
        const r = await http(node, 'POST', '/v1/put', {
          json: { key: 'race', data_b64: Buffer.from(body).toString('base64') },
          headers: tenantHeaders(t),
        });
        if (r.status !== 429 || r.body.code !== 'too_many_in_flight') return r;
        await new Promise((res) => setTimeout(res, 20));
      }
    };
    const puts = nodes.flatMap((node, n) => Array.from({ length: 20 }, (_, i) => put(node, `node ${n} put ${i}`)));
    const replies = await Promise.all(puts);
    const failed = replies.filter((r) => r.status !== 200).map((r) => [r.status, r.body]);
    expect(failed).to.deep.equal([]);
    const versions = replies.map((r) => r.body.version as number).sort((a, b) => a - b);
    expect(versions).to.deep.equal(Array.from({ length: 60 }, (_, i) => i + 1));
    // Every node lists the same 60 versions of the key, and serves the last one.
    for (const node of nodes) {
      const got = await http(node, 'GET', '/v1/get/default/race', { headers: tenantHeaders(t) });
      expect(got.status).to.equal(200);
      expect(got.body.version).to.equal(60);
    }
  });
});
