// CPU/GPU parity through the addon: compress (same ranks within 1, both errors within the target),
// reconstruct and fingerprint, and batched dot products against device-resident cores (1e-9 relative
// in float64). The backend is switched per call with setBackend, so both sides run in one process.
import { expect } from 'chai';
import { engine, native, type TensorTrain } from '../src/engine/index.js';
import { relDiff, requireGpu, smoothField } from './helpers.js';

async function onBackend<T>(backend: 'cpu' | 'cuda', f: () => Promise<T>): Promise<T> {
  native().setBackend(backend);
  try {
    return await f();
  } finally {
    native().setBackend('auto');
  }
}

describe('GPU parity with the CPU backend', function () {
  before(function () {
    requireGpu(this);
  });

  for (const [n, tol, dtype] of [
    [1 << 20, 1e-6, 'float64'],
    [1 << 22, 1e-4, 'float32'],
    [1 << 16, 1e-9, 'float64'],
    [3 << 16, 1e-5, 'float32'],
  ] as const) {
    it(`compress 2^${Math.log2(n).toFixed(1)} ${dtype} at tolerance ${tol}: same ranks within 1, both within the target`, async () => {
      const x64 = smoothField(n);
      const data = dtype === 'float32' ? Float32Array.from(x64) : x64;
      const cpu = await onBackend('cpu', () => engine.compress(data, dtype, [n], { tolerance: tol }));
      const gpu = await onBackend('cuda', () => engine.compress(data, dtype, [n], { tolerance: tol }));
      expect(gpu.tt.ranks.length).to.equal(cpu.tt.ranks.length);
      gpu.tt.ranks.forEach((r, k) => expect(Math.abs(r - cpu.tt.ranks[k]!), `bond ${k}`).to.be.at.most(1));
      expect(cpu.fingerprint.relative_error).to.be.at.most(tol);
      expect(gpu.fingerprint.relative_error).to.be.at.most(tol);
      expect(gpu.compressible).to.equal(cpu.compressible);
    });
  }

  for (const dtype of ['float64', 'float32', 'float16', 'int32', 'uint8'] as const) {
    it(`reconstruct (${dtype}) agrees within 1e-9, its fingerprint within 1e-6 (errors are differences of near values)`, async () => {
      const n = 1 << 18;
      const x = smoothField(n, 25).map((v) => v * 50);
      const { tt } = await engine.compress(x, 'float64', [n], { tolerance: 1e-7 });
      const ref = (await onBackend('cpu', () => engine.reconstruct(tt, [n], 'row_major', dtype))).data;
      const cpu = await onBackend('cpu', () => engine.reconstruct(tt, [n], 'row_major', dtype, ref));
      const gpu = await onBackend('cuda', () => engine.reconstruct(tt, [n], 'row_major', dtype, ref));
      const size = ref.byteLength / n;
      let differ = 0;
      for (let i = 0; i < ref.byteLength; i += size) {
        if (
          Buffer.compare(
            Buffer.from(gpu.data.buffer, gpu.data.byteOffset + i, size),
            Buffer.from(cpu.data.buffer, cpu.data.byteOffset + i, size),
          ) !== 0
        )
          differ++;
      }
      if (dtype === 'float64') {
        const a = new Float64Array(gpu.data.buffer, gpu.data.byteOffset, n);
        const b = new Float64Array(cpu.data.buffer, cpu.data.byteOffset, n);
        for (let i = 0; i < n; i++) expect(Math.abs(a[i]! - b[i]!)).to.be.at.most(1e-9 * Math.max(1, Math.abs(b[i]!)));
      } else if (dtype !== 'float32') {
        expect(differ / n).to.be.at.most(1e-3); // another summation order rarely flips a rounding
      }
      const fc = await onBackend('cpu', () => engine.fingerprint(tt, [n], 'row_major', x, 'float64'));
      const fg = await onBackend('cuda', () => engine.fingerprint(tt, [n], 'row_major', x, 'float64'));
      expect(relDiff(fg.frobenius_error, fc.frobenius_error)).to.be.at.most(1e-6); // a difference of small numbers
      expect(relDiff(fg.relative_error, fc.relative_error)).to.be.at.most(1e-6);
      const largest = x.reduce((m, v) => Math.max(m, Math.abs(v)), 0); // a spread of 2^20 arguments overflows the stack
      expect(Math.abs(fg.max_abs_error - fc.max_abs_error)).to.be.at.most(1e-9 * largest);
    });
  }

  it('regions, coarse levels and points read from the cores agree within 1e-9 (float64), in both layouts', async () => {
    const shape = [512, 1024];
    const x = smoothField(512 * 1024, 30);
    // Integer-valued points, C order, deterministic.
    const points = new Float64Array(2 * 20000);
    for (let i = 0; i < 20000; i++) {
      points[2 * i] = (i * 7919) % 512;
      points[2 * i + 1] = (i * 104729) % 1024;
    }
    const selections = [
      {
        region: [
          [0, 512, 1],
          [0, 1024, 1],
        ] as Array<[number, number, number]>,
      },
      {
        region: [
          [500, 3, -3],
          [1, 1001, 2],
        ] as Array<[number, number, number]>,
      },
      {
        level: [2, 3],
        region: [
          [0, 128, 1],
          [0, 128, 1],
        ] as Array<[number, number, number]>,
      },
      { points },
      { level: [1, 1], points: points.map((v) => Math.floor(v / 2)) },
    ];
    // Through the engine only the points reach the kernel (the backend keeps regions and levels on
    // the CPU core); test_cuda_parity checks the kernel itself on regions and levels.
    for (const layout of ['row_major', 'interleaved'] as const) {
      const { tt } = await engine.compress(x, 'float64', shape, { tolerance: 1e-8, layout });
      expect(Math.max(...tt.ranks), 'ranks the selection kernel takes').to.be.at.most(64);
      for (const [i, sel] of selections.entries()) {
        const cpu = await onBackend('cpu', () => engine.reconstructSelection(tt, shape, layout, 'float64', sel));
        const gpu = await onBackend('cuda', () => engine.reconstructSelection(tt, shape, layout, 'float64', sel));
        expect(gpu.byteLength, `${layout} selection ${i}`).to.equal(cpu.byteLength);
        const a = new Float64Array(gpu.buffer, gpu.byteOffset, gpu.byteLength / 8);
        const b = new Float64Array(cpu.buffer, cpu.byteOffset, cpu.byteLength / 8);
        for (let j = 0; j < b.length; j++) {
          expect(Math.abs(a[j]! - b[j]!), `${layout} selection ${i} value ${j}`).to.be.at.most(1e-9 * Math.max(1, Math.abs(b[j]!)));
        }
      }
    }
  });

  it('batched dot against resident cores equals the CPU contraction within 1e-9', async () => {
    const pool = engine.createOperandPool();
    const n = 1 << 14;
    const q = (await engine.compress(smoothField(n, 10), 'float64', [n], { tolerance: 1e-8 })).tt;
    await pool.addTrain(-1, q);
    const ids: number[] = [];
    const trains: TensorTrain[] = [];
    for (let j = 1; j <= 300; j++) {
      const x = smoothField(n, 5 + (j % 37)).map((v, i) => v + 0.01 * Math.sin((j * i) / n));
      const { tt } = await engine.compress(j % 2 ? Float32Array.from(x) : x, j % 2 ? 'float32' : 'float64', [n], { tolerance: 1e-5 });
      trains.push(tt);
      await pool.addTrain(9_000_000 + j, tt);
      ids.push(9_000_000 + j);
    }
    const idv = Float64Array.from(ids);
    const norms = new Float64Array(ids.length).fill(1);
    const qn = await pool.norm(-1);
    native().setBackend('cuda');
    for (const metric of ['dot', 'cosine', 'euclidean'] as const) {
      const cpu = await pool.score(-1, qn, idv, norms, metric); // nothing resident yet: CPU
      for (let j = 0; j < ids.length; j++) await engine.gpu!.place(0, ids[j]!, trains[j]!);
      const gpu = await pool.score(-1, qn, idv, norms, metric);
      for (let j = 0; j < ids.length; j++) expect(relDiff(gpu[j]!, cpu[j]!), `${metric} ${j}`).to.be.at.most(1e-9);
      for (const id of ids) engine.gpu!.evict(id);
    }
  });
});
