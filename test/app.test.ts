import { expect } from 'chai';
import { requestIdSource } from '../src/http/app.js';
import { http, startServer, type TestServer } from './helpers/server.js';

describe('the service process', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.destroy();
  });

  it('answers GET /gate/health without authentication', async () => {
    const r = await http(server.url, 'GET', '/gate/health');
    expect(r.status).to.equal(200);
    expect(r.body.status).to.equal('ok');
    expect(r.body.db).to.equal('ok');
    expect(r.body.engine.backend).to.be.oneOf(['cpu', 'cuda']);
    expect(r.body.engine.blas).to.be.a('string').and.not.empty;
    expect(r.body.version).to.match(/^\d+\.\d+\.\d+/);
  });

  it('answers an unknown route with a 404 problem', async () => {
    const r = await http(server.url, 'GET', '/nope');
    expect(r.status).to.equal(404);
    expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(r.body).to.include({ status: 404, code: 'not_found', type: '/problems/not_found' });
  });

  it('answers a known path with a wrong method with 405 and Allow', async () => {
    const r = await http(server.url, 'DELETE', '/gate/health');
    expect(r.status).to.equal(405);
    expect(r.body.code).to.equal('method_not_allowed');
    expect(r.headers.get('allow')).to.include('GET');
  });

  it('echoes a given X-Request-Id and generates one otherwise', async () => {
    const a = await http(server.url, 'GET', '/gate/health', { headers: { 'X-Request-Id': 'abc-123' } });
    expect(a.headers.get('x-request-id')).to.equal('abc-123');
    const b = await http(server.url, 'GET', '/gate/health');
    expect(b.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const c = await http(server.url, 'GET', '/gate/health');
    expect(c.headers.get('x-request-id'))
      .to.match(/^[0-9a-f-]{36}$/)
      .and.not.equal(b.headers.get('x-request-id'));
  });

  it('generates request ids that do not repeat, in the UUID shape, and differ between processes', () => {
    const a = requestIdSource();
    const b = requestIdSource();
    const ids = new Set<string>();
    for (let i = 0; i < 10000; i++) ids.add(a());
    expect(ids.size).to.equal(10000);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(ids.has(b())).to.equal(false);
  });

  it('exits 0 on SIGTERM', async () => {
    const other = await startServer();
    const code = await other.stop('SIGTERM');
    await other.destroy();
    expect(code).to.equal(0);
  });
});

describe('configuration', () => {
  it('refuses to start on a bad value and names the variable', async () => {
    try {
      await startServer({ env: { SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS: 'lots' } });
      expect.fail('server started');
    } catch (err) {
      expect(String(err)).to.include('SVC_GATE_DEFAULT_RATE_LIMIT_REQUESTS');
    }
  });
});
