// Fuzzing the .npy reader (CONTRACT.md sections 2 and 8): thousands of random and mutated headers,
// from a seeded source, each either decoded into an array within every bound or refused with a 400
// ProblemError with a short message; never another throw, never a hang. Then a few hundred of them
// as put bodies (binary and JSON) against a real server: never a 5xx.
import { expect } from 'chai';
import { decodeNpy, numel } from '../../src/codec/npy.js';
import { MAX_DIMS } from '../../src/limits/input.js';
import { ITEM_SIZE } from '../../src/engine/types.js';
import { ProblemError } from '../../src/http/errors.js';
import { NPY_MAX_DIM, NPY_MAX_HEADER_BYTES } from '../../src/limits/input.js';
import { prng, type Prng } from '../helpers/prng.js';
import { b64, storageSuite } from './helpers.js';
import { NPY_MAX_ELEMENTS } from './npy-fixtures.js';

const SEED = 0x19_0008;
const DESCRS = [
  '<f8',
  '<f4',
  '<f2',
  '>f8',
  '>i4',
  '<i8',
  '|i1',
  '|u1',
  '<u2',
  '|b1',
  '?',
  '<c16',
  '|O',
  '<U4',
  'f8',
  '=f4',
  '|f8',
  '',
  '<',
  'x',
  '<f8<f8',
];
const TOKENS = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  ':',
  ',',
  "'",
  '"',
  '\\',
  ' ',
  '\n',
  'True',
  'False',
  'None',
  '-',
  '0',
  '9',
  'L',
  '<f8',
  'descr',
  'shape',
  'fortran_order',
];

const ITEM_BYTES: Record<string, number> = { f8: 8, f4: 4, f2: 2, i4: 4, i8: 8, i1: 1, u1: 1, u2: 2, b1: 1 };

/** A shape tuple as NumPy writes it (or not), and the element count when it is a plain small one. */
function shapeText(r: Prng): { text: string; elements: number | null } {
  let elements: number | null = 1;
  const dims = Array.from({ length: r.int(0, 10) }, () => {
    if (r.chance(0.7)) {
      const d = r.int(0, 6);
      elements = elements === null ? null : elements * d;
      return String(d);
    }
    elements = null;
    return r.pick([
      () => String(r.int(0, 100_000)),
      () => String(2 ** r.int(20, 60)),
      () => String(2 ** 40 + r.int(-1, 1)),
      () => `-${r.int(1, 9)}`,
      () => `${r.int(1, 9)}L`,
      () => '1.5',
      () => "'3'",
      () => 'None',
      () => '9'.repeat(r.int(15, 60)),
    ])();
  });
  const open = r.chance(0.85) ? '(' : '[';
  const close = open === '(' ? ')' : ']';
  const text = dims.length === 1 && r.chance(0.7) ? `${open}${dims[0]},${close}` : `${open}${dims.join(', ')}${close}`;
  return { text, elements };
}

/**
 * A header dict: mostly well formed, with random values, order, quoting and extra keys; and the data
 * length that would match it, when there is one.
 */
function headerText(r: Prng): { text: string; dataBytes: number | null } {
  const q = r.chance(0.8) ? "'" : '"';
  const descr = r.pick(DESCRS);
  const shape = shapeText(r);
  const entries = [
    `${q}descr${q}: ${q}${descr}${q}`,
    `${q}fortran_order${q}: ${r.pick(['False', 'True', 'False', 'True', 'None', "'False'"])}`,
    `${q}shape${q}: ${shape.text}`,
  ];
  if (r.chance(0.1)) entries.splice(r.int(0, entries.length - 1), 1);
  if (r.chance(0.1)) entries.push(`${q}extra${q}: ${r.int(0, 9)}`);
  if (r.chance(0.05)) entries.push(entries[0]!);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  const separator = r.pick([', ', ',', ' , ']);
  const trailing = r.pick(['', ', ', ',']);
  const item = ITEM_BYTES[descr.replace(/^[<>|=]/, '')];
  return {
    text: '{' + entries.join(separator) + trailing + '}',
    dataBytes: item && shape.elements !== null ? item * shape.elements : null,
  };
}

/** The text, perhaps broken: characters or tokens inserted, removed or repeated, a nest, a truncation. */
function mutate(r: Prng, text: string): string {
  let t = text;
  for (let m = r.int(0, 3); m > 0; m--) {
    const at = r.int(0, t.length);
    switch (r.int(0, 6)) {
      case 0:
        t = t.slice(0, at) + r.pick(TOKENS) + t.slice(at);
        break;
      case 1:
        t = t.slice(0, at) + t.slice(at + r.int(1, 4));
        break;
      case 2:
        t = t.slice(0, at);
        break;
      case 3: {
        const depth = r.int(1, 20_000);
        t =
          t.slice(0, at) +
          r.pick(['[', '(', '{']).repeat(depth) +
          (r.chance(0.5) ? r.pick([']', ')', '}']).repeat(depth) : '') +
          t.slice(at);
        break;
      }
      case 4:
        t = t.slice(0, at) + r.text('\'"\\x<f8 ', r.int(1, 3000)) + t.slice(at);
        break;
      case 5:
        t = t.slice(0, at) + t.slice(at, at + r.int(1, 30)).repeat(r.int(2, 50)) + t.slice(at);
        break;
      default:
        t = t.slice(0, at) + String.fromCharCode(r.int(0, 0x2fff)) + t.slice(at);
    }
  }
  return t;
}

