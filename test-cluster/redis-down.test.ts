// A node whose Redis goes away refuses /v1 requests with 503 and Retry-After (never unlimited, never
// a 500), and admits them again once Redis is back. Its own redis-server, so the shared one stays up.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { http, startServer, type TestServer } from '../test/helpers/server.js';
import { createTenant, tenantHeaders } from '../test/helpers/tenants.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function startRedis(port: number): Promise<ChildProcess> {
  const p = spawn('redis-server', ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => resolve(true)).on('error', () => resolve(false));
      c.unref();
      setTimeout(() => c.destroy(), 100);
    });
    if (up) return p;
    await sleep(100);
  }
  throw new Error('redis-server did not start');
}

describe('cluster: a node whose Redis is unreachable', function () {
  this.timeout(60_000);
  let port: number;
  let redis: ChildProcess | undefined;
  let node: TestServer | undefined;

  before(async () => {
    port = await freePort();
    redis = await startRedis(port);
    node = await startServer({ env: { SVC_GATE_REDIS_URL: `redis://127.0.0.1:${port}` } });
  });
  after(async () => {
    await node?.destroy();
    redis?.kill('SIGKILL');
  });

  it('answers 503 service_unavailable with Retry-After while Redis is down, and 200 once it is back', async () => {
    const t = await createTenant(node!);
    const list = () => http(node!.url, 'GET', '/v1/list/default', { headers: tenantHeaders(t) });
    expect((await list()).status).to.equal(200);

    redis!.kill('SIGKILL');
    await once(redis!, 'exit');
    const r = await list();
    expect(r.status).to.equal(503);
    expect(r.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(r.body.code).to.equal('service_unavailable');
    expect(r.headers.get('retry-after')).to.equal('1');
    expect(r.body.retry_after_s).to.equal(1);

    redis = await startRedis(port);
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await list()).status;
      if (status !== 200) await sleep(100);
    }
    expect(status).to.equal(200);
  });
});
