// Fuzzing JSON bodies through every check the server makes on them (CONTRACT.md section 8): the reader
// that parses a body as it arrives (depth, structure, array data), the request schemas, the metadata and filters
// bounds and the canonical JSON that indexes them. Thousands of random and mutated documents from a
// seeded source: each is accepted or refused with a 400 or 413 ProblemError with a short message,
// never another throw, never a hang; the scan's depth verdict agrees with a plain reference, and so
// do the metadata bounds. Then a few hundred of them against a real server: never a 5xx.
import { expect } from 'chai';
import { createBody } from '../../src/routes/admin/endpoints.js';
import { searchBody, topkBody, topkVectorBody } from '../../src/routes/query/endpoints.js';
import { putBody, serveBody } from '../../src/routes/storage/endpoints.js';
import { canonicalJson } from '../../src/store/filters.js';
import { validateMetadata } from '../../src/entries/metadata.js';
import { ProblemError } from '../../src/http/errors.js';
import { BODY_MAX_DEPTH, JSON_BODY_BYTES, JSON_MAX_DEPTH, METADATA_MAX_BYTES, METADATA_MAX_KEYS } from '../../src/limits/input.js';
import { filterPairs } from '../../src/store/filters.js';
import { parseSubmit } from '../../src/routes/simulation/routes.js';
import type { ObjectSchema } from '../../src/http/schema/types.js';
import { parseBody } from '../../src/http/schema/validate.js';
import { dataPathsOf } from '../../src/http/body.js';
import { canonical, randomCuts, readInChunks, readJson, textDepth } from '../helpers/json-bodies.js';
import { prng, type Prng } from '../helpers/prng.js';
import { http } from '../helpers/server.js';
import { storageSuite } from '../storage/helpers.js';

const SEED = 0x19_0032;
const STRING_CHARS = 'ab"\\/\n\t\u0000\u001f\u00e9\u2028\ud83d\ude00{}[]:,';

/** A random JSON value at most `depth` levels deep. */
function value(r: Prng, depth: number): unknown {
  if (depth <= 0 || r.chance(0.35)) {
    return r.pick([
      () => r.int(-1e6, 1e6),
      () => r.next() * 1e9,
      () => r.chance(0.5),
      () => null,
      () => r.text(STRING_CHARS, r.int(0, 12)),
      () => '',
    ])();
  }
  const n = r.int(0, depth > 4 ? 1 : 3); // narrow when deep: the tree stays small
  if (r.chance(0.5)) return Array.from({ length: n }, () => value(r, depth - 1));
  return Object.fromEntries(Array.from({ length: n }, () => [r.text('abcxyz_"\\é', r.int(0, 6)), value(r, depth - 1)]));
}

/** A chain of `depth` objects or arrays around a scalar. */
function chain(r: Prng, depth: number): unknown {
  let v: unknown = r.int(0, 9);
  for (let i = 0; i < depth; i++) v = r.chance(0.5) ? [v] : { [r.pick(['a', 'b'])]: v };
  return v;
}

/** Metadata: a few names, sometimes many, nested to around the limit, sometimes long. */
function metadata(r: Prng): unknown {
  const names = r.chance(0.1) ? r.int(METADATA_MAX_KEYS - 2, METADATA_MAX_KEYS + 2) : r.int(0, 6);
  const out: Record<string, unknown> = {};
  for (let i = 0; i < names; i++) {
    out[`n${i}`] = r.pick([
      () => value(r, r.int(0, 5)),
      () => chain(r, r.int(JSON_MAX_DEPTH - 3, JSON_MAX_DEPTH + 2)),
      () => 'x'.repeat(r.chance(0.9) ? r.int(0, 64) : r.int(METADATA_MAX_BYTES - 100, METADATA_MAX_BYTES + 10)),
    ])();
  }
  return r.chance(0.9) ? out : value(r, 3);
}

interface Route {
  path: string;
  schema: ObjectSchema;
  doc(r: Prng): Record<string, unknown>;
}

