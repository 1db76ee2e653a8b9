// The JSON body reader (codec/json-reader.ts, CONTRACT.md section 8): a body read as it arrives gives
// what the one-shot reading gave (depth and structure scan, one JSON.parse, base64 decoding of the
// data strings), whatever the chunks it arrives in; its array data is decoded as it arrives; no
// JSON.parse sees more than a piece of text, whatever the body.
import { expect } from 'chai';
import { Base64Data } from '../../src/codec/base64.js';
import { JSON_PIECE_BYTES, JsonReader, type DataPaths } from '../../src/codec/json-reader.js';
import { BODY_MAX_DEPTH, JSON_BODY_BYTES } from '../../src/limits/input.js';
import { canonical, randomCuts, readInChunks, referenceRead, structureBytes, textDepth, type Outcome } from '../helpers/json-bodies.js';
import { prng, type Prng } from '../helpers/prng.js';

const SEED = 0x19_0571;
const DATA: DataPaths = {
  data_b64: true,
  cores: { '*': { data_b64: true } },
  entries: { '*': { cores: { '*': { data_b64: true } } } },
};
const LIMITS = { maxDepth: BODY_MAX_DEPTH, maxStructureBytes: 8 * JSON_BODY_BYTES, data: DATA };

/** Characters strings are drawn from: quotes, backslashes, controls, 2-, 3- and 4-byte UTF-8, separators. */
const CHARS = 'ab"\\/\n\t\u0000\u001f\u007f\u00e9\u2028\u20ac\ud83d\ude00{}[]:, ';

