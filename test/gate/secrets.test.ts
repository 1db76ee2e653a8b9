// No error message or log line echoes a secret (CONTRACT.md section 8), even a malformed one: keys
// that are too short, too long, of the wrong alphabet or shaped like something else are refused with
// problems that never quote them, and the log never holds them.
import { expect } from 'chai';
import { http, startServer, type TestServer } from '../helpers/server.js';
import { createTenant, type CreatedTenant } from '../helpers/tenants.js';

const MALFORMED = [
  'tts_short-but-secret-7f3a',
  `tts_${'B'.repeat(43)}xyz`,
  'not-a-key-but-secret-91c2',
  `secret-${'q'.repeat(4000)}`,
  '{"api_key":"secret-json-5d1e"}',
  'tts_secret with spaces 33b',
  'svc_almost_the_service_key_8e2f',
];

describe('gate: secrets are never echoed, even malformed ones', function () {
  this.timeout(60000);
  let server: TestServer;
  let t: CreatedTenant;

  before(async () => {
    server = await startServer({ env: { SVC_GATE_LOG_LEVEL: 'debug' } });
    t = await createTenant(server);
  });
  after(async () => {
    await server?.destroy(); // unset when the suite was skipped (TTSTORE_TEST_EXTERNAL=1)
  });

  /** The distinctive part of a secret: any 12 characters of it in a text would be a leak. */
  const pieces = (secret: string): string[] => [secret, secret.slice(0, 12), secret.slice(-12)];

  it('malformed tenant and service keys get problems that do not quote them, and the log never holds them', async () => {
    const replies: string[] = [];
    for (const key of MALFORMED) {
      for (const [method, path, headers] of [
        ['GET', '/v1/list/default', { 'X-Api-Key': key }],
        ['GET', '/v1/list/default', { Authorization: `Bearer ${key}` }],
        ['POST', '/v1/serve', { Authorization: `Bearer ${key}`, 'X-Api-Key': key }],
        ['GET', '/gate/admin/tenants', { Authorization: `Bearer ${key}` }],
        ['GET', '/gate/admin/tenants', { 'X-Api-Key': key }],
        ['POST', '/gate/onboard/rotate-key', { Authorization: `Bearer ${key}`, 'X-Request-Id': 'secrets-test' }],
      ] as const) {
        const r = await http(server.url, method, path, {
          headers,
          ...(method === 'POST' ? { json: { key: 'x', tenant_id: t.tenant_id } } : {}),
        });
        expect(r.status, `${method} ${path}`).to.equal(401);
        replies.push(r.text, JSON.stringify([...r.headers]));
      }
    }
    // a valid tenant key on an admin route is refused without being quoted either
    const adminOnly = await http(server.url, 'GET', '/gate/admin/tenants', { headers: { 'X-Api-Key': t.api_key } });
    expect(adminOnly.status).to.equal(403);
    replies.push(adminOnly.text);
    await new Promise((r) => setTimeout(r, 200)); // request lines reach the log REQUEST_LOG_BATCH_MS after their responses
    const logs = server.logs.join('\n');
    for (const secret of [...MALFORMED, t.api_key, server.serviceKey]) {
      for (const piece of pieces(secret)) {
        for (const text of replies) expect(text, 'a reply quotes a key').to.not.include(piece);
        expect(logs, 'the log holds a key').to.not.include(piece);
      }
    }
  });
});