const routes: Route[] = [
  {
    path: '/v1/put',
    schema: putBody,
    doc: (r) => ({
      key: r.text('kq"', r.int(0, 5)),
      data_b64: 'YmxvYg==',
      metadata: metadata(r),
      domain: r.pick([undefined, 'image', 5, { a: 1 }]),
    }),
  },
  {
    path: '/v1/query/search',
    schema: searchBody,
    doc: (r) => ({
      filters: r.chance(0.8) ? { a: chain(r, r.int(JSON_MAX_DEPTH - 3, JSON_MAX_DEPTH + 2)) } : value(r, 4),
      limit: r.pick([undefined, 1, 10, 0, 10001, 'x']),
      offset: r.pick([undefined, 0, 5, -1]),
    }),
  },
  {
    path: '/v1/query/topk',
    schema: topkBody,
    doc: (r) => ({ query_key: 'q', filters: value(r, r.int(0, 40)), k: r.pick([undefined, 1, 0, 2000]) }),
  },
  {
    path: '/v1/query/topk_vector',
    schema: topkVectorBody,
    doc: (r) => ({ data_b64: r.pick(['', 'AAAA', value(r, 3)]), filters: value(r, 3), metric: r.pick(['cosine', 'nope', value(r, 2)]) }),
  },
  {
    path: '/v1/serve',
    schema: serveBody,
    doc: (r) => ({ key: r.pick(['victim', value(r, 3)]), target: r.pick(['dense', 'cores', 'x', value(r, 4)]), device: value(r, 2) }),
  },
  {
    path: '/gate/onboard/create',
    schema: createBody,
    doc: (r) => ({
      tenant_id: r.pick(['t-1', value(r, 5)]),
      plan: r.pick(['starter', value(r, 3)]),
      namespaces: value(r, 3),
      [r.text('ab', 3)]: value(r, 2),
    }),
  },
  {
    path: '/v1/simulation/submit',
    schema: null as unknown as ObjectSchema,
    doc: (r) => ({ solver: r.pick(['poisson_2d', 'euler_2d', value(r, 40)]), params: value(r, r.int(0, 40)) }),
  },
];

/** The text of `doc`, perhaps broken: a nest of thousands at some place, tokens in or out, a cut. */
function text(r: Prng, doc: Record<string, unknown>): string {
  let t = JSON.stringify(doc);
  for (let m = r.chance(0.5) ? r.int(1, 3) : 0; m > 0; m--) {
    const at = r.int(0, t.length);
    switch (r.int(0, 4)) {
      case 0: {
        const n = r.int(1, 12_000);
        t = `${t.slice(0, at)}${'['.repeat(n)}${r.chance(0.5) ? ']'.repeat(n) : ''}${t.slice(at)}`;
        break;
      }
      case 1:
        t = t.slice(0, at) + r.pick(['"', '\\', '{', '}', '[', ']', ',', ':', '"\\u00', 'null']) + t.slice(at);
        break;
      case 2:
        t = t.slice(0, at);
        break;
      case 3: {
        const n = r.int(1, 5000);
        t = `{"x": ${'{"a":'.repeat(n)}1${'}'.repeat(n)}, ${t.slice(1)}`;
        break;
      }
      default:
        t = t.slice(0, at) + t.slice(at + r.int(1, 3));
    }
  }
  return t;
}

/** The reader's bounds for a route's body, its array data where the route's schema puts it. */
function readerLimits(route: Route) {
  const data = route.schema ? dataPathsOf(route.schema) : null;
  return { maxDepth: BODY_MAX_DEPTH, maxStructureBytes: JSON_BODY_BYTES, ...(data !== null && data !== true ? { data } : {}) };
}

/** What the server does with a body: read it as it arrives (in the given chunks), validate, the metadata and filters walks. */
function accept(route: Route, bytes: Buffer, sizes: number[]): void {
  const obj = readJson(bytes, readerLimits(route), sizes);
  if (route.path === '/v1/simulation/submit') {
    parseSubmit(obj);
    return;
  }
  const v = parseBody(route.schema, obj) as Record<string, any>;
  if (v.filters) filterPairs(v.filters);
  if (v.metadata) for (const x of Object.values(v.metadata)) canonicalJson(x);
}

