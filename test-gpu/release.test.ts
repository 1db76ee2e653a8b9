// On a CUDA device: cores placed for an entry leave the device once the entry is deleted.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Database } from '../src/store/sqlite/db.js';
import { FileBlobStore } from '../src/store/blobs.js';
import { ENTRY_MIGRATIONS } from '../src/store/sqlite/migrations/entries.js';
import { resolveTarget } from '../src/entries/oracle.js';
import { engine } from '../src/engine/index.js';
import { releaseGpuCoresOnRemoval } from '../src/routes/storage/read.js';
import { requireGpu, smoothField } from './helpers.js';
import { testEntryService } from '../test/helpers/entries.js';

describe('GPU cores released on delete', function () {
  before(function () {
    requireGpu(this);
  });

  it('a deleted entry is no longer resident; another stays', async function () {
    this.timeout(60000);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'ttstore-gpu-release-'));
    const db = await Database.open(path.join(dir, 'ttstore.db'), ENTRY_MIGRATIONS);
    const blobs = await FileBlobStore.open(path.join(dir, 'blobs'));
    const svc = testEntryService(db, blobs);
    const rows: Array<{ id: number }> = [];
    try {
      releaseGpuCoresOnRemoval(svc, engine.gpu);
      for (const key of ['a', 'b']) {
        const x = Float64Array.from(smoothField(1 << 16, key === 'a' ? 10 : 20));
        const row = await svc.put({
          tenantId: 't',
          namespace: 'default',
          key,
          metadata: {},
          payload: { kind: 'array', dtype: 'float64', shape: [1 << 16], data: Buffer.from(x.buffer) },
          target: resolveTarget(undefined, 1e-6, undefined),
        });
        rows.push(row);
        await engine.gpu!.place(0, row.id, await svc.readCores(row));
        expect(engine.gpu!.resident(0, row.id)).to.equal(true);
      }
      await svc.delete('t', 'default', 'a');
      expect(engine.gpu!.resident(0, rows[0]!.id)).to.equal(false);
      expect(engine.gpu!.resident(0, rows[1]!.id)).to.equal(true);
    } finally {
      for (const row of rows) engine.gpu!.evict(row.id);
      svc.stop();
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
