// CONTRACT.md section 6's admin table: bodies, statuses and validation of the onboarding and admin
// endpoints; reload of rows written by another process; the generated service key.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import sqlite3 from 'sqlite3';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { admin, createTenant, randomTenantId, tenantHeaders } from '../helpers/tenants.js';

const DAY = 86_400;
const BREAKDOWN = ['put', 'get', 'list', 'serve', 'query_topk', 'search', 'delete', 'simulation'];

/** Run statements on the server's database file from this (another) process. */
async function writeDirectly(dataDir: string, sql: string, params: unknown[]): Promise<void> {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d = new sqlite3.Database(path.join(dataDir, 'ttstore.db'), sqlite3.OPEN_READWRITE, (err) => (err ? reject(err) : resolve(d)));
  });
  try {
    await new Promise<void>((resolve, reject) => db.run('PRAGMA busy_timeout = 10000', (err) => (err ? reject(err) : resolve())));
    await new Promise<void>((resolve, reject) => db.run(sql, params, (err) => (err ? reject(err) : resolve())));
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

/** Read from the server's database file from this process. */
async function readDirectly<T>(dataDir: string, sql: string, params: unknown[]): Promise<T[]> {
  const db = await new Promise<sqlite3.Database>((resolve, reject) => {
    const d = new sqlite3.Database(path.join(dataDir, 'ttstore.db'), sqlite3.OPEN_READONLY, (err) => (err ? reject(err) : resolve(d)));
  });
  try {
    return await new Promise<T[]>((resolve, reject) => db.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
  } finally {
    await new Promise<void>((resolve) => db.close(() => resolve()));
  }
}

describe('gate: admin and onboarding endpoints (CONTRACT.md section 6)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { SVC_GATE_RETENTION_DAYS: '7', SVC_GATE_ENTERPRISE_MONTHLY_QUOTA: '1234567' } });
  });
  after(async () => {
    await server?.destroy(); // unset when the suite was skipped (TTSTORE_TEST_EXTERNAL=1)
  });

  describe('POST /gate/onboard/create', () => {
    it('creates a starter tenant by default: 201 with a key shown once and the plan terms', async () => {
      const id = randomTenantId();
      const r = await admin(server, 'POST', '/gate/onboard/create', { tenant_id: id, email: 'ops@example.com' });
      expect(r.status).to.equal(201);
      expect(r.headers.get('cache-control')).to.equal('no-store');
      expect(r.body).to.include({ tenant_id: id, plan: 'starter', monthly_quota: 1000, email: 'ops@example.com', active: true });
      expect(r.body.namespaces).to.deep.equal(['default']);
      expect(r.body.rate_limit).to.deep.equal({ requests: 10, window_s: 60 });
      expect(r.body.api_key).to.match(/^tts_[A-Za-z0-9_-]{43}$/);
      // the key is never shown again
      const list = await admin(server, 'GET', '/gate/admin/tenants');
      expect(JSON.stringify(list.body)).not.to.include(r.body.api_key);
    });

    it('gives each plan its terms; enterprise follows the env defaults unless custom values are given', async () => {
      const terms: Record<string, [number, number, number]> = {
        builder: [100, 60, 50_000],
        pro: [1000, 60, 500_000],
        enterprise: [100, 60, 1_234_567],
      };
      for (const [plan, [requests, window_s, quota]] of Object.entries(terms)) {
        const r = await admin(server, 'POST', '/gate/onboard/create', { tenant_id: randomTenantId(), plan });
        expect(r.status).to.equal(201);
        expect(r.body.rate_limit).to.deep.equal({ requests, window_s });
        expect(r.body.monthly_quota).to.equal(quota);
      }
      const custom = await admin(server, 'POST', '/gate/onboard/create', {
        tenant_id: randomTenantId(),
        plan: 'enterprise',
        rate_limit: { requests: 7, window_s: 3 },
        monthly_quota: 42.5,
      });
      expect(custom.status).to.equal(201);
      expect(custom.body.rate_limit).to.deep.equal({ requests: 7, window_s: 3 });
      expect(custom.body.monthly_quota).to.equal(42.5);
    });

    it('a duplicate tenant_id is 409 tenant_exists, also for a deactivated tenant', async () => {
      const t = await createTenant(server);
      const again = await admin(server, 'POST', '/gate/onboard/create', { tenant_id: t.tenant_id });
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('tenant_exists');
      await admin(server, 'POST', '/gate/admin/deactivate', { tenant_id: t.tenant_id });
      expect((await admin(server, 'POST', '/gate/onboard/create', { tenant_id: t.tenant_id })).status).to.equal(409);
    });

    it('rejects bad bodies with 400 invalid_request naming the field', async () => {
      const bad: Array<[unknown, string]> = [
        [{}, 'tenant_id'],
        [{ tenant_id: 'A-upper' }, 'tenant_id'],
        [{ tenant_id: 'x' }, 'tenant_id'],
        [{ tenant_id: `a${'b'.repeat(63)}` }, 'tenant_id'],
        [{ tenant_id: 'ok-id', plan: 'gold' }, 'plan'],
        [{ tenant_id: 'ok-id', namespaces: [] }, 'namespaces'],
        [{ tenant_id: 'ok-id', namespaces: 'default' }, 'namespaces'],
        [{ tenant_id: 'ok-id', namespaces: ['ok', '-bad'] }, 'namespaces[1]'],
        [{ tenant_id: 'ok-id', email: 'not an email' }, 'email'],
        [{ tenant_id: 'ok-id', plan: 'enterprise', rate_limit: { requests: 0, window_s: 60 } }, 'rate_limit.requests'],
        [{ tenant_id: 'ok-id', plan: 'enterprise', rate_limit: { requests: 5, window_s: 1.5 } }, 'rate_limit.window_s'],
        [{ tenant_id: 'ok-id', plan: 'enterprise', rate_limit: [5, 60] }, 'rate_limit'],
        [{ tenant_id: 'ok-id', plan: 'enterprise', monthly_quota: -1 }, 'monthly_quota'],
        [{ tenant_id: 'ok-id', plan: 'pro', monthly_quota: 5 }, 'monthly_quota'],
        [{ tenant_id: 'ok-id', plan: 'starter', rate_limit: { requests: 5, window_s: 60 } }, 'rate_limit'],
        [{ tenant_id: 'ok-id', tier: 'pro' }, ''],
        [['ok-id'], ''],
      ];
      for (const [body, field] of bad) {
        const r = await admin(server, 'POST', '/gate/onboard/create', body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.code).to.equal('invalid_request');
        if (field) expect(r.body.field, JSON.stringify(body)).to.equal(field);
      }
      expect((await admin(server, 'GET', '/gate/admin/usage/ok-id')).status).to.equal(404);
    });

    it('malformed JSON is 400 and a non-JSON body is 415', async () => {
      const auth = { Authorization: `Bearer ${server.serviceKey}` };
      const malformed = await http(server.url, 'POST', '/gate/onboard/create', {
        body: '{"tenant_id": ',
        headers: { ...auth, 'content-type': 'application/json' },
      });
      expect(malformed.status).to.equal(400);
      expect(malformed.body.code).to.equal('invalid_request');
      const text = await http(server.url, 'POST', '/gate/onboard/create', {
        body: 'tenant_id=abc',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(text.status).to.equal(415);
      expect(text.body.code).to.equal('unsupported_media_type');
    });
  });

  describe('rotate-key, add-namespace, update-tier, deactivate', () => {
    it('unknown tenants are 404 not_found; bad ids are 400', async () => {
      for (const p of ['/gate/onboard/rotate-key', '/gate/admin/deactivate']) {
        const r = await admin(server, 'POST', p, { tenant_id: 'nobody-here' });
        expect(r.status, p).to.equal(404);
        expect(r.body.code).to.equal('not_found');
        expect((await admin(server, 'POST', p, { tenant_id: 'Bad Id' })).status).to.equal(400);
      }
      expect((await admin(server, 'POST', '/gate/onboard/add-namespace', { tenant_id: 'nobody-here', namespace: 'x' })).status).to.equal(
        404,
      );
      expect((await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: 'nobody-here', plan: 'pro' })).status).to.equal(404);
      expect((await admin(server, 'GET', '/gate/admin/usage/nobody-here')).status).to.equal(404);
    });

    it('add-namespace validates the name and is a no-op for a namespace already there', async () => {
      const t = await createTenant(server, { namespaces: ['a', 'b'] });
      expect((await admin(server, 'POST', '/gate/onboard/add-namespace', { tenant_id: t.tenant_id, namespace: '../x' })).status).to.equal(
        400,
      );
      expect((await admin(server, 'POST', '/gate/onboard/add-namespace', { tenant_id: t.tenant_id })).status).to.equal(400);
      const r = await admin(server, 'POST', '/gate/onboard/add-namespace', { tenant_id: t.tenant_id, namespace: 'a' });
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.equal({ tenant_id: t.tenant_id, namespaces: ['a', 'b'] });
    });

    it('update-tier sets the quota and rate limit by plan, custom values for enterprise only', async () => {
      const t = await createTenant(server, { plan: 'starter' });
      const up = await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan: 'pro' });
      expect(up.status).to.equal(200);
      expect(up.body).to.deep.equal({
        tenant_id: t.tenant_id,
        plan: 'pro',
        monthly_quota: 500_000,
        rate_limit: { requests: 1000, window_s: 60 },
        storage_quota_bytes: 1024 ** 4,
      });
      const ent = await admin(server, 'POST', '/gate/onboard/update-tier', {
        tenant_id: t.tenant_id,
        plan: 'enterprise',
        rate_limit: { requests: 5000, window_s: 10 },
        monthly_quota: 2e6,
      });
      expect(ent.body).to.deep.equal({
        tenant_id: t.tenant_id,
        plan: 'enterprise',
        monthly_quota: 2e6,
        rate_limit: { requests: 5000, window_s: 10 },
        storage_quota_bytes: null,
      });
      const plain = await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan: 'enterprise' });
      expect(plain.body).to.deep.equal({
        tenant_id: t.tenant_id,
        plan: 'enterprise',
        monthly_quota: 1_234_567,
        rate_limit: { requests: 100, window_s: 60 },
        storage_quota_bytes: null,
      });
      expect(
        (await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id, plan: 'builder', monthly_quota: 9 })).status,
      ).to.equal(400);
      expect((await admin(server, 'POST', '/gate/onboard/update-tier', { tenant_id: t.tenant_id })).status).to.equal(400);
      const tenants = await admin(server, 'GET', '/gate/admin/tenants');
      const row = tenants.body.tenants.find((x: { tenant_id: string }) => x.tenant_id === t.tenant_id);
      expect(row).to.include({ plan: 'enterprise', active: true });
    });

    it('deactivate answers active false with purge_after = deactivated_at + retention; data and record are kept', async () => {
      const t = await createTenant(server);
      const put = await http(server.url, 'POST', '/v1/put', {
        headers: tenantHeaders(t),
        json: { key: 'kept', data_b64: Buffer.from('still here').toString('base64') },
      });
      expect(put.status).to.equal(200);
      const before = Date.now() / 1000;
      const r = await admin(server, 'POST', '/gate/admin/deactivate', { tenant_id: t.tenant_id });
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ tenant_id: t.tenant_id, active: false });
      expect(r.body.deactivated_at).to.be.closeTo(before, 5);
      expect(r.body.purge_after - r.body.deactivated_at).to.be.closeTo(7 * DAY, 1e-3);
      // idempotent: the dates do not move
      const again = await admin(server, 'POST', '/gate/admin/deactivate', { tenant_id: t.tenant_id });
      expect(again.body).to.deep.equal(r.body);
      const list = await admin(server, 'GET', '/gate/admin/tenants');
      const row = list.body.tenants.find((x: { tenant_id: string }) => x.tenant_id === t.tenant_id);
      expect(row).to.include({ active: false, purge_after: r.body.purge_after });
      // a deactivated tenant takes no more changes
      expect((await admin(server, 'POST', '/gate/onboard/rotate-key', { tenant_id: t.tenant_id })).status).to.equal(404);
      // its usage stays readable, and its data is kept for the retention period
      const usage = await admin(server, 'GET', `/gate/admin/usage/${t.tenant_id}`);
      expect(usage.body.cus_used).to.equal(1);
      const rows = await readDirectly<{ n: number }>(server.dataDir, 'SELECT COUNT(*) AS n FROM entries WHERE tenant_id = ?', [
        t.tenant_id,
      ]);
      expect(rows[0]!.n).to.equal(1);
    });
  });

  describe('tenants, usage and reload', () => {
    it('lists tenants with plan, namespaces and active, ordered by tenant_id', async () => {
      const r = await admin(server, 'GET', '/gate/admin/tenants');
      expect(r.status).to.equal(200);
      const ids = r.body.tenants.map((t: { tenant_id: string }) => t.tenant_id);
      expect(ids).to.deep.equal([...ids].sort());
      for (const t of r.body.tenants) {
        expect(t).to.have.keys(
          t.active
            ? [
                'tenant_id',
                'plan',
                'namespaces',
                'active',
                'monthly_quota',
                'rate_limit',
                'storage_quota_bytes',
                'created_at',
                ...(t.email ? ['email'] : []),
              ]
            : [
                'tenant_id',
                'plan',
                'namespaces',
                'active',
                'monthly_quota',
                'rate_limit',
                'storage_quota_bytes',
                'created_at',
                'deactivated_at',
                'purge_after',
                ...(t.email ? ['email'] : []),
              ],
        );
      }
    });

    it('usage of all tenants and of one, for the current or a given period', async () => {
      const t = await createTenant(server);
      await http(server.url, 'GET', '/v1/list/default', { headers: tenantHeaders(t) });
      const period = new Date().toISOString().slice(0, 7);
      const all = await admin(server, 'GET', '/gate/admin/usage');
      expect(all.status).to.equal(200);
      expect(all.body.period).to.equal(period);
      const mine = all.body.tenants.find((x: { tenant_id: string }) => x.tenant_id === t.tenant_id);
      expect(mine).to.deep.include({ tenant_id: t.tenant_id, cus_used: 0.1, monthly_quota: 1e9, utilization: 0 });
      const one = await admin(server, 'GET', `/gate/admin/usage/${t.tenant_id}`);
      expect(one.body).to.include({ tenant_id: t.tenant_id, period, cus_used: 0.1, monthly_quota: 1e9 });
      expect(one.body.breakdown).to.have.all.keys(...BREAKDOWN);
      expect(one.body.breakdown.list).to.equal(0.1);
      const past = await admin(server, 'GET', `/gate/admin/usage/${t.tenant_id}?period=2001-01`);
      expect(past.body).to.include({ period: '2001-01', cus_used: 0, utilization: 0 });
      expect(Object.values(past.body.breakdown)).to.deep.equal(BREAKDOWN.map(() => 0));
      const pastAll = await admin(server, 'GET', '/gate/admin/usage?period=2001-01');
      expect(pastAll.body.period).to.equal('2001-01');
      expect(pastAll.body.tenants.every((x: { cus_used: number }) => x.cus_used === 0)).to.equal(true);
      for (const bad of ['2001-13', '2001-1', 'now']) {
        expect((await admin(server, 'GET', `/gate/admin/usage?period=${bad}`)).status).to.equal(400);
      }
    });

    it('reload picks up a tenant written to the database by another process', async () => {
      const id = randomTenantId('ext');
      const key = `tts_${randomBytes(32).toString('base64url')}`;
      const hash = createHash('sha256').update(key).digest('hex');
      await writeDirectly(
        server.dataDir,
        `INSERT INTO gate_tenants (tenant_id, plan, namespaces, active, key_hash, rate_limit_requests, rate_limit_window_s, monthly_quota, created_at)
         VALUES (?, 'builder', '["default","ext"]', 1, ?, 100, 60, 50000, ?)`,
        [id, hash, Date.now() / 1000],
      );
      expect((await http(server.url, 'GET', '/v1/list/ext', { headers: { 'X-Api-Key': key } })).status).to.equal(401);
      const r = await admin(server, 'POST', '/gate/admin/reload');
      expect(r.status).to.equal(200);
      expect(r.body.reloaded).to.equal(true);
      const listed = await admin(server, 'GET', '/gate/admin/tenants');
      expect(r.body.tenants).to.equal(listed.body.tenants.length);
      expect(listed.body.tenants.map((t: { tenant_id: string }) => t.tenant_id)).to.include(id);
      const ok = await http(server.url, 'GET', '/v1/list/ext', { headers: { 'X-Api-Key': key } });
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('x-ratelimit-limit')).to.equal('100');
      // and a change made there (deactivation) takes effect at the next reload
      await writeDirectly(server.dataDir, 'UPDATE gate_tenants SET active = 0 WHERE tenant_id = ?', [id]);
      await admin(server, 'POST', '/gate/admin/reload', {});
      expect((await http(server.url, 'GET', '/v1/list/ext', { headers: { 'X-Api-Key': key } })).status).to.equal(401);
    });

    it('GET /gate/metrics is Prometheus text behind the service key', async () => {
      const r = await admin(server, 'GET', '/gate/metrics');
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^text\/plain/);
      expect(r.text).to.match(/^ttstore_gate_requests_total\{outcome="admitted"\} \d+$/m);
      expect((await http(server.url, 'GET', '/gate/metrics')).status).to.equal(401);
    });
  });
});

