// The service process keeps freed heap memory for reuse (src/runtime/process-memory.ts): with glibc's default
// trimming, each 16 MiB upload page-faulted its 4,096 pages of socket buffers again, about 10 ms of
// system time in a 50 ms put on 2 cores.
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { ENGINE_INVALID, retainFreedMemory } from '../../src/engine/index.js';
import { MALLOC_SETTINGS } from '../../src/runtime/process-memory.js';
import { npyOf, smoothField, storageSuite } from '../storage/helpers.js';

const glibc = Boolean((process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime);

/** Minor page faults of a process so far (Linux: field 10 of /proc/<pid>/stat). */
async function minorFaults(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // from field 3 (state) on
  return Number(fields[10 - 3]);
}

describe('operations: the service keeps freed memory for the next request', function () {
  this.timeout(120000);

  it('keeps 64 MiB free at the top of a heap and maps blocks of 32 MiB and more on their own', () => {
    expect(MALLOC_SETTINGS).to.deep.equal({ trimThresholdBytes: 64 << 20, mmapThresholdBytes: 32 << 20 });
  });

  it('applies the settings under glibc, and says so', function () {
    if (!glibc) this.skip();
    expect(retainFreedMemory(MALLOC_SETTINGS)).to.equal(true);
  });

  it('refuses thresholds glibc would not take, before changing anything', () => {
    const refused = (trim: number, mmap: number) => {
      try {
        retainFreedMemory({ trimThresholdBytes: trim, mmapThresholdBytes: mmap });
      } catch (err) {
        return err as Error & { code?: string };
      }
      throw new Error(`accepted ${trim}, ${mmap}`);
    };
    for (const [trim, mmap] of [
      [-1, 0],
      [0, (32 << 20) + 1],
      [2 ** 31, 0],
      [1.5, 0],
      [Number.NaN, 0],
    ] as const) {
      const err = refused(trim, mmap);
      expect(err.name, `${trim}, ${mmap}`).to.be.oneOf(['RangeError', 'TypeError']);
      expect(err.code).to.equal(ENGINE_INVALID);
    }
  });

  describe('a running server', () => {
    const s = storageSuite();

    it('page-faults a few pages, not one per 4 KiB received, for each 16 MiB binary put', async function () {
      if (!glibc || process.platform !== 'linux') this.skip();
      const n = 2048; // 2048 x 2048 float32: 16 MiB, compressed (the storage benchmark's put)
      const body = npyOf('float32', [n, n], smoothField(n, Float32Array));
      const put = async (i: number) => {
        const r = await s.c.call('POST', `/v1/put?key=field${i}`, { body, headers: { 'content-type': 'application/x-npy' } });
        expect(r.status, r.text).to.equal(200);
        expect(r.body.compressed).to.equal(true);
      };
      // The first puts grow the heap to what two uploads in flight need, and fill the buffer pools.
      for (let i = 0; i < 4; i++) await put(i);
      const pid = s.server.proc.pid!;
      const perPut: number[] = [];
      for (let i = 4; i < 12; i++) {
        const before = await minorFaults(pid);
        await put(i);
        perPut.push((await minorFaults(pid)) - before);
      }
      perPut.sort((a, b) => a - b);
      // 4,096 pages arrive; with glibc's default trimming each put faulted about 4,100 of them.
      expect(perPut[Math.floor(perPut.length / 2)], `faults per put: ${perPut.join(', ')}`).to.be.below(512);
    });
  });
});
