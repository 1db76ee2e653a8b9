// Graceful shutdown: on SIGTERM the server stops accepting, lets the requests in flight finish (within
// SVC_GATE_SHUTDOWN_GRACE_S), closes its stores and exits 0; what it acknowledged is on disk.
import http from 'node:http';
import { expect } from 'chai';
import { startServer, http as call, type TestServer } from '../helpers/server.js';
import { createTenant } from '../helpers/tenants.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A binary put whose body trickles in: `chunks` pieces of `chunkBytes`, one every `everyMs`. `started`
 * resolves once the headers and the first chunk are out; `done` with the status and body.
 */
function slowPut(url: string, apiKey: string, key: string, chunks: number, chunkBytes: number, everyMs: number) {
  let markStarted!: () => void;
  const started = new Promise<void>((r) => (markStarted = r));
  const done = new Promise<{ status: number; body: any; connection: string | undefined }>((resolve, reject) => {
    const req = http.request(
      `${url}/v1/put?key=${encodeURIComponent(key)}`,
      {
        method: 'POST',
        agent: false,
        headers: { 'X-Api-Key': apiKey, 'Content-Type': 'application/octet-stream', 'Content-Length': String(chunks * chunkBytes) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text), connection: res.headers.connection }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    void (async () => {
      for (let i = 0; i < chunks; i++) {
        req.write(Buffer.alloc(chunkBytes, i + 1));
        if (i === 0) {
          req.flushHeaders();
          markStarted();
        }
        await sleep(everyMs);
      }
      req.end();
    })();
  });
  return { started, done };
}

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/gate/health`);
    return false;
  } catch (err) {
    return /ECONNREFUSED/.test(String((err as { cause?: unknown }).cause ?? err));
  }
}

describe('operations: graceful shutdown', function () {
  this.timeout(60000);

  it('writes the log line of every request it answered before it exits, even when stopped right after a burst', async () => {
    const server = await startServer();
    try {
      const N = 300;
      const statuses = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          call(server.url, 'GET', '/gate/health', { headers: { 'X-Request-Id': `burst-${i}` } }).then((r) => r.status),
        ),
      );
      expect(statuses.every((s) => s === 200)).to.equal(true);
      // SIGTERM at once: lines of the last turns may still be in the logger's batch
      const closed = new Promise((r) => server.proc.once('close', r));
      expect(await server.stop('SIGTERM')).to.equal(0);
      await closed; // every byte of its output read
      const ids = new Set(
        server.logs.flatMap((l) => {
          try {
            const rec = JSON.parse(l) as { msg?: string; requestId?: string };
            return rec.msg === 'request' && rec.requestId?.startsWith('burst-') ? [rec.requestId] : [];
          } catch {
            return [];
          }
        }),
      );
      expect(ids.size).to.equal(N);
    } finally {
      await server.destroy();
    }
  });

  it('with SVC_GATE_SHUTDOWN_DELAY_S, on SIGTERM /gate/health answers 503 "draining" while other requests are served, then it stops', async () => {
    const server = await startServer({ env: { SVC_GATE_SHUTDOWN_DELAY_S: '2' } });
    try {
      const t = await createTenant(server);
      const headers = { 'X-Api-Key': t.api_key };
      expect((await call(server.url, 'POST', '/v1/put', { json: { key: 'd', data_b64: 'AAAA' }, headers })).status).to.equal(200);
      expect((await call(server.url, 'GET', '/gate/health')).body.status).to.equal('ok');
      const signalled = Date.now();
      const exited = server.stop('SIGTERM');
      await sleep(300);
      const health = await call(server.url, 'GET', '/gate/health');
      expect([health.status, health.body.status]).to.deep.equal([503, 'draining']);
      expect((await call(server.url, 'GET', '/v1/get/default/d', { headers })).status).to.equal(200);
      expect((await call(server.url, 'POST', '/v1/put', { json: { key: 'd', data_b64: 'AAAA' }, headers })).status).to.equal(200);
      expect(await exited).to.equal(0);
      expect(Date.now() - signalled).to.be.at.least(2000);
      expect(await refused(server.url)).to.equal(true);
    } finally {
      await server.destroy();
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal} finishes every request in flight, refuses new connections and exits 0 within the grace`, async () => {
      const GRACE_S = 10;
      const server: TestServer = await startServer({ env: { SVC_GATE_SHUTDOWN_GRACE_S: String(GRACE_S) } });
      try {
        const t = await createTenant(server);
        // Four uploads, each ~1.5 s long, all in flight when the signal arrives.
        const puts = Array.from({ length: 4 }, (_, i) => slowPut(server.url, t.api_key, `slow-${i}`, 6, 16 * 1024, 250));
        await Promise.all(puts.map((p) => p.started));
        await sleep(200);
        const signalled = Date.now();
        const exited = server.stop(signal);
        // The listening socket closes at once: a new connection is refused while the uploads go on.
        let refusedSoon = false;
        for (let i = 0; i < 20 && !refusedSoon; i++) {
          refusedSoon = await refused(server.url);
          if (!refusedSoon) await sleep(50);
        }
        expect(refusedSoon, 'new connections refused during shutdown').to.equal(true);

        const results = await Promise.all(puts.map((p) => p.done));
        for (const [i, r] of results.entries()) {
          expect(r.status, `upload ${i}`).to.equal(200);
          expect(r.body).to.include({ key: `slow-${i}`, kind: 'blob', original_bytes: 6 * 16 * 1024 });
          expect(r.connection, 'a response during shutdown closes its connection').to.equal('close');
        }
        const code = await exited;
        expect(code).to.equal(0);
        expect(Date.now() - signalled).to.be.below(GRACE_S * 1000);
        const lines = server.logs.join('\n');
        expect(lines).to.include('"msg":"shutting down');
        expect(lines).to.include('"msg":"stopped"');

        if (signal === 'SIGINT') return;
        // What was acknowledged is durable: a restart on the same data serves every upload.
        const again = await startServer({ dataDir: server.dataDir });
        try {
          for (let i = 0; i < 4; i++) {
            const r = await call(again.url, 'GET', `/v1/get/default/slow-${i}`, { headers: { 'X-Api-Key': t.api_key } });
            expect(r.status).to.equal(200);
          }
        } finally {
          await again.stop();
        }
      } finally {
        await server.destroy();
      }
    });
  }
});
