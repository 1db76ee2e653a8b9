// The S3 blob store against a real S3 server (radosgw): what the file store guarantees, the
// same way: verified reads, and a sweep that spares live blobs and young ones.
import { randomBytes } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { expect } from 'chai';
import { BlobCorrupted } from '../src/store/blobs.js';
import { S3BlobStore } from '../src/store/s3-blobs.js';
import { clusterEnv } from './env.js';

describe('cluster: blobs in S3-compatible storage', () => {
  const env = clusterEnv();
  const prefix = `test-${randomBytes(4).toString('hex')}`;
  const key = (id: string) => `${prefix}/blobs/${id}`;
  const store = new S3BlobStore({
    url: `s3://${env.s3.bucket}/${prefix}`,
    endpoint: env.s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: env.s3.accessKeyId, secretAccessKey: env.s3.secretAccessKey },
  });
  const raw = new S3Client({
    endpoint: env.s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: env.s3.accessKeyId, secretAccessKey: env.s3.secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  after(async () => {
    await store.sweep(() => false);
    store.close();
    raw.destroy();
  });

  const expectCorrupt = async (p: Promise<unknown>, detail: RegExp) => {
    try {
      await p;
      expect.fail('read succeeded');
    } catch (err) {
      expect(err).to.be.instanceOf(BlobCorrupted);
      expect((err as Error).message).to.match(detail);
    }
  };

  it('puts a blob under a random id and gets back the same bytes, 8-byte aligned', async () => {
    const payload = randomBytes(3 << 20);
    const ref = await store.write('cores', payload);
    expect(ref.id).to.match(/^[0-9a-f]{32}$/);
    expect(ref.fileBytes).to.equal(64 + payload.length);
    const back = await store.read(ref.id, 'cores', ref.checksum);
    expect(back.equals(payload)).to.equal(true);
    expect(back.byteOffset % 8).to.equal(0);
  });

  it('reads a byte range of a payload with two ranged GETs, counting only the range', async () => {
    const payload = randomBytes(1000);
    const ref = await store.write('raw', payload);
    const before = store.bytesRead;
    const part = await store.readRange(ref.id, 'raw', 1000, 100, 37);
    expect(part.equals(payload.subarray(100, 137))).to.equal(true);
    expect(part.byteOffset % 8).to.equal(0);
    expect(store.bytesRead - before).to.equal(37);
    await expectCorrupt(store.readRange(ref.id, 'cores', 1000, 0, 10), /damaged header/);
    await expectCorrupt(store.readRange(ref.id, 'raw', 999, 0, 10), /wrong length/); // not the row's length
    let threw = false;
    await store.readRange(ref.id, 'raw', 1000, 990, 11).catch(() => (threw = true));
    expect(threw).to.equal(true);
    await store.remove(ref.id);
    await expectCorrupt(store.readRange(ref.id, 'raw', 1000, 0, 10), /missing/);
  });

  it('refuses a damaged object, a wrong checksum, a wrong kind and a missing object (BlobCorrupted)', async () => {
    const ref = await store.write('raw', Buffer.alloc(1000, 7));
    await expectCorrupt(store.read(ref.id, 'raw', 'f'.repeat(64)), /failed its checksum/);
    await expectCorrupt(store.read(ref.id, 'cores', ref.checksum), /damaged header/);
    const got = await raw.send(new GetObjectCommand({ Bucket: env.s3.bucket, Key: key(ref.id) }));
    const bytes = Buffer.from(await got.Body!.transformToByteArray());
    bytes[64 + 500]! ^= 1;
    await raw.send(new PutObjectCommand({ Bucket: env.s3.bucket, Key: key(ref.id), Body: bytes }));
    await expectCorrupt(store.read(ref.id, 'raw', ref.checksum), /failed its checksum/);
    await store.remove(ref.id);
    await expectCorrupt(store.read(ref.id, 'raw', ref.checksum), /missing/);
    await store.remove(ref.id); // removing a missing blob is fine
  });

  it('sweeps unclaimed objects older than the grace period; live and young ones stay', async () => {
    const live = await store.write('raw', Buffer.from('live'));
    const orphan = await store.write('raw', Buffer.from('orphan'));
    await raw.send(new PutObjectCommand({ Bucket: env.s3.bucket, Key: `${prefix}/blobs/not-a-blob`, Body: 'x' }));
    // Another node's write in flight: its object exists, its row not yet. A grace period spares it.
    expect(await store.sweep((id) => id === live.id, 60_000)).to.deep.equal({ orphans: 0, temps: 0 });
    await store.read(orphan.id, 'raw', orphan.checksum);
    const swept = await store.sweep((id) => id === live.id, 0);
    expect(swept.orphans).to.be.at.least(1);
    await expectCorrupt(store.read(orphan.id, 'raw', orphan.checksum), /missing/);
    expect((await store.read(live.id, 'raw', live.checksum)).toString()).to.equal('live');
    expect(await store.usage()).to.deep.equal({ bytes: 64 + 4, files: 1 });
  });
});
