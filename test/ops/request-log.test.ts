// The request line is built without pino's object walk; it must read exactly as pino's would.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createLogger, formatRequestLine, type RequestRecord } from '../../src/runtime/log.js';

function pinoLine(r: RequestRecord): string {
  let out = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      out += String(chunk);
      cb();
    },
  });
  const log = createLogger('info', sink);
  log.info(
    {
      requestId: r.requestId,
      tenant_id: r.tenantId,
      method: r.method,
      route: r.route,
      status: r.status,
      duration_ms: r.durationMs,
      cu: r.cu,
    },
    'request',
  );
  return out;
}

describe('request log line', () => {
  const cases: RequestRecord[] = [
    { requestId: 'req-1', tenantId: 'acme', method: 'GET', route: '/v1/get/:namespace/:key', status: 200, durationMs: 0.123, cu: 0.1 },
    {
      requestId: '0b4f5f1e-1a2b-4c3d-8e9f-0123456789ab',
      tenantId: undefined,
      method: 'DELETE',
      route: null,
      status: 404,
      durationMs: 12,
      cu: 0,
    },
    { requestId: 'q"uote\\', tenantId: 'ten\u0001ant', method: 'POST', route: '/v1/put', status: 500, durationMs: NaN, cu: 1.5 },
  ];
  for (const r of cases) {
    it(`reads as pino's line for ${JSON.stringify(r)}`, () => {
      const want = pinoLine(r);
      const got = formatRequestLine(r);
      // the timestamp is shared within a millisecond; compare everything else exactly
      const strip = (s: string) => s.replace(/,"time":"[^"]*"/, '');
      expect(strip(got)).to.equal(strip(want));
      expect(JSON.parse(got)).to.have.property('time').that.is.a('string');
    });
  }
});

describe('request log output', () => {
  const LOG_JS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/runtime/log.js');

  /**
   * Runs `body` in a child process where `lines` is the request log of a logger writing to a file,
   * `line(i)` logs request r<i>, `writes` counts the log's writes (sonic-boom looks fs.write up at each
   * call) and `written()` counts the lines the file holds so far. Gives the child's stdout and the
   * request ids in the file once it has exited.
   */
  function inChild(body: string): { stdout: string; ids: string[] } {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ttstore-log-'));
    try {
      const file = path.join(dir, 'out.log');
      const script = `
        import fs from 'node:fs';
        import { pino } from 'pino';
        const write = fs.write;
        let writes = 0;
        fs.write = (...a) => { writes++; return write(...a); };
        const { createLogger, requestLog, REQUEST_LOG_BATCH_MS } = await import(${JSON.stringify(LOG_JS)});
        const lines = requestLog(createLogger('info', pino.destination({ dest: ${JSON.stringify(file)}, sync: true })));
        const line = (i) => lines.write({ requestId: 'r' + i, tenantId: 't', method: 'GET', route: '/x', status: 200, durationMs: 0.5, cu: 0.1 });
        const written = () => fs.readFileSync(${JSON.stringify(file)}, 'utf8').split('\\n').length - 1;
        ${body}`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: path.dirname(LOG_JS), encoding: 'utf8' });
      expect(r.status, r.stderr).to.equal(0);
      const ids = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { requestId: string }).requestId);
      return { stdout: r.stdout, ids };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const requests = (n: number) => Array.from({ length: n }, (_, i) => 'r' + i);

  it('hands a trickle of lines (one a turn of the event loop) over in a few writes, in order, none lost', () => {
    const { stdout, ids } = inChild(`
      for (let i = 0; i < 40; i++) {
        line(i);
        await new Promise((r) => setTimeout(r, 1));
      }
      await new Promise((r) => setTimeout(r, 3 * REQUEST_LOG_BATCH_MS + 50));
      console.log(JSON.stringify({ writes, before: written() }));`);
    const { writes, before } = JSON.parse(stdout) as { writes: number; before: number };
    // Written before the process ends (not by the exit flush), all of them, in order.
    expect(before).to.equal(40);
    expect(ids).to.deep.equal(requests(40));
    expect(writes).to.be.within(1, 13);
  });

  it('loses no line when the process exits in the same turn as it logged them', () => {
    const { ids } = inChild(`
      for (let i = 0; i < 5000; i++) line(i);
      process.exit(0);`);
    expect(ids).to.deep.equal(requests(5000));
  });
});
