// An .npy upload converted to float64 while it arrives (src/codec/npy-gather.ts), by the engine's
// widen: whatever the chunk sizes, the result is every element in C order exactly as float64; anything
// that would need reordering or byte work, or is too small to be worth it, is left to the put's own
// decode, and so is an upload whose conversion failed.
import { expect } from 'chai';
import { BufferPool } from '../../src/runtime/buffer-pool.js';
import { encodeNpy, encodeNpyHeader } from '../../src/codec/npy.js';
import { GATHER_MIN_BYTES, NpyGather, type Widen } from '../../src/codec/npy-gather.js';
import { ByteBudget } from '../../src/admission/byte-budget.js';
import { engine } from '../../src/engine/index.js';
import type { DType } from '../../src/engine/types.js';
import { NPY_MAX_ELEMENTS } from './npy-fixtures.js';

const widen: Widen = (src, dtype, dst, offset, lanes) => engine.widen(src, dtype, dst, offset, lanes);

const pool = () => new BufferPool({ maxIdleBytes: 256 << 20, minBytes: 1 << 20 });
/** A request's hold with room for any workspace of these tests. */
const unlimited = () => new ByteBudget({ limit: 8 * 2 ** 30 }).open('t');

/** Feed `body` to a gather in chunks of the given sizes (cycled), as readRawBody does. */
function feed(g: NpyGather, p: BufferPool, body: Buffer, sizes: number[]): void {
  const whole = p.acquire(body.length);
  let received = 0;
  for (let i = 0; received < body.length; i++) {
    const n = Math.min(sizes[i % sizes.length]!, body.length - received);
    body.copy(whole, received, received, received + n);
    received += n;
    g.observe(whole, received);
  }
}

function values(n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.sin(i * 0.001) * 1e3 + i / 7;
  return out;
}

