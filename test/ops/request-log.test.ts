// The request line is built without pino's object walk; it must read exactly as pino's would.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger, formatRequestLine, type RequestRecord } from '../../src/log.js';

function pinoLine(r: RequestRecord): string {
  let out = '';
  const sink = new Writable({ write(chunk, _enc, cb) { out += String(chunk); cb(); } });
  const log = createLogger('info', sink);
  log.info({
    requestId: r.requestId, tenant_id: r.tenantId, method: r.method, route: r.route,
    status: r.status, duration_ms: r.durationMs, cu: r.cu,
  }, 'request');
  return out;
}

describe('request log line', () => {
  const cases: RequestRecord[] = [
    { requestId: 'req-1', tenantId: 'acme', method: 'GET', route: '/v1/get/:namespace/:key', status: 200, durationMs: 0.123, cu: 0.1 },
    { requestId: '0b4f5f1e-1a2b-4c3d-8e9f-0123456789ab', tenantId: undefined, method: 'DELETE', route: null, status: 404, durationMs: 12, cu: 0 },
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
