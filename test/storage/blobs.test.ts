import { expect } from 'chai';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BlobCorrupted, FileBlobStore } from '../../src/store/blobs.js';
import { decodeCores, encodeCores } from '../../src/store/cores.js';

describe('blob store', () => {
  let dir: string;
  let store: FileBlobStore;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-blobs-'));
    store = await FileBlobStore.open(path.join(dir, 'blobs'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const expectCorrupt = async (p: Promise<unknown>) => {
    try {
      await p;
      expect.fail('read succeeded');
    } catch (err) {
      expect(err).to.be.instanceOf(BlobCorrupted);
      expect((err as BlobCorrupted).message).to.match(/^the stored data of this entry /);
    }
  };

  it('writes a blob under a random id and reads back the same bytes', async () => {
    const payload = Buffer.from('some bytes \u0000\u00ff');
    const ref = await store.write('raw', payload);
    expect(ref.id).to.match(/^[0-9a-f]{32}$/);
    expect(ref.checksum).to.match(/^[0-9a-f]{64}$/);
    const back = await store.read(ref.id, 'raw', ref.checksum);
    expect(back.equals(payload)).to.equal(true);
    expect(back.byteOffset % 8).to.equal(0);
  });

  it("answers a flipped byte, a wrong expected checksum, a wrong kind or a missing file with BlobCorrupted (the service's data_corrupted)", async () => {
    const ref = await store.write('raw', Buffer.alloc(1000, 7));
    await expectCorrupt(store.read(ref.id, 'raw', 'f'.repeat(64)));
    await expectCorrupt(store.read(ref.id, 'cores', ref.checksum));
    const file = store.pathOf(ref.id);
    const bytes = await readFile(file);
    bytes[64 + 500] ^= 1;
    await writeFile(file, bytes);
    await expectCorrupt(store.read(ref.id, 'raw', ref.checksum));
    await writeFile(file, bytes.subarray(0, 100));
    await expectCorrupt(store.read(ref.id, 'raw', ref.checksum));
    await store.remove(ref.id);
    await expectCorrupt(store.read(ref.id, 'raw', ref.checksum));
  });

  it('reads a range of a payload (header, kind and length checked), and counts the payload bytes it reads', async () => {
    const payload = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
    const ref = await store.write('raw', payload);
    const before = store.bytesRead;
    const part = await store.readRange(ref.id, 'raw', 1000, 100, 37);
    expect(part.equals(payload.subarray(100, 137))).to.equal(true);
    expect(part.byteOffset % 8).to.equal(0);
    expect(store.bytesRead - before).to.equal(37);
    await store.read(ref.id, 'raw', ref.checksum);
    expect(store.bytesRead - before).to.equal(37 + 1000);
    await expectCorrupt(store.readRange(ref.id, 'cores', 1000, 0, 10));
    await expectCorrupt(store.readRange(ref.id, 'raw', 999, 0, 10)); // not the length its row records
    let threw = false;
    await store.readRange(ref.id, 'raw', 1000, 990, 11).catch(() => (threw = true));
    expect(threw, 'a range past the end').to.equal(true);
    const file = store.pathOf(ref.id);
    await writeFile(file, (await readFile(file)).subarray(0, 500));
    await expectCorrupt(store.readRange(ref.id, 'raw', 1000, 0, 10));
    await store.remove(ref.id);
    await expectCorrupt(store.readRange(ref.id, 'raw', 1000, 0, 10));
  });

  it('hashes large payloads off the event loop and still verifies them', async () => {
    const big = Buffer.alloc(6 << 20, 3);
    const ref = await store.write('raw', big);
    expect((await store.read(ref.id, 'raw', ref.checksum)).equals(big)).to.equal(true);
  });

  it('sweeps temp files and blobs nobody claims, keeping the live ones', async () => {
    const live = await store.write('raw', Buffer.from('live'));
    const orphan = await store.write('raw', Buffer.from('orphan'));
    const tmp = path.join(store.dir, 'ab', `${'ab'.padEnd(32, '0')}.tmp`);
    await writeFile(tmp, 'half');
    const swept = await store.sweep((id) => id === live.id);
    expect(swept).to.deep.equal({ orphans: 1, temps: 1 });
    expect(await readdir(path.dirname(tmp))).to.not.include(path.basename(tmp));
    expect((await store.read(live.id, 'raw', live.checksum)).toString()).to.equal('live');
    try {
      await store.read(orphan.id, 'raw', orphan.checksum);
      expect.fail('orphan still there');
    } catch (err) {
      expect(err).to.be.instanceOf(BlobCorrupted);
    }
  });
});

describe('cores payload', () => {
  it('round-trips float32 and float64 trains', () => {
    for (const Arr of [Float32Array, Float64Array]) {
      const make = (n: number, f: (i: number) => number) => new Arr(Array.from({ length: n }, (_, i) => f(i)));
      const tt = {
        modes: [2, 3, 2],
        ranks: [1, 2, 3, 1],
        cores: [make(4, (i) => i + 0.5), make(18, (i) => -i), make(6, (i) => i * i)],
      } as never;
      const buf = encodeCores(tt);
      const aligned = Buffer.alloc(buf.length);
      buf.copy(aligned);
      const back = decodeCores(aligned);
      expect(back.modes).to.deep.equal([2, 3, 2]);
      expect(back.ranks).to.deep.equal([1, 2, 3, 1]);
      expect(back.cores[1]).to.be.instanceOf(Arr);
      expect([...back.cores[2]!]).to.deep.equal([0, 1, 4, 9, 16, 25]);
    }
  });
  it('refuses damaged payloads', () => {
    const buf = encodeCores({ modes: [2], ranks: [1, 1], cores: [new Float64Array([1, 2])] });
    expect(() => decodeCores(buf.subarray(0, buf.length - 1))).to.throw();
    expect(() => decodeCores(Buffer.concat([buf, Buffer.alloc(8)]))).to.throw();
  });
});