describe('storage: .npy uploads converted while they arrive', () => {
  const n = 512 * 1024; // float32: 2 MiB, float64: 4 MiB

  for (const [dtype, Arr] of [
    ['float32', Float32Array],
    ['float64', Float64Array],
  ] as const) {
    it(`${dtype}: every element, in C order, whatever the chunk sizes`, async () => {
      const src = Arr.from(values(n));
      const body = encodeNpy(dtype, [512, 1024], Buffer.from(src.buffer));
      for (const sizes of [[65536], [1, 7, 4093, 65537, 1 << 20], [body.length]]) {
        const p = pool();
        const g = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
        feed(g, p, body, sizes);
        const out = (await g.finish())?.values;
        expect(out, `chunks ${sizes}`).to.be.instanceOf(Float64Array);
        expect(out!.length).to.equal(n);
        expect(Buffer.from(out!.buffer, 0, n * 8).equals(Buffer.from(Float64Array.from(src).buffer))).to.equal(true);
        await g.release();
        expect(p.idleByteCount).to.be.at.least(n * 8); // the workspace went back to the pool
      }
    });
  }

  it('a 1-D Fortran-order array is C order already and is converted', async () => {
    const src = new Float32Array(values(n));
    const body = Buffer.concat([
      Buffer.from(encodeNpyHeader('float32', [n]).toString('latin1').replace('False', 'True '), 'latin1'),
      Buffer.from(src.buffer),
    ]);
    const p = pool();
    const g = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
    feed(g, p, body, [65536]);
    expect((await g.finish())?.values).to.deep.equal(Float64Array.from(src));
  });

  const leftAlone: Array<[string, () => Buffer]> = [
    ['an integer dtype', () => encodeNpy('int32', [n], Buffer.alloc(n * 4))],
    [
      'a Fortran-order 2-D array',
      () => {
        const h = encodeNpyHeader('float32', [512, 1024]).toString('latin1').replace('False', 'True ');
        return Buffer.concat([Buffer.from(h, 'latin1'), Buffer.alloc(n * 4)]);
      },
    ],
    [
      'big-endian floats',
      () => {
        const h = encodeNpyHeader('float32', [n]).toString('latin1').replace("'<f4'", "'>f4'");
        return Buffer.concat([Buffer.from(h, 'latin1'), Buffer.alloc(n * 4)]);
      },
    ],
    ['an array under GATHER_MIN_BYTES', () => encodeNpy('float64', [GATHER_MIN_BYTES / 8 - 1], Buffer.alloc(GATHER_MIN_BYTES - 8))],
    [
      'a header that does not parse',
      () => {
        const b = encodeNpy('float32', [n], Buffer.alloc(n * 4));
        b.write("{'dxxxx'", 10, 'latin1'); // no descr key
        return b;
      },
    ],
    ['bytes that are not .npy', () => Buffer.alloc(4 << 20, 7)],
  ];
  for (const [what, make] of leftAlone) {
    it(`leaves ${what} to the put's decode`, async () => {
      const body = make();
      const p = pool();
      const g = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
      feed(g, p, body, [65536]);
      expect(await g.finish()).to.equal(null);
      await g.release();
    });
  }

  it('converts one piece at a time: the next takes everything that arrived while one ran', async () => {
    const src = new Float32Array(values(4 * n)); // 8 MiB of float32: eight pieces if each MiB went out
    const body = encodeNpy('float32', [4 * n], Buffer.from(src.buffer));
    const p = pool();
    let running = 0;
    let most = 0;
    const pieces: number[] = [];
    const slow: Widen = async (piece, dtype, dst, offset, lanes) => {
      running++;
      most = Math.max(most, running);
      pieces.push(piece.length);
      await new Promise((r) => setTimeout(r, 5));
      await engine.widen(piece, dtype, dst, offset, lanes);
      running--;
    };
    const g = new NpyGather({ pool: p, widen: slow, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
    const whole = p.acquire(body.length);
    for (let received = 0; received < body.length;) {
      const k = Math.min(256 << 10, body.length - received);
      body.copy(whole, received, received, received + k);
      received += k;
      g.observe(whole, received);
      await new Promise((r) => setImmediate(r)); // chunks arrive over several turns, as from a socket
    }
    const out = (await g.finish())?.values;
    expect(most).to.equal(1);
    expect(pieces.reduce((a, b) => a + b, 0)).to.equal(4 * n * 4);
    expect(pieces.length, `pieces ${pieces}`).to.be.below(8);
    expect(Buffer.from(out!.buffer, 0, 4 * n * 8).equals(Buffer.from(Float64Array.from(src).buffer))).to.equal(true);
    await g.release();
  });

  it('sums the squares on the way, to the same bits however the chunks arrived', async () => {
    const src = new Float32Array(values(n));
    const body = encodeNpy('float32', [n], Buffer.from(src.buffer));
    let exact = 0; // a reference in a different order: equal to rounding
    for (const v of src) exact += v * v;
    const sums = new Set<number>();
    for (const sizes of [[65536], [1, 7, 4093, 65537, 1 << 20], [3, 1 << 20, 5], [body.length]]) {
      const p = pool();
      const g = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
      feed(g, p, body, sizes);
      const out = await g.finish();
      expect(out!.sumSquares).to.be.closeTo(exact, exact * 1e-12);
      sums.add(out!.sumSquares);
      await g.release();
    }
    expect(sums.size, `sums ${[...sums]}`).to.equal(1);
  });

  it('passes the sum with the values to compress, which keeps the train it makes without it', async () => {
    const [rows, cols] = [512, 1024];
    const src = new Float32Array(rows * cols);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) src[i * cols + j] = Math.sin((3 * i) / rows + (2 * j) / cols);
    const body = encodeNpy('float32', [rows, cols], Buffer.from(src.buffer));
    const p = pool();
    const g = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
    feed(g, p, body, [65536, 3]);
    const out = (await g.finish())!;
    const plain = await engine.compress(src, 'float32', [rows, cols], { tolerance: 1e-6 });
    const pre = await engine.compress(src, 'float32', [rows, cols], {
      tolerance: 1e-6,
      gathered: out.values,
      gatheredSumSquares: out.sumSquares,
    });
    expect(pre.tt.ranks).to.deep.equal(plain.tt.ranks);
    const bytes = (c: Float32Array | Float64Array) => Buffer.from(c.buffer, c.byteOffset, c.byteLength);
    pre.tt.cores.forEach((c, k) => expect(bytes(c).equals(bytes(plain.tt.cores[k]!)), `core ${k}`).to.equal(true));
    expect(pre.fingerprint).to.deep.equal(plain.fingerprint);
    await g.release();
  });

  it('has no result until every element arrived, nor when the body is longer than the array', async () => {
    const src = new Float32Array(values(n));
    const body = encodeNpy('float32', [n], Buffer.from(src.buffer));
    const p = pool();
    const partial = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
    feed(partial, p, body.subarray(0, body.length - 4), [65536]);
    expect(await partial.finish()).to.equal(null);
    await partial.release();
    const longer = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length + 4, maxElements: NPY_MAX_ELEMENTS }); // declared length disagrees with the header
    feed(longer, p, Buffer.concat([body, Buffer.alloc(4)]), [65536]);
    expect(await longer.finish()).to.equal(null);
  });

  it('respects the compression threshold: arrays that will be stored as they are are not converted', async () => {
    const body = encodeNpy('float32' as DType, [n], Buffer.alloc(n * 4));
    const p = pool();
    const g = new NpyGather({
      pool: p,
      widen,
      budget: unlimited(),
      total: body.length,
      maxElements: NPY_MAX_ELEMENTS,
      minBytes: n * 4 + 1,
    });
    feed(g, p, body, [65536]);
    expect(await g.finish()).to.equal(null);
  });
  it('an upload whose conversion fails is left to the engine, and its workspace still goes back', async () => {
    const body = encodeNpy('float32', [n], Buffer.alloc(n * 4));
    const p = pool();
    const g = new NpyGather({
      pool: p,
      widen: async () => {
        throw new Error('no');
      },
      budget: unlimited(),
      total: body.length,
      maxElements: NPY_MAX_ELEMENTS,
    });
    feed(g, p, body, [65536]);
    expect(await g.finish()).to.equal(null);
    await g.release();
    expect(p.idleByteCount).to.be.at.least(n * 8);
  });
  it('refuses a header that decodeNpy would refuse as soon as it is in: longer than 64 KiB from its first 12 bytes', async () => {
    const p = pool();
    const whole = p.acquire(1 << 20);
    const long = new NpyGather({ pool: p, widen, budget: unlimited(), total: whole.length, maxElements: NPY_MAX_ELEMENTS });
    Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0]).copy(whole, 0);
    whole.writeUInt32LE(64 << 20, 8);
    expect(long.observe(whole, 11)).to.equal(undefined);
    const refused = long.observe(whole, 12);
    expect(refused).to.include({ status: 400, code: 'invalid_request' });
    expect(refused!.message).to.match(/at most 64 KiB/);
    const body = encodeNpy('float32', [n], Buffer.alloc(n * 4));
    const bad = Buffer.from(body);
    bad.write("{'descr': [[[[", 10, 'latin1');
    const malformed = new NpyGather({ pool: p, widen, budget: unlimited(), total: bad.length, maxElements: NPY_MAX_ELEMENTS });
    expect(malformed.observe(bad, 256)?.status).to.equal(400);
    const fine = new NpyGather({ pool: p, widen, budget: unlimited(), total: body.length, maxElements: NPY_MAX_ELEMENTS });
    expect(fine.observe(body, 256)).to.equal(undefined);
    await fine.release();
  });

  it('holds workspaces of uploads in flight within its budget, and gives them back', async () => {
    const body = encodeNpy('float32', [n], Buffer.from(new Float32Array(values(n)).buffer));
    const p = pool();
    const budget = new ByteBudget({ limit: 2 * (n * 8 + n * 4) }).open('t'); // room for one workspace of n float64, not two
    const first = new NpyGather({ pool: p, widen, budget, total: body.length, maxElements: NPY_MAX_ELEMENTS });
    const second = new NpyGather({ pool: p, widen, budget, total: body.length, maxElements: NPY_MAX_ELEMENTS });
    feed(first, p, body, [65536]);
    feed(second, p, body, [65536]);
    expect((await first.finish())?.values).to.be.instanceOf(Float64Array);
    expect(await second.finish(), 'over the budget: left to the engine').to.equal(null);
    expect(budget.bytes).to.equal(n * 8);
    await first.release();
    await second.release();
    expect(budget.bytes).to.equal(0);
    const third = new NpyGather({ pool: p, widen, budget, total: body.length, maxElements: NPY_MAX_ELEMENTS });
    feed(third, p, body, [65536]);
    expect((await third.finish())?.values).to.be.instanceOf(Float64Array);
    await third.release();
  });
});