describe('gate: compaction of deactivated tenants', () => {
  it("purges a deactivated tenant's data once its retention has passed, keeping the record; active tenants keep theirs", async () => {
    let server = await startServer({ env: { SVC_GATE_RETENTION_DAYS: '0' } });
    const dataDir = server.dataDir;
    try {
      const gone = await createTenant(server);
      const stays = await createTenant(server);
      for (const t of [gone, stays]) {
        const r = await http(server.url, 'POST', '/v1/put', {
          headers: tenantHeaders(t),
          json: { key: 'k', data_b64: Buffer.from('data').toString('base64') },
        });
        expect(r.status).to.equal(200);
      }
      const d = await admin(server, 'POST', '/gate/admin/deactivate', { tenant_id: gone.tenant_id });
      expect(d.body.purge_after).to.equal(d.body.deactivated_at);
      await server.stop();
      server = await startServer({ dataDir, env: { SVC_GATE_RETENTION_DAYS: '0' } }); // the purge runs at start, then hourly
      const count = async (id: string) =>
        (await readDirectly<{ n: number }>(dataDir, 'SELECT COUNT(*) AS n FROM entries WHERE tenant_id = ?', [id]))[0]!.n;
      for (let i = 0; i < 50 && (await count(gone.tenant_id)) > 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await count(gone.tenant_id)).to.equal(0);
      expect(await count(stays.tenant_id)).to.equal(1);
      const rec = await readDirectly<{ purged_at: number | null }>(dataDir, 'SELECT purged_at FROM gate_tenants WHERE tenant_id = ?', [
        gone.tenant_id,
      ]);
      expect(rec[0]!.purged_at).to.be.a('number');
      const list = await admin(server, 'GET', '/gate/admin/tenants');
      expect(list.body.tenants.find((x: { tenant_id: string }) => x.tenant_id === gone.tenant_id)).to.include({ active: false });
      expect((await http(server.url, 'GET', '/v1/get/default/k', { headers: tenantHeaders(stays) })).status).to.equal(200);
    } finally {
      await server.destroy();
      const { rm } = await import('node:fs/promises');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('gate: the generated service key', () => {
  it('without SVC_GATE_ENGINE_SERVICE_KEY, makes one into <data dir>/service.key (0600), logs the path and never the key, keeps it across restarts', async () => {
    const server = await startServer({ env: { SVC_GATE_ENGINE_SERVICE_KEY: '' } });
    const dataDir = server.dataDir;
    try {
      const file = path.join(server.dataDir, 'service.key');
      const key = (await readFile(file, 'utf8')).trim();
      expect(key.length).to.be.at.least(32);
      expect((await stat(file)).mode & 0o777).to.equal(0o600);
      const logs = server.logs.join('\n');
      expect(logs).to.include(file);
      expect(logs).not.to.include(key);
      const ok = await http(server.url, 'GET', '/gate/admin/tenants', { headers: { Authorization: `Bearer ${key}` } });
      expect(ok.status).to.equal(200);
      await server.stop();
      const again = await startServer({ dataDir, env: { SVC_GATE_ENGINE_SERVICE_KEY: '' } });
      try {
        const r = await http(again.url, 'GET', '/gate/admin/tenants', { headers: { Authorization: `Bearer ${key}` } });
        expect(r.status).to.equal(200);
      } finally {
        await again.stop();
      }
    } finally {
      await server.destroy(); // removes dataDir
    }
  });
});
