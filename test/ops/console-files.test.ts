// The web console's files (docs/console.md): the page with a self-only Content-Security-Policy,
// revalidated on every load; the content-hashed assets it names cached for good; nothing else.
// The browser-driven test of the views is test/console/ (npm run test:console).
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { CONSOLE_CSP } from '../../src/routes/console/routes.js';
import { loadConsoleBuild } from '../../src/routes/console/assets.js';

describe('operations: the web console is served as static files', function () {
  let server: TestServer;

  before(async function () {
    if (!loadConsoleBuild()) {
      console.log('    (skipped: the console is not built; npm run build:console)');
      this.skip();
    }
    server = await startServer();
  });

  after(() => server?.destroy());

  it('answers GET /console with the page, a self-only CSP and no-cache, without authentication', async () => {
    const r = await http(server.url, 'GET', '/console');
    expect(r.status).to.equal(200);
    expect(r.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(r.headers.get('content-security-policy')).to.equal(CONSOLE_CSP);
    expect(CONSOLE_CSP).to.include("default-src 'self'").and.include("connect-src 'self'").and.not.include('unsafe');
    expect(r.headers.get('cache-control')).to.equal('no-cache');
    const again = await http(server.url, 'GET', '/console', { headers: { 'If-None-Match': r.headers.get('etag')! } });
    expect(again.status).to.equal(304);
  });

  it('serves every asset the page names with its type, cached for good', async () => {
    const page = (await http(server.url, 'GET', '/console')).text;
    const names = [...page.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(names.some((n) => n.endsWith('.js')) && names.some((n) => n.endsWith('.css')), names.join(' ')).to.be.true;
    for (const name of names) {
      const r = await http(server.url, 'GET', name);
      expect(r.status, name).to.equal(200);
      expect(r.headers.get('content-type'), name).to.match(name.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(r.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    }
  });

  it('answers a name outside the build with a 404 problem, whatever its dots and slashes', async () => {
    for (const p of ['/console/assets/nothing.js', '/console/assets/..%2F..%2Fpackage.json', '/console/assets/%2E%2E%2Findex.html']) {
      const r = await http(server.url, 'GET', p);
      expect(r.status, p).to.equal(404);
      expect(r.body.code, p).to.equal('not_found');
    }
  });

  it('reads no build from a folder without one', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'ttstore-console-'));
    try {
      expect(loadConsoleBuild(empty)).to.equal(null);
    } finally {
      await rm(empty, { recursive: true });
    }
  });
});