function expectProblem(err: unknown, label: string): void {
  if (!(err instanceof ProblemError)) throw new Error(`${label}: not a ProblemError: ${(err as Error).stack}`);
  expect(err.status, `${label}: ${err.message.slice(0, 200)}`).to.be.oneOf([400, 413]);
  expect(err.message.length, `${label}: ${err.message.slice(0, 200)}`).to.be.below(1000);
}

describe('JSON bodies under fuzzing: depth, size and names bounded before any recursive walk', function () {
  this.timeout(60000);

  it('3000 random and mutated bodies for seven routes: accepted, or a short 400/413, and the depth verdict agrees with the text', () => {
    const r = prng(SEED);
    const seen = { accepted: 0, refused: 0, deep: 0 };
    let slowest = 0;
    for (let i = 0; i < 3000; i++) {
      const route = r.pick(routes);
      const t = text(r, route.doc(r));
      const bytes = Buffer.from(t);
      const label = `seed ${SEED} case ${i} ${route.path}`;
      const t0 = performance.now();
      // The reading is the same in any chunking.
      const cuts = randomCuts(() => r.next(), bytes.length, 64);
      expect(canonical(readInChunks(bytes, readerLimits(route), cuts)), label).to.equal(
        canonical(readInChunks(bytes, readerLimits(route))),
      );
      try {
        accept(route, bytes, cuts);
        seen.accepted++;
        expect(textDepth(t), label).to.be.at.most(BODY_MAX_DEPTH);
      } catch (err) {
        expectProblem(err, label);
        seen.refused++;
        if (/nests deeper than 35/.test((err as Error).message)) {
          seen.deep++;
          expect(textDepth(t), label).to.be.above(BODY_MAX_DEPTH);
        }
      }
      slowest = Math.max(slowest, performance.now() - t0);
    }
    expect(seen.accepted).to.be.greaterThan(100);
    expect(seen.deep).to.be.greaterThan(100);
    expect(slowest, 'slowest case, ms').to.be.below(250);
  });

  it('metadata is refused exactly when it has more than 256 names, 32 levels or 64 KiB of compact JSON', () => {
    const r = prng(SEED + 1);
    for (let i = 0; i < 2000; i++) {
      const m = metadata(r);
      const label = `seed ${SEED + 1} case ${i}`;
      const isObject = m !== null && typeof m === 'object' && !Array.isArray(m);
      const json = JSON.stringify(m);
      const fits =
        isObject &&
        Object.keys(m).length <= METADATA_MAX_KEYS &&
        textDepth(json) <= JSON_MAX_DEPTH &&
        Buffer.byteLength(json) <= METADATA_MAX_BYTES;
      try {
        validateMetadata(m);
        expect(fits || m === null, label).to.equal(true);
      } catch (err) {
        expectProblem(err, label);
        expect(fits, `${label}: ${(err as Error).message}`).to.equal(false);
      }
    }
  });

  describe('over HTTP', () => {
    const suite = storageSuite();

    it('300 fuzzed bodies to six routes: never a 5xx, every refusal a short problem', async () => {
      const r = prng(SEED + 2);
      const admin = { Authorization: `Bearer ${suite.server.serviceKey}` };
      for (let i = 0; i < 300; i++) {
        const route = r.pick(routes.filter((x) => x.path !== '/v1/simulation/submit'));
        const body = text(r, route.doc(r));
        const reply = await http(suite.server.url, 'POST', route.path, {
          body,
          headers: { 'content-type': 'application/json', ...(route.path.startsWith('/gate') ? admin : { 'X-Api-Key': suite.c.apiKey }) },
        });
        expect(reply.status, `case ${i} ${route.path}: ${reply.text.slice(0, 200)}`).to.be.below(500);
        if (reply.status >= 400) {
          expect(reply.headers.get('content-type')).to.match(/^application\/problem\+json/);
          expect(reply.text.length, `case ${i}`).to.be.below(1200);
        }
      }
      expect((await http(suite.server.url, 'GET', '/gate/health')).status).to.equal(200);
    });
  });
});
