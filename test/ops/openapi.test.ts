// The API reference: the OpenAPI document lists exactly the routes the router serves, is valid
// OpenAPI 3.1, is served without auth at /openapi.json (and as a page at /docs), and the committed
// docs/openapi.json is the current one.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/runtime/log.js';
import { startServer as startInProcess, type RunningServer } from '../../src/server.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { ENDPOINTS } from '../../src/routes/index.js';
import { koaPath } from '../../src/http/endpoint.js';
import { http } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const METHODS = ['get', 'post', 'delete', 'put', 'patch'];

describe('operations: the API reference', function () {
  this.timeout(30000);
  let server: RunningServer;
  let dataDir: string;
  const doc = openApiDocument(ENDPOINTS) as { openapi: string; paths: Record<string, Record<string, any>> };

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-openapi-'));
    const config = loadConfig({
      SVC_GATE_PORT: '0',
      SVC_GATE_DATA_DIR: dataDir,
      SVC_GATE_ENGINE_SERVICE_KEY: 'svc_openapi_test_key_0123456789',
    });
    server = await startInProcess(config, createLogger('silent'));
  });
  after(async () => {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('documents every route the router serves, and nothing else', () => {
    const served = new Set<string>();
    for (const layer of server.router.stack) {
      for (const m of layer.methods) if (m !== 'HEAD') served.add(`${m} ${String(layer.path)}`);
    }
    const documented = new Set<string>();
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const m of Object.keys(item)) if (METHODS.includes(m)) documented.add(`${m.toUpperCase()} ${koaPath(p)}`);
    }
    expect([...served].sort()).to.deep.equal([...documented].sort());
    expect(served.size).to.be.at.least(28);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).to.equal('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc as never);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).to.deep.equal([]);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('describes each request body with the schema that validates it', () => {
    const submit = doc.paths['/v1/simulation/submit']!.post.requestBody.content['application/json'].schema;
    expect(submit.required).to.deep.equal(['solver', 'params']);
    expect(submit.oneOf.map((v: { title: string }) => v.title)).to.deep.equal([
      'poisson_2d',
      'navier_stokes_2d',
      'euler_2d',
      'helmholtz_3d',
    ]);
    const ns = submit.oneOf[1].properties.params;
    expect(ns.required).to.deep.equal(['n_bits', 'reynolds', 'steps', 'dt']);
    expect(ns.properties.n_bits).to.include({ type: 'integer', minimum: 9, maximum: 12 });
    expect(ns.properties.max_rank.default).to.equal(64);
    const topk = doc.paths['/v1/query/topk']!.post.requestBody.content['application/json'].schema;
    expect(topk.properties.k).to.include({ minimum: 1, maximum: 1000, default: 10 });
    expect(topk.additionalProperties).to.equal(false);
    const list = doc.paths['/v1/list/{namespace}']!.get.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(list.schema).to.include({ type: 'integer', minimum: 1, maximum: 10000, default: 1000 });
    const put = doc.paths['/v1/put']!.post;
    expect(Object.keys(put.requestBody.content)).to.deep.equal(['application/json', 'application/x-npy', 'application/octet-stream']);
    expect(put.responses['429'].content['application/problem+json'].schema.$ref).to.equal('#/components/schemas/Problem');
    expect(put.security).to.deep.equal([{ apiKey: [] }, { bearerApiKey: [] }]);
    expect(doc.paths['/gate/metrics']!.get.security).to.deep.equal([{ serviceKey: [] }]);
  });

  it('documents every field the answers carry', async () => {
    /** Paths of fields in `body` that the documented schema does not name (where it names any). */
    const undocumented = (body: unknown, schema: any, at = ''): string[] => {
      if (Array.isArray(body)) return schema?.items ? body.flatMap((v, i) => undocumented(v, schema.items, `${at}[${i}]`)) : [];
      if (body === null || typeof body !== 'object' || !schema?.properties) return [];
      return Object.entries(body).flatMap(([k, v]) =>
        k in schema.properties ? undocumented(v, schema.properties[k], `${at}.${k}`) : [`${at}.${k}`],
      );
    };
    const answer = (p: string, method: string, status: number) =>
      doc.paths[p]![method].responses[String(status)].content['application/json'].schema;
    const svc = { Authorization: 'Bearer svc_openapi_test_key_0123456789' };
    const created = await http(server.url, 'POST', '/gate/onboard/create', {
      json: { tenant_id: 'docs-check', email: 'a@b.c' },
      headers: svc,
    });
    const key = { 'X-Api-Key': created.body.api_key };
    const values = new Float64Array(4096).map((_, i) => Math.sin(i / 100));
    const header = Buffer.from("{'descr': '<f8', 'fortran_order': False, 'shape': (4096,), }".padEnd(117) + '\n');
    const npy = Buffer.concat([
      Buffer.from([0x93]),
      Buffer.from('NUMPY'),
      Buffer.from([1, 0, header.length, 0]),
      header,
      Buffer.from(values.buffer),
    ]);
    const calls: Array<[string, string, string, number, { json?: unknown; headers: Record<string, string> }]> = [
      ['POST', '/gate/onboard/create', '/gate/onboard/create', 201, { json: { tenant_id: 'docs-check-2' }, headers: svc }],
      [
        'POST',
        '/v1/put',
        '/v1/put',
        200,
        { json: { key: 'wave', data_b64: npy.toString('base64'), metadata: { kind: 'wave' } }, headers: key },
      ],
      ['GET', '/v1/get/default/wave', '/v1/get/{namespace}/{key}', 200, { headers: key }],
      ['POST', '/v1/serve', '/v1/serve', 200, { json: { key: 'wave' }, headers: key }],
      ['GET', '/v1/list/default', '/v1/list/{namespace}', 200, { headers: key }],
      ['POST', '/v1/query/search', '/v1/query/search', 200, { json: { filters: { kind: 'wave' } }, headers: key }],
      ['GET', '/gate/admin/tenants', '/gate/admin/tenants', 200, { headers: svc }],
      ['GET', '/gate/admin/usage/docs-check', '/gate/admin/usage/{tenant_id}', 200, { headers: svc }],
      ['GET', '/gate/health', '/gate/health', 200, { headers: {} }],
      ['DELETE', '/v1/delete/default/wave', '/v1/delete/{namespace}/{key}', 200, { headers: key }],
    ];
    expect(undocumented(created.body, answer('/gate/onboard/create', 'post', 201))).to.deep.equal([]);
    for (const [method, url, template, status, init] of calls) {
      const r = await http(server.url, method, url, init);
      expect(r.status, `${method} ${url}: ${r.text}`).to.equal(status);
      expect(undocumented(r.body, answer(template, method.toLowerCase(), status)), `${method} ${url}`).to.deep.equal([]);
    }
  });

  it('serves /openapi.json and /docs without authentication', async () => {
    const json = await http(server.url, 'GET', '/openapi.json');
    expect(json.status).to.equal(200);
    expect(json.headers.get('content-type')).to.match(/^application\/json/);
    expect(json.body).to.deep.equal(doc);
    const page = await http(server.url, 'GET', '/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.text).to.include('<code>/v1/query/topk_vector</code>');
    expect(page.text).to.include('helmholtz_3d');
    // Self-contained: nothing loaded from elsewhere.
    expect(page.text).to.not.match(/<script|<link|src="http|href="http/);
  });

  it('answers GET / with a pointer to /docs and /openapi.json, without authentication', async () => {
    const root = await http(server.url, 'GET', '/');
    expect(root.status).to.equal(200);
    expect(root.headers.get('content-type')).to.match(/^application\/json/);
    expect(root.body).to.include({ service: 'ttstore', docs: '/docs', openapi: '/openapi.json' });
    expect(root.body.version).to.be.a('string');
    const schema = doc.paths['/']!.get.responses['200'].content['application/json'].schema;
    expect(Object.keys(root.body).sort()).to.deep.equal(Object.keys(schema.properties).sort());
    expect((await http(server.url, 'GET', root.body.docs)).status).to.equal(200);
  });

  it('is committed current in docs/openapi.json (npm run build:openapi)', async () => {
    const committed = JSON.parse(await readFile(path.join(ROOT, 'docs', 'openapi.json'), 'utf8'));
    expect(committed).to.deep.equal(doc);
  });
});
