// Streamed JSON answers (CONTRACT.md section 8: large JSON responses are streamed) are the very bytes
// JSON.stringify gives for the same object, and their declared length is exact.
import { expect } from 'chai';
import { base64Pieces, jsonWithList, withBase64, withList, type JsonPieces } from '../../src/http/json-stream.js';
import { rng } from './helpers.js';

const text = (j: JsonPieces) => [...j.pieces].join('');

function randomBytes(n: number, seed: number): Uint8Array {
  const r = rng(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
}

describe('storage: streamed JSON answers', () => {
  it('encodes parts of every length to the base64 of their concatenation, in pieces of whole quanta', () => {
    for (const lengths of [
      [0],
      [1],
      [2],
      [3],
      [1, 1, 1],
      [2, 2],
      [128, 5],
      [64, 1],
      [7, 0, 8],
      [3 * 256 * 1024 + 2, 1],
      [2 * 3 * 256 * 1024 + 1],
    ]) {
      const parts = lengths.map((n, i) => randomBytes(n, 1 + i));
      const pieces = [...base64Pieces(parts)];
      expect(pieces.join(''), `lengths ${lengths.join(',')}`).to.equal(Buffer.concat(parts).toString('base64'));
      for (const p of pieces.slice(0, -1)) expect(p.length % 4).to.equal(0);
    }
  });

  it('writes an object with a base64 field last exactly as JSON.stringify does, and counts its bytes', () => {
    const head = { key: 'ключ/a"b', namespace: 'default', version: 3, shape: [2, 3], fingerprint: { relative_error: 1e-7 } };
    const parts = [randomBytes(128, 7), randomBytes(1000, 8)];
    const j = withBase64(head, 'data_b64', parts);
    const expected = JSON.stringify({ ...head, data_b64: Buffer.concat(parts).toString('base64') });
    expect(text(j)).to.equal(expected);
    expect(j.byteLength).to.equal(Buffer.byteLength(expected));
  });

  it('writes a list of such objects last, as JSON.stringify does (empty lists and empty heads included)', () => {
    for (const n of [0, 1, 3]) {
      const parts = Array.from({ length: n }, (_, i) => [randomBytes(10 + i, 20 + i)]);
      const items = parts.map((p, i) => withBase64({ shape: [1, i, 1] }, 'data_b64', p));
      const head = n === 0 ? {} : { key: 'k', ranks: [1, 2, 1] };
      const j = withList(head, 'cores', items);
      const expected = JSON.stringify({
        ...head,
        cores: parts.map((p, i) => ({ shape: [1, i, 1], data_b64: Buffer.concat(p).toString('base64') })),
      });
      expect(text(j)).to.equal(expected);
      expect(j.byteLength).to.equal(Buffer.byteLength(expected));
    }
  });

  it('writes a long result list in batches, as JSON.stringify does', () => {
    for (const n of [0, 1, 16, 17, 100]) {
      const results = Array.from({ length: n }, (_, i) => ({ key: `k${i}`, metadata: { i, s: 'é"\n' }, version: 1 }));
      const head = { namespace: 'ns', count: n };
      expect([...jsonWithList(head, 'results', results)].join('')).to.equal(JSON.stringify({ ...head, results }));
    }
  });
});
