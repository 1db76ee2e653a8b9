// Cores placed by serve target gpu leave the device when their entry can no longer be read: the
// wiring between the entries service and GPU placement, with a recording placement (CPU builds);
// test-gpu/release.test.ts checks the same against a real device.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Database } from '../../src/store/sqlite/db.js';
import { FileBlobStore } from '../../src/store/blobs.js';
import { EntryService } from '../../src/entries/service.js';
import { ENTRY_MIGRATIONS } from '../../src/store/sqlite/migrations/entries.js';
import { resolveTarget } from '../../src/entries/oracle.js';
import type { GpuPlacement } from '../../src/engine/gpu.js';
import { releaseGpuCoresOnRemoval } from '../../src/routes/storage/read.js';
import { testEntryService } from '../helpers/entries.js';

describe('GPU cores released on delete and purge', () => {
  let dir: string;
  let db: Database;
  let svc: EntryService;
  const evicted: number[] = [];
  const gpu: GpuPlacement = {
    place: () => Promise.reject(new Error('not used')),
    evict: (id) => {
      evicted.push(id);
      return true;
    },
    resident: () => false,
    setBudget: () => {},
    stats: () => ({ entries: 0, bytes: 0, budgetBytes: 0, evictions: 0 }),
  };
  const put = (key: string, tenantId = 't1') =>
    svc.put({
      tenantId,
      namespace: 'default',
      key,
      metadata: {},
      payload: { kind: 'blob', dtype: 'uint8', shape: [3], data: Buffer.from('abc') },
      target: resolveTarget(undefined, undefined, undefined),
    });

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-gpu-release-'));
    db = await Database.open(path.join(dir, 'ttstore.db'), ENTRY_MIGRATIONS);
    const blobs = await FileBlobStore.open(path.join(dir, 'blobs'));
    svc = testEntryService(db, blobs);
    evicted.length = 0;
    releaseGpuCoresOnRemoval(svc, gpu);
  });
  afterEach(async () => {
    svc.stop();
    await db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('evicts every version of a deleted key and nothing on a put', async () => {
    const a1 = await put('a');
    const a2 = await put('a');
    await put('b');
    expect(evicted).to.deep.equal([]);
    await svc.delete('t1', 'default', 'a');
    expect([...evicted].sort((x, y) => x - y)).to.deep.equal([a1.id, a2.id].sort((x, y) => x - y));
  });

  it('evicts every entry of a purged tenant and none of another tenant', async () => {
    const a = await put('a');
    const b = await put('b');
    const other = await put('a', 't2');
    await svc.purgeTenant('t1');
    expect([...evicted].sort((x, y) => x - y)).to.deep.equal([a.id, b.id].sort((x, y) => x - y));
    expect(evicted).to.not.include(other.id);
  });
});