/** An .npy file around `text`: version, length field and data (of `dataBytes` when given), each sometimes wrong. */
function npyBytes(r: Prng, text: string, dataBytes: number | null): Buffer {
  const version = r.chance(0.9) ? r.pick([1, 2, 3]) : r.int(0, 255);
  const enc = version === 3 ? 'utf8' : 'latin1';
  const pre = version === 1 ? 10 : 12;
  let dict = `${text}${r.chance(0.9) ? ' '.repeat(r.int(0, 70)) : ''}\n`;
  if (version === 1 && Buffer.byteLength(dict, enc) > 0xffff) dict = dict.slice(0, 0xfff0);
  const body = Buffer.from(dict, enc);
  const head = Buffer.alloc(pre);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]).copy(head, 0);
  head[6] = version;
  head[7] = r.chance(0.95) ? 0 : r.int(1, 255);
  const length = r.chance(0.9) ? body.length : r.pick([0, body.length + r.int(1, 100), r.int(0, 0xffffffff), NPY_MAX_HEADER_BYTES + 1]);
  if (pre === 10) head.writeUInt16LE(Math.min(length, 0xffff), 8);
  else head.writeUInt32LE(length, 8);
  const length_ = dataBytes !== null && r.chance(0.85) ? dataBytes : r.pick([0, 1, 4, 8, 16, 24, 64, r.int(0, 300)]);
  const data = Buffer.alloc(length_, r.int(0, 255));
  const whole = Buffer.concat([head, body, data]);
  return r.chance(0.05) ? whole.subarray(0, r.int(0, whole.length)) : whole;
}

/** One decode: an array within every bound, or a short 400; anything else fails the test. */
async function check(bytes: Buffer, maxElements: number, label: string): Promise<'ok' | 'refused'> {
  try {
    const a = await decodeNpy(bytes, maxElements);
    expect(a.shape.length, label).to.be.at.most(MAX_DIMS);
    let nonzero = 1;
    for (const d of a.shape) {
      expect(d, label).to.be.at.most(NPY_MAX_DIM);
      if (d > 0) nonzero *= d;
    }
    expect(nonzero, label).to.be.at.most(maxElements);
    expect(a.data.length, label).to.equal(numel(a.shape) * ITEM_SIZE[a.dtype]);
    return 'ok';
  } catch (err) {
    if (!(err instanceof ProblemError)) throw new Error(`${label}: not a ProblemError: ${(err as Error).stack}`);
    expect(err.status, label).to.equal(400);
    expect(err.code, label).to.equal('invalid_request');
    expect(err.message.length, `${label}: ${err.message.slice(0, 120)}`).to.be.below(300);
    return 'refused';
  }
}

describe('.npy reader under fuzzing', function () {
  this.timeout(60000);

  it('4000 random and mutated headers: each an array within the bounds or a short 400, none slow', async () => {
    const r = prng(SEED);
    const seen = { ok: 0, refused: 0 };
    let slowest = 0;
    for (let i = 0; i < 4000; i++) {
      const h = headerText(r);
      const bytes = npyBytes(r, r.chance(0.5) ? h.text : mutate(r, h.text), h.dataBytes);
      const maxElements = r.chance(0.8) ? NPY_MAX_ELEMENTS : r.int(0, 1000);
      const t0 = performance.now();
      seen[await check(bytes, maxElements, `seed ${SEED} case ${i}`)]++;
      slowest = Math.max(slowest, performance.now() - t0);
    }
    // Both outcomes occur (the generator is not all noise), and no case took long.
    expect(seen.ok).to.be.greaterThan(100);
    expect(seen.refused).to.be.greaterThan(1000);
    expect(slowest, 'slowest case, ms').to.be.below(250);
  });

  describe('over HTTP', () => {
    const suite = storageSuite();

    it('300 fuzzed .npy bodies, binary and as data_b64: 200 or a 4xx problem, never a 5xx', async () => {
      const r = prng(SEED + 1);
      const statuses = new Map<number, number>();
      for (let i = 0; i < 300; i++) {
        const h = headerText(r);
        const bytes = npyBytes(r, r.chance(0.5) ? h.text : mutate(r, h.text), h.dataBytes);
        const reply =
          i % 2 === 0
            ? await suite.c.call('POST', `/v1/put?key=fuzz-${i}`, { body: bytes, headers: { 'content-type': 'application/x-npy' } })
            : await suite.c.put({ key: `fuzz-${i}`, data_b64: b64(bytes) });
        expect(reply.status, `case ${i}: ${reply.text.slice(0, 200)}`).to.be.oneOf([200, 400, 413]);
        if (reply.status !== 200) {
          expect(reply.headers.get('content-type')).to.match(/^application\/problem\+json/);
          expect(reply.text.length).to.be.below(600);
        }
        statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      }
      expect(statuses.get(400) ?? 0).to.be.greaterThan(50);
      expect((await suite.c.call('GET', '/gate/health')).status).to.equal(200);
    });
  });
});
