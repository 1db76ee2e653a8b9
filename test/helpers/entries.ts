// The entry service the unit suites and benches build over a database and blob store they opened
// themselves: the engine, a 4 KiB compression threshold, 30-day retention and a silent log.
import { engine } from '../../src/engine/index.js';
import { EntryService, type EntryServiceOptions } from '../../src/entries/service.js';
import type { BlobStore } from '../../src/store/blobs.js';
import type { Database } from '../../src/store/sqlite/db.js';
import { SqliteEntryStore } from '../../src/store/sqlite/entries.js';

export const SILENT_LOG = { info() {}, warn() {}, error() {} };

export function testEntryService(db: Database, blobs: BlobStore, more: Partial<EntryServiceOptions> = {}): EntryService {
  return new EntryService({
    store: new SqliteEntryStore(db),
    blobs,
    engine,
    compressionThresholdBytes: 4096,
    retentionDays: 30,
    log: SILENT_LOG,
    ...more,
  });
}
