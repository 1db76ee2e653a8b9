// CONTRACT.md section 8, "Storage quota": bytes stored for live and deleted-but-unpurged versions (core
// bytes, or data bytes when uncompressed) per plan; a write that would pass the quota is 402
// storage_quota_exceeded, stores nothing and costs nothing; compaction gives bytes back.
import { rm } from 'node:fs/promises';
import { expect } from 'chai';
import { encodeNpy } from '../../src/codec/npy.js';
import { http, startServer, type Reply, type TestServer } from '../helpers/server.js';
import { admin, randomTenantId, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';

const GiB = 1024 ** 3;

/** `n` bytes of a blob that stays uncompressed (under the compression threshold): it stores exactly n bytes. */
const blob = (n: number, fill = 7): string => Buffer.alloc(n, fill).toString('base64');

/** A float32 core [1, n, 1] as put_cores takes it: 4n stored bytes. */
function core(n: number): { data_b64: string } {
  const data = Float32Array.from({ length: n }, (_, i) => i + 1);
  return { data_b64: encodeNpy('float32', [1, n, 1], new Uint8Array(data.buffer)).toString('base64') };
}

describe('storage quota', () => {
  let server: TestServer;

  const create = async (body: Record<string, unknown>): Promise<Reply> =>
    admin(server, 'POST', '/gate/onboard/create', { tenant_id: randomTenantId(), ...body });
  /** An enterprise tenant with room for plenty of requests and CU, and the given storage quota. */
  const tenantWithQuota = async (storageQuotaBytes?: number): Promise<CreatedTenant> => {
    const r = await create({
      plan: 'enterprise',
      rate_limit: { requests: 100_000, window_s: 60 },
      monthly_quota: 1e9,
      ...(storageQuotaBytes !== undefined ? { storage_quota_bytes: storageQuotaBytes } : {}),
    });
    expect(r.status, r.text).to.equal(201);
    return r.body as CreatedTenant;
  };
  const call = (t: CreatedTenant, method: string, path: string, json?: unknown) =>
    http(server.url, method, path, { json, headers: tenantHeaders(t) });
  const usage = async (t: CreatedTenant) => (await admin(server, 'GET', `/gate/admin/usage/${t.tenant_id}`)).body;
  const keys = async (t: CreatedTenant) => (await call(t, 'GET', '/v1/list/default?limit=1')).body.total as number;

  before(async () => {
    // Concurrent puts of one tenant are the point of some tests here, not its in-flight limit.
    server = await startServer({ env: { SVC_GATE_RETENTION_DAYS: '0', SVC_GATE_TENANT_INFLIGHT: '64' } });
  });
  after(async () => {
    if (!server) return; // the suite was skipped (TTSTORE_TEST_EXTERNAL=1)
    const dir = server.dataDir;
    await server.destroy();
    await rm(dir, { recursive: true, force: true }); // a restarted server does not own its directory
  });

  it('each plan has its quota (starter 1 GiB, builder 100 GiB, pro 1 TiB, enterprise unlimited by default), shown with stored_bytes in usage', async () => {
    const expected = { starter: GiB, builder: 100 * GiB, pro: 1024 * GiB, enterprise: null };
    for (const [plan, quota] of Object.entries(expected)) {
      const created = await create({ plan });
      expect(created.status, created.text).to.equal(201);
      expect(created.body.storage_quota_bytes).to.equal(quota);
      const u = await admin(server, 'GET', `/gate/admin/usage/${created.body.tenant_id}`);
      expect(u.body).to.include({ stored_bytes: 0, storage_quota_bytes: quota });
      const all = await admin(server, 'GET', '/gate/admin/usage');
      const row = all.body.tenants.find((x: { tenant_id: string }) => x.tenant_id === created.body.tenant_id);
      expect(row).to.include({ stored_bytes: 0, storage_quota_bytes: quota });
    }
  });

  it('storage_quota_bytes is an enterprise term of create and update-tier; another plan gives 400 naming the field', async () => {
    const starter = await create({ plan: 'starter', storage_quota_bytes: 10 });
    expect(starter.status).to.equal(400);
    expect(starter.body).to.include({ code: 'invalid_request', field: 'storage_quota_bytes' });
    for (const bad of [-1, 1.5, '100']) {
      const r = await create({ plan: 'enterprise', storage_quota_bytes: bad });
      expect(r.status, JSON.stringify(bad)).to.equal(400);
      expect(r.body.field).to.equal('storage_quota_bytes');
    }
    const t = await tenantWithQuota(5000);
    expect((await usage(t)).storage_quota_bytes).to.equal(5000);
    const raised = await admin(server, 'POST', '/gate/onboard/update-tier', {
      tenant_id: t.tenant_id,
      plan: 'enterprise',
      storage_quota_bytes: 7000,
    });
    expect(raised.status, raised.text).to.equal(200);
    expect(raised.body.storage_quota_bytes).to.equal(7000);
    expect((await usage(t)).storage_quota_bytes).to.equal(7000);
    const toBuilder = await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan: 'builder' });
    expect(toBuilder.body.storage_quota_bytes).to.equal(100 * GiB);
    const refused = await admin(server, 'POST', '/gate/onboard/update-tier', {
      tenant_id: t.tenant_id,
      plan: 'pro',
      storage_quota_bytes: 1,
    });
    expect(refused.status).to.equal(400);
    expect(refused.body.field).to.equal('storage_quota_bytes');
    // back to enterprise without the field: the env default (unlimited here)
    const back = await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan: 'enterprise' });
    expect(back.body.storage_quota_bytes).to.equal(null);
  });

  it('reaching the quota exactly is allowed; one byte more is 402 storage_quota_exceeded that stores nothing and costs nothing', async () => {
    const t = await tenantWithQuota(3000);
    for (let i = 0; i < 3; i++) {
      const r = await call(t, 'POST', '/v1/put', { key: `k${i}`, data_b64: blob(1000) });
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ compressed: false, original_bytes: 1000 });
    }
    const before = await usage(t);
    expect(before).to.include({ stored_bytes: 3000, storage_quota_bytes: 3000 });
    const over = await call(t, 'POST', '/v1/put', { key: 'one-more', data_b64: blob(1) });
    expect(over.status, over.text).to.equal(402);
    expect(over.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(over.body).to.include({ code: 'storage_quota_exceeded', storage_quota_bytes: 3000, stored_bytes: 3000 });
    const after = await usage(t);
    expect(after.cus_used).to.equal(before.cus_used);
    expect(after.stored_bytes).to.equal(3000);
    expect(await keys(t)).to.equal(3);
    // an empty blob stores nothing, so it still fits
    expect((await call(t, 'POST', '/v1/put', { key: 'empty', data_b64: '' })).status).to.equal(200);
  });

  it('a compressed entry counts its core bytes, an uncompressed one its data bytes', async () => {
    const t = await tenantWithQuota();
    const ramp = Float64Array.from({ length: 4096 }, (_, i) => 1 + i / 4096); // a line: rank 2, compresses well
    const npy = encodeNpy('float64', [ramp.length], new Uint8Array(ramp.buffer));
    const array = await call(t, 'POST', '/v1/put', { key: 'ramp', data_b64: npy.toString('base64') });
    expect(array.status, array.text).to.equal(200);
    expect(array.body.compressed).to.equal(true);
    const raw = await call(t, 'POST', '/v1/put', { key: 'raw', data_b64: blob(777) });
    expect((await usage(t)).stored_bytes).to.equal(array.body.stored_core_bytes + raw.body.original_bytes);
  });

  it('concurrent puts that together would pass the quota: exactly those that fit succeed', async () => {
    const t = await tenantWithQuota(5000);
    const rs = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(t, 'POST', '/v1/put', { key: `c${i}`, data_b64: blob(1000, i) })),
    );
    const statuses = rs.map((r) => r.status);
    expect(statuses.filter((s) => s === 200).length, statuses.join(',')).to.equal(5);
    expect(statuses.filter((s) => s === 402).length, statuses.join(',')).to.equal(7);
    const u = await usage(t);
    expect(u.stored_bytes).to.equal(5000);
    expect(u.breakdown.put).to.equal(5);
    expect(await keys(t)).to.equal(5);
  });

  it('put_cores and put_cores_batch count their core bytes; a batch that would pass is refused whole', async () => {
    const t = await tenantWithQuota(4 * 8 * 10); // ten cores of 8 float32
    expect((await call(t, 'POST', '/v1/put_cores', { key: 'one', cores: [core(8)] })).status).to.equal(200);
    const before = await usage(t);
    expect(before.stored_bytes).to.equal(32);
    const tooMany = await call(t, 'POST', '/v1/put_cores_batch', {
      entries: Array.from({ length: 10 }, (_, i) => ({ key: `b${i}`, cores: [core(8)] })),
    });
    expect(tooMany.status, tooMany.text).to.equal(402);
    expect(tooMany.body).to.include({ code: 'storage_quota_exceeded', requested_bytes: 320 });
    expect(await keys(t)).to.equal(1);
    expect(before.cus_used).to.equal(1);
    expect((await usage(t)).cus_used).to.equal(1.1); // the list above, nothing for the 402
    const fits = await call(t, 'POST', '/v1/put_cores_batch', {
      entries: Array.from({ length: 9 }, (_, i) => ({ key: `b${i}`, cores: [core(8)] })),
    });
    expect(fits.status, fits.text).to.equal(200);
    expect((await usage(t)).stored_bytes).to.equal(320);
    expect((await call(t, 'POST', '/v1/put_cores', { key: 'two', cores: [core(1)] })).status).to.equal(402);
  });

  it('a simulation whose outputs would pass the quota fails with storage_quota_exceeded and stores nothing', async () => {
    const t = await tenantWithQuota(100);
    const sub = await call(t, 'POST', '/v1/simulation/submit', { solver: 'poisson_2d', output_key_prefix: 'sim', params: { n_bits: 9 } });
    expect(sub.status, sub.text).to.equal(202);
    let job = sub.body;
    for (const t0 = Date.now(); job.status !== 'completed' && job.status !== 'failed' && Date.now() - t0 < 120_000;) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await call(t, 'GET', `/v1/simulation/status/${job.job_id}`)).body;
    }
    expect(job.status, JSON.stringify(job)).to.equal('failed');
    expect(job.error.code).to.equal('storage_quota_exceeded');
    expect((await usage(t)).stored_bytes).to.equal(0);
    expect(await keys(t)).to.equal(0);
  });

  it('a deleted version counts until compaction purges it; then its bytes are free again', async () => {
    const t = await tenantWithQuota(2000);
    expect((await call(t, 'POST', '/v1/put', { key: 'a', data_b64: blob(1000) })).status).to.equal(200);
    expect((await call(t, 'POST', '/v1/put', { key: 'b', data_b64: blob(1000) })).status).to.equal(200);
    expect((await call(t, 'DELETE', '/v1/delete/default/a')).status).to.equal(200);
    expect((await usage(t)).stored_bytes).to.equal(2000);
    expect((await call(t, 'POST', '/v1/put', { key: 'c', data_b64: blob(1000) })).status).to.equal(402);
    // compaction runs at start (retention 0 days here): the tombstone is purged
    await server.stop();
    server = await startServer({ dataDir: server.dataDir, env: { SVC_GATE_RETENTION_DAYS: '0' } });
    expect((await usage(t)).stored_bytes).to.equal(1000);
    expect((await call(t, 'POST', '/v1/put', { key: 'c', data_b64: blob(1000) })).status).to.equal(200);
    expect((await usage(t)).stored_bytes).to.equal(2000);
  });
});