/** A JSON string literal for `s`, written differently by chance: escapes where they are optional, \/, \u. */
function quote(r: Prng, s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (code < 0x20) out += r.chance(0.5) && ch === '\n' ? '\\n' : `\\u${code.toString(16).padStart(4, '0')}`;
    else if (ch === '/' && r.chance(0.5)) out += '\\/';
    else if (r.chance(0.05)) {
      // Any character as \u escapes (a pair for those past the BMP).
      for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

/** Text of a random value (objects may repeat a name or use __proto__), `depth` levels at most. */
function value(r: Prng, depth: number): string {
  if (depth <= 0 || r.chance(0.4)) {
    return r.pick([
      () => String(r.int(-1e6, 1e6)),
      () => String(r.next() * 1e9),
      () => `${r.int(1, 9)}e${r.int(-20, 20)}`,
      () => '-0.5',
      () => 'true',
      () => 'false',
      () => 'null',
      () => quote(r, r.text(CHARS, r.int(0, 12))),
    ])();
  }
  const n = r.int(0, depth > 6 ? 1 : 4);
  const space = () => (r.chance(0.2) ? r.pick([' ', '\n', '\t ', '\r\n  ']) : '');
  if (r.chance(0.5)) return `[${space()}${Array.from({ length: n }, () => value(r, depth - 1)).join(`${space()},${space()}`)}${space()}]`;
  const names = ['a', 'b', '__proto__', 'data_b64', 'cores', 'x\u00e9'];
  return `{${space()}${Array.from({ length: n }, () => `${quote(r, r.pick(names))}${space()}:${space()}${value(r, depth - 1)}`).join(',')}}`;
}

/** A string longer than a piece, with escapes and multi-byte characters, near cut places too. */
function longString(r: Prng): string {
  const parts: string[] = [];
  for (let n = 0; n < JSON_PIECE_BYTES + r.int(1, 3 * JSON_PIECE_BYTES);) {
    const part = r.chance(0.7) ? 'x'.repeat(r.int(1, 4000)) : r.text(CHARS, r.int(1, 50));
    parts.push(part);
    n += part.length;
  }
  return quote(r, parts.join(''));
}

/** Base64 of random bytes, sometimes spoiled, sometimes long, '/' sometimes written \/. */
function dataString(r: Prng): string {
  const bytes = Buffer.from(Array.from({ length: r.chance(0.2) ? r.int(20_000, 100_000) : r.int(0, 300) }, () => r.int(0, 255)));
  let text = bytes.toString('base64');
  if (r.chance(0.2)) text = text.replace(/=+$/, '');
  if (r.chance(0.15) && text.length > 0) {
    const at = r.int(0, text.length - 1);
    // (ASCII only: a data string with other characters is invalid, but its implied length counts their
    // UTF-8 bytes, not their UTF-16 units; the test below says so.)
    text = text.slice(0, at) + r.pick(['-', '_', '!', '=', ' ', '\\n', '\\u0041', '\\"', '\u0001']) + text.slice(at + 1);
  }
  if (r.chance(0.3)) text = text.replace(/\//g, '\\/');
  return `"${text}"`;
}

/** A body shaped like put, put_cores or put_cores_batch (data where the schema puts it, and elsewhere). */
function payloadBody(r: Prng): string {
  const core = () => `{"data_b64":${dataString(r)}${r.chance(0.3) ? `,"shape":${value(r, 2)}` : ''}}`;
  const cores = () => `[${Array.from({ length: r.int(0, 4) }, core).join(',')}]`;
  const metadata = () => (r.chance(0.2) ? `{"data_b64":${dataString(r)}}` : value(r, 5));
  switch (r.int(0, 3)) {
    case 0:
      return `{"key":"k","data_b64":${dataString(r)},"metadata":${metadata()}${r.chance(0.2) ? `,"data_b64":${dataString(r)}` : ''}}`;
    case 1:
      return `{"key":"k","cores":${cores()},"metadata":${metadata()}}`;
    case 2:
      return `{"entries":[${Array.from({ length: r.int(0, 5) }, () => `{"key":"e","cores":${cores()},"metadata":${metadata()}}`).join(',')}]}`;
    default:
      return `{"pad":${r.chance(0.5) ? longString(r) : value(r, 3)},"data_b64":${r.pick(['1', 'null', '{"a":1}', '[]', dataString(r)])}}`;
  }
}

/** A body of any shape: small values, sometimes a long string, a long array or a long object inside. */
function anyBody(r: Prng): string {
  const big = r.int(0, 5);
  if (big === 0) return `{"s":${longString(r)},"t":${value(r, 3)}}`;
  if (big === 1) return `{"n":[${Array.from({ length: r.int(10_000, 40_000) }, () => value(r, 0)).join(',')}]}`;
  if (big === 2) {
    const members = Array.from({ length: r.int(3000, 9000) }, (_, i) => `"${r.pick(['a', 'b', '__proto__', `m${i}`])}":${value(r, 2)}`);
    return `{"o":{${members.join(',')}},"a":1}`;
  }
  return `{"v":${value(r, r.int(1, 12))}}`;
}

/** Chunkings of `length` bytes: halves, small pieces, random cuts, pieces around 64 KiB; one byte at a time when short. */
function chunkings(r: Prng, length: number): number[][] {
  const cuts = randomCuts(() => r.next(), length, length < 100_000 ? 2000 : 50_000);
  if (length > 100_000) return [cuts, [65_535, 1, 65_536]];
  const out = [[length >> 1], [7, 1, 13], cuts, [JSON_PIECE_BYTES + 3]];
  if (length < 3000) out.push(Array(length).fill(1));
  return out;
}

function expectSame(label: string, got: Outcome, want: Outcome): void {
  expect(canonical(got), label).to.equal(canonical(want));
}

describe('JSON bodies read as they arrive', function () {
  this.timeout(120_000);

  it('every chunking of a body gives what the one-shot reading gave: values, names in order, data bytes and verdicts', () => {
    const r = prng(SEED);
    let accepted = 0;
    for (let i = 0; i < 300; i++) {
      const text = i % 2 === 0 ? payloadBody(r) : anyBody(r);
      const bytes = Buffer.from(text);
      const label = `seed ${SEED} case ${i}`;
      const want = referenceRead(bytes, LIMITS);
      const one = readInChunks(bytes, LIMITS);
      if ('value' in want) {
        accepted++;
        expectSame(`${label}, whole`, one, want);
      } else {
        // A body the reference refuses is refused too: 400 or 413, and a depth verdict only when it is too deep.
        expect('value' in one, `${label}: ${canonical(want)}`).to.equal(false);
        if ('status' in one && /nests deeper/.test(one.message)) expect(textDepth(text), label).to.be.above(BODY_MAX_DEPTH);
        if (want.message === 'malformed JSON body') expect(canonical(one), label).to.equal('400 malformed JSON body');
      }
      const whole = canonical(one);
      for (const sizes of chunkings(r, bytes.length)) {
        expect(canonical(readInChunks(bytes, LIMITS, sizes)), `${label}, chunks ${sizes.slice(0, 4).join(',')}...`).to.equal(whole);
      }
    }
    expect(accepted).to.be.greaterThan(150);
  });

  it('a long data_b64 split at every place around its base64 quads decodes to the same bytes', () => {
    const bytes = Buffer.from(Array.from({ length: 40_000 }, (_, i) => (i * 7919) % 256));
    for (const slash of ['/', '\\/']) {
      const body = Buffer.from(`{"key":"k","data_b64":"${bytes.toString('base64').replaceAll('/', slash)}"}`);
      const start = body.indexOf('"data_b64":"') + 12;
      for (const around of [start, start + 16 * 1024, body.length - 40]) {
        for (let cut = around - 9; cut <= around + 9; cut++) {
          for (const sizes of [[cut], [cut, 1], [cut, 2, 3]]) {
            const got = readInChunks(body, LIMITS, sizes);
            expect('value' in got, `cut at ${cut}`).to.equal(true);
            const data = (got as { value: Record<string, unknown> }).value.data_b64 as Base64Data;
            expect(data.bytes('data_b64').equals(bytes), `${slash}: cut at ${cut}, chunks ${sizes.join(',')}`).to.equal(true);
          }
        }
      }
    }
  });

  it('escapes and multi-byte characters split across chunks, in short strings and long ones, read as JSON.parse reads them', () => {
    const unit = 'é€😀\\"\\\\\\u00e9\\ud83d\\ude00\\/\\n';
    const short = `{"s":"${unit.repeat(20)}","${unit}":1}`;
    const long = `{"s":"${unit.repeat(Math.ceil((JSON_PIECE_BYTES * 2.5) / unit.length))}"}`;
    for (const text of [short, long]) {
      const bytes = Buffer.from(text);
      const want = JSON.stringify(JSON.parse(text));
      const places = text === short ? Array.from({ length: bytes.length }, (_, i) => i) : [];
      // Around each place a long string is cut in pieces, and at random ones.
      for (let k = 1; k <= 3; k++) for (let d = -12; d <= 12; d++) places.push(k * JSON_PIECE_BYTES + d);
      for (const at of places) {
        const got = readInChunks(bytes, LIMITS, [at]);
        expect('value' in got && JSON.stringify(got.value), `cut at ${at}`).to.equal(want);
      }
    }
  });

  it('malformed input at every place is the same 400 as a one-shot parse, in any chunking', () => {
    const r = prng(SEED + 1);
    const base = '{"key": "k", "a": [1, -2.5e3, true, null, {"b": "c\\"d\\u00e9"}], "é": {"x": []}}';
    const texts: string[] = [];
    for (let at = 0; at <= base.length; at++) {
      texts.push(base.slice(0, at)); // cut short
      for (const t of ['"', '\\', '{', '}', '[', ']', ',', ':', 'x', '\u0001', '01', '1.', '-', 'nul'])
        texts.push(base.slice(0, at) + t + base.slice(at));
      texts.push(base.slice(0, at) + base.slice(at + 1)); // one byte gone
    }
    let malformed = 0;
    for (const text of texts) {
      const bytes = Buffer.from(text);
      const want = referenceRead(bytes, LIMITS);
      const one = readInChunks(bytes, LIMITS);
      if ('value' in want) expectSame(text, one, want);
      else if (want.message === 'malformed JSON body') {
        malformed++;
        expect(canonical(one), text).to.equal('400 malformed JSON body');
      } else expect(canonical(one), text).to.equal(canonical(want));
      for (const sizes of [[1, 1, 1], [r.int(1, bytes.length + 1)], Array(bytes.length).fill(1)])
        expectSame(text, readInChunks(bytes, LIMITS, sizes), one);
    }
    expect(malformed).to.be.greaterThan(1000);
  });

  it('refuses one level past the depth bound and one byte past the structure bound, where the text passes them', () => {
    const deep = (n: number) => `{"a":${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    expect('value' in readInChunks(Buffer.from(deep(BODY_MAX_DEPTH)), LIMITS)).to.equal(true);
    const tooDeep = `{"a":${'['.repeat(BODY_MAX_DEPTH)}`; // never closed: the depth is refused on the way
    for (const sizes of [[], [1, 1, 1], Array(tooDeep.length).fill(1)]) {
      expect(canonical(readInChunks(Buffer.from(tooDeep), LIMITS, sizes))).to.equal(
        `400 the JSON body nests deeper than ${BODY_MAX_DEPTH} levels of objects and arrays`,
      );
    }
    const limits = { ...LIMITS, maxStructureBytes: 1000 };
    const body = (spaces: number) => Buffer.from(`{"a":[${'1,'.repeat(496)}1]${' '.repeat(spaces)}}`);
    expect(structureBytes(body(0))).to.equal(1000);
    expect('value' in readInChunks(body(0), limits)).to.equal(true);
    for (const sizes of [[], [7], Array(1000).fill(1)]) expect(readInChunks(body(1), limits, sizes)).to.include({ status: 413 });
    // A string's plain characters do not count; its quotes and escapes do.
    expect('value' in readInChunks(Buffer.from(`{"a":"${'x'.repeat(100_000)}"}`), limits)).to.equal(true);
    expect(readInChunks(Buffer.from(`{"a":"${'\\n'.repeat(500)}"}`), limits)).to.include({ status: 413 });
  });

  it("keeps JSON.parse's rules: the last of duplicate names wins at the first's place, __proto__ is an own member", () => {
    const many = Array.from({ length: 9000 }, (_, i) => `"m${i}":${i}`).join(',');
    for (const text of [
      '{"a":1,"b":2,"a":3}',
      '{"__proto__":{"polluted":true},"a":1}',
      `{"a":1,${many},"a":2,"__proto__":[1],"z":0}`,
      `{"cores":[{"data_b64":"AAAA","data_b64":"AQID"}],"cores":[],"key":"k"}`,
      `{"data_b64":"AAAA","x":{"data_b64":"AAAA"},"data_b64":"AQID"}`,
    ]) {
      const got = readInChunks(Buffer.from(text), LIMITS, [5, 100]);
      expectSame(text.slice(0, 60), got, referenceRead(Buffer.from(text), LIMITS));
      const v = (got as { value: Record<string, unknown> }).value;
      expect(Object.getPrototypeOf(v)).to.equal(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    }
    const got = readInChunks(Buffer.from('{"data_b64":"AAAA","x":{"data_b64":"AAAA"},"data_b64":"AQID"}'), LIMITS);
    const v = (got as { value: Record<string, unknown> }).value;
    expect((v.data_b64 as Base64Data).bytes('x').toString('hex')).to.equal('010203');
    expect((v.x as Record<string, unknown>).data_b64, 'data_b64 where the schema puts no data stays a string').to.equal('AAAA');
  });

  it('answers a body that is not an object, or not complete, as before', () => {
    for (const [text, message] of [
      ['[1,2]', 'the request body must be a JSON object'],
      ['"x"', 'the request body must be a JSON object'],
      ['12', 'the request body must be a JSON object'],
      ['null', 'the request body must be a JSON object'],
      ['', 'malformed JSON body'],
      ['  ', 'malformed JSON body'],
      ['{"a":1} {}', 'malformed JSON body'],
      ['{"a":1', 'malformed JSON body'],
      ['\ufeff{}', 'malformed JSON body'],
      ['{"a":"b}', 'malformed JSON body'],
    ]) {
      for (const sizes of [[], [1, 1, 1, 1, 1]])
        expect(canonical(readInChunks(Buffer.from(text!), LIMITS, sizes)), text).to.equal(`400 ${message}`);
    }
  });

  it('no JSON.parse sees more than a piece of text, whatever the body; array data never becomes a string', () => {
    const parse = JSON.parse;
    let largest = 0;
    JSON.parse = ((text: string, reviver?: (k: string, v: unknown) => unknown) => {
      largest = Math.max(largest, text.length);
      return parse(text, reviver);
    }) as typeof JSON.parse;
    try {
      const data = Buffer.alloc(3 << 20, 7).toString('base64');
      const bodies = [
        `{"key":"k","data_b64":"${data}","metadata":{"a":[${'1,'.repeat(200_000)}1]}}`,
        `{"key":"k","pad":"${'x'.repeat(1 << 20)}","metadata":{${Array.from({ length: 20_000 }, (_, i) => `"n${i}":{"v":[${i}]}`).join(',')}}}`,
        `{"entries":[${Array.from({ length: 200 }, (_, i) => `{"key":"e${i}","cores":[{"data_b64":"${data.slice(0, 4000)}"}],"metadata":{"m":"${'y'.repeat(30_000)}"}}`).join(',')}]}`,
        `{"a":${'['.repeat(30)}${'"z",'.repeat(100_000)}1${']'.repeat(30)}}`,
      ];
      for (const body of bodies) {
        const bytes = Buffer.from(body);
        largest = 0;
        const got = readInChunks(bytes, LIMITS, randomCuts(Math.random, bytes.length, 70_000));
        expect('value' in got, canonical(got).slice(0, 200)).to.equal(true);
        expect(largest, 'longest text given to one JSON.parse').to.be.at.most(JSON_PIECE_BYTES + 8);
      }
    } finally {
      JSON.parse = parse;
    }
  });

  it('a data string with a character outside ASCII is not base64, in any chunking; its implied length counts bytes', () => {
    const text = `{"data_b64":"AAAAéAAA"}`;
    for (const sizes of [[], [17], [18], [1, 1, 1]]) {
      const got = readInChunks(Buffer.from(text), LIMITS, sizes) as { value: { data_b64: Base64Data } };
      expect(got.value.data_b64.valid).to.equal(false);
      expect(got.value.data_b64.impliedLength, 'nine bytes: 4 + 2 + 3').to.equal(-1);
    }
  });

  it("puts a body's data in one buffer sized from the body, each string's bytes 8-aligned", () => {
    const cores = Array.from({ length: 5 }, (_, i) => `{"data_b64":"${Buffer.alloc(i * 3 + 1, i).toString('base64')}"}`).join(',');
    const bytes = Buffer.from(`{"cores":[${cores}]}`);
    const reader = new JsonReader({ ...LIMITS, maxBodyBytes: bytes.length });
    reader.write(bytes);
    const v = reader.end() as { cores: Array<{ data_b64: Base64Data }> };
    const views = v.cores.map((c) => c.data_b64.bytes('x'));
    expect(new Set(views.map((b) => b.buffer)).size).to.equal(1);
    expect(views.every((b) => b.byteOffset % 8 === 0)).to.equal(true);
    expect(views.map((b) => b.length)).to.deep.equal([1, 4, 7, 10, 13]);
    expect(views[0]!.buffer.byteLength).to.be.at.most(bytes.length);
  });
});
