// What an operator relies on: one structured log line per request, engine timings at debug, no
// credential anywhere in the logs, and Prometheus metrics at /gate/metrics behind the service key.
import { expect } from 'chai';
import { http, logRecords, startServer, type TestServer } from '../helpers/server.js';
import { admin, createTenant, type CreatedTenant } from '../helpers/tenants.js';
import { b64, npyOf, smoothField } from '../storage/helpers.js';

/** The value of a sample in Prometheus text format (labels as written by prom-client, sorted as given). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe('operations: logs and metrics', function () {
  this.timeout(60000);
  let server: TestServer;
  let a: CreatedTenant;
  let b: CreatedTenant;
  let starter: CreatedTenant;
  let rotatedAway: string;
  const WRONG_KEY = `tts_${'A'.repeat(43)}`;
  const N = 64;

  before(async () => {
    server = await startServer({ env: { SVC_GATE_LOG_LEVEL: 'debug' } });
    a = await createTenant(server);
    b = await createTenant(server);
    starter = await createTenant(server, { plan: 'starter' });
    // Rotate a's key: both the old and the new one must stay out of the logs.
    rotatedAway = a.api_key;
    const rot = await admin(server, 'POST', '/gate/onboard/rotate-key', { tenant_id: a.tenant_id });
    expect(rot.status).to.equal(200);
    a = { ...a, api_key: rot.body.api_key };

    const field = smoothField(N);
    const put = await http(server.url, 'POST', '/v1/put', {
      json: { key: 'smooth', data_b64: b64(npyOf('float64', [N, N], field)) },
      headers: { 'X-Api-Key': a.api_key, 'X-Request-Id': 'req-put-1' },
    });
    expect(put.status).to.equal(200);
    expect(put.body.compressed).to.equal(true);
    const put2 = await http(server.url, 'POST', '/v1/put', {
      json: {
        key: 'smooth-2',
        data_b64: b64(
          npyOf(
            'float64',
            [N, N],
            Float64Array.from(field, (x) => 2 * x),
          ),
        ),
      },
      headers: { Authorization: `Bearer ${a.api_key}` },
    });
    expect(put2.status).to.equal(200);
    const sim = await http(server.url, 'POST', '/v1/query/similarity', {
      json: { key_a: 'smooth', key_b: 'smooth-2' },
      headers: { 'X-Api-Key': a.api_key },
    });
    expect(sim.status).to.equal(200);
    expect(
      (await http(server.url, 'GET', '/v1/get/default/smooth', { headers: { Authorization: `Bearer ${b.api_key}` } })).status,
    ).to.equal(404);
    expect((await http(server.url, 'GET', '/v1/list/default', { headers: { 'X-Api-Key': rotatedAway } })).status).to.equal(401);
    expect((await http(server.url, 'GET', '/v1/list/default', { headers: { 'X-Api-Key': WRONG_KEY } })).status).to.equal(401);
    expect((await http(server.url, 'GET', '/gate/admin/tenants', { headers: { Authorization: `Bearer ${b.api_key}` } })).status).to.equal(
      403,
    );
    expect((await http(server.url, 'GET', '/gate/admin/tenants', { headers: { Authorization: `Bearer ${WRONG_KEY}` } })).status).to.equal(
      401,
    );
    // The starter plan admits 10 requests a minute: the 11th is a 429.
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      statuses.push((await http(server.url, 'GET', '/v1/list/default', { headers: { 'X-Api-Key': starter.api_key } })).status);
    }
    expect(statuses.filter((s) => s === 429)).to.have.length(1);
  });

  after(async () => {
    await server.destroy();
  });

  it('writes one line per request with request id, tenant, route template, status, duration and CU', () => {
    const line = logRecords(server).find((l) => l.msg === 'request' && l.requestId === 'req-put-1');
    expect(line, 'request line of the put').to.not.equal(undefined);
    expect(line).to.include({ tenant_id: a.tenant_id, method: 'POST', route: '/v1/put', status: 200, cu: 1 });
    expect(line!.duration_ms).to.be.a('number').and.to.be.greaterThan(0);
    const get = logRecords(server).find((l) => l.msg === 'request' && l.route === '/v1/get/:namespace/:key');
    expect(get, 'a get is logged by its template, not its path').to.include({ status: 404, cu: 0, tenant_id: b.tenant_id });
  });

  it('logs engine timings at debug level', () => {
    const compress = logRecords(server).filter((l) => l.msg === 'engine call' && l.engine_op === 'compress');
    expect(compress.length).to.be.at.least(2);
    expect(compress[0]!.duration_ms).to.be.a('number');
    expect(compress[0]!.bytes_in).to.equal(N * N * 8);
  });

  it('never writes an API key or the service key to the log, in any form', () => {
    const all = server.logs.join('\n');
    expect(all.length).to.be.greaterThan(1000);
    for (const secret of [a.api_key, b.api_key, starter.api_key, rotatedAway, WRONG_KEY, server.serviceKey]) {
      expect(all, 'a key in the log').to.not.include(secret);
      // Also no recognisable part of it (a key sliced or re-encoded would still leak).
      expect(all).to.not.include(secret.slice(4, 24));
    }
  });

  it('serves Prometheus metrics to the service key only', async () => {
    expect((await http(server.url, 'GET', '/gate/metrics')).status).to.equal(401);
    expect((await http(server.url, 'GET', '/gate/metrics', { headers: { 'X-Api-Key': a.api_key } })).status).to.equal(403);
    const r = await http(server.url, 'GET', '/gate/metrics', { headers: { Authorization: `Bearer ${server.serviceKey}` } });
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  });

  it('counts requests by route template and status, CU by operation, rate-limit rejections and engine work', async () => {
    const r = await http(server.url, 'GET', '/gate/metrics', { headers: { Authorization: `Bearer ${server.serviceKey}` } });
    const text = r.text;
    for (const family of [
      'ttstore_http_requests_total',
      'ttstore_http_request_duration_seconds',
      'ttstore_gate_requests_total',
      'ttstore_gate_denied_total',
      'ttstore_gate_cu_charged_total',
      'ttstore_gate_tenants',
      'ttstore_engine_duration_seconds',
      'ttstore_engine_bytes_total',
      'ttstore_engine_compression_ratio',
      'ttstore_core_cache_bytes',
      'ttstore_core_cache_hit_ratio',
      'ttstore_core_cache_hits_total',
      'ttstore_core_cache_misses_total',
      'ttstore_jobs_queued',
      'ttstore_jobs_running',
      'ttstore_sqlite_bytes',
      'ttstore_blob_store_bytes',
      'ttstore_blob_read_bytes_total',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(text, family).to.match(new RegExp(`^# TYPE ${family} `, 'm'));
    }
    expect(sample(text, 'ttstore_http_requests_total', { method: 'POST', route: '/v1/put', status: '200' })).to.equal(2);
    expect(sample(text, 'ttstore_http_request_duration_seconds_count', { method: 'POST', route: '/v1/put', status: '200' })).to.equal(2);
    expect(sample(text, 'ttstore_http_requests_total', { method: 'GET', route: '/v1/list/:namespace', status: '429' })).to.equal(1);
    expect(sample(text, 'ttstore_gate_requests_total', { outcome: 'rate_limited' })).to.equal(1);
    expect(sample(text, 'ttstore_gate_requests_total', { outcome: 'unauthenticated' })).to.equal(2);
    expect(sample(text, 'ttstore_gate_cu_charged_total', { operation: 'put' })).to.equal(2);
    expect(sample(text, 'ttstore_gate_cu_charged_total', { operation: 'similarity' })).to.equal(1);
    expect(sample(text, 'ttstore_gate_cu_charged_total', { operation: 'list' })).to.be.closeTo(1.0, 1e-9); // 10 admitted lists
    expect(sample(text, 'ttstore_gate_tenants', { state: 'active' })).to.equal(3);
    expect(sample(text, 'ttstore_engine_duration_seconds_count', { op: 'compress' })).to.equal(2);
    expect(sample(text, 'ttstore_engine_bytes_total', { op: 'compress', direction: 'in' })).to.equal(2 * N * N * 8);
    expect(sample(text, 'ttstore_engine_compression_ratio_count')).to.equal(2);
    expect(sample(text, 'ttstore_core_cache_misses_total')).to.equal(2); // the similarity loaded both operands
    expect(sample(text, 'ttstore_core_cache_bytes')).to.be.greaterThan(0);
    expect(sample(text, 'ttstore_jobs_queued')).to.equal(0);
    expect(sample(text, 'ttstore_build_info', { version: (await http(server.url, 'GET', '/gate/health')).body.version })).to.equal(1);
    expect(sample(text, 'ttstore_sqlite_bytes')).to.be.greaterThan(0);
    expect(sample(text, 'ttstore_blob_store_bytes')).to.be.greaterThan(0);
    // No label carries a tenant or a key.
    for (const t of [a, b, starter]) {
      expect(text).to.not.include(t.tenant_id);
      expect(text).to.not.include(t.api_key);
    }
  });
});