describe('storage quota: the enterprise default from SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_GATE_ENTERPRISE_STORAGE_QUOTA_BYTES: '1500' } });
  });
  after(async () => {
    await server?.destroy(); // unset when the suite was skipped (TTSTORE_TEST_EXTERNAL=1)
  });

  it('applies to enterprise tenants without their own storage_quota_bytes, and not to other plans', async () => {
    const ent = await admin(server, 'POST', '/gate/onboard/create', { tenant_id: randomTenantId(), plan: 'enterprise' });
    expect(ent.body.storage_quota_bytes).to.equal(1500);
    const t = ent.body as CreatedTenant;
    expect(
      (await http(server.url, 'POST', '/v1/put', { json: { key: 'a', data_b64: blob(1000) }, headers: tenantHeaders(t) })).status,
    ).to.equal(200);
    const over = await http(server.url, 'POST', '/v1/put', { json: { key: 'b', data_b64: blob(1000) }, headers: tenantHeaders(t) });
    expect(over.status).to.equal(402);
    expect(over.body.code).to.equal('storage_quota_exceeded');
    const starter = await admin(server, 'POST', '/gate/onboard/create', { tenant_id: randomTenantId(), plan: 'starter' });
    expect(starter.body.storage_quota_bytes).to.equal(GiB);
  });
});
