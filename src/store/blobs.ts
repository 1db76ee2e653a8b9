// Blobs (TT cores and uncompressed payloads): the BlobStore interface, the format every
// implementation stores, and the local-filesystem implementation (the default; also right for a POSIX
// folder every node mounts). src/store/s3-blobs.ts keeps the same objects in S3-compatible storage. A
// blob is named by a random id, never by anything a client chose, so no key can reach outside the
// store. Every blob is a 64-byte header followed by the payload:
//
//   0  "TTSBLOB1"          8 bytes magic
//   8  kind                u8 (1 raw, 2 cores)
//  16  payload length      u64 LE
//  24  SHA-256 of payload  32 bytes
//  56  reserved            8 bytes (zero)
//
// write() resolves only once the blob is complete and durable (here: temp file -> fsync -> rename ->
// fsync(directory)); the metadata row that names it is committed only after that. Reads verify the
// checksum against both the header and the caller's expected value (the row's): a mismatch is a
// BlobCorrupted error (the entries service answers it as 500 data_corrupted), never wrong data.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

export type BlobKind = 'raw' | 'cores';

export interface BlobRef {
  id: string;
  /** Hex SHA-256 of the payload. */
  checksum: string;
  /** Bytes on disk, header included. */
  fileBytes: number;
}

export interface BlobSweepResult {
  orphans: number;
  temps: number;
}

/** Where blobs live; every implementation keeps the format above and its guarantees. */
export interface BlobStore {
  /** Store `payload` under a fresh id; resolves once the blob is complete and durable. */
  write(kind: BlobKind, payload: Uint8Array): Promise<BlobRef>;
  /**
   * The payload of blob `id`, verified against `checksum` (the value recorded with the metadata row).
   * The returned buffer starts at an 8-byte aligned offset of its own ArrayBuffer.
   */
  read(id: string, kind: BlobKind, checksum: string): Promise<Buffer>;
  /**
   * Bytes [offset, offset + length) of blob `id`'s payload, for a part of a large passthrough entry:
   * the header is checked (magic, kind, the payload length against the stored size and `expectedLength`),
   * but not the checksum, which covers the whole payload only (read() verifies it). 8-byte aligned.
   */
  readRange(id: string, kind: BlobKind, expectedLength: number, offset: number, length: number): Promise<Buffer>;
  /** Payload bytes read since start (whole reads and ranges), for the metrics. */
  readonly bytesRead: number;
  /** Remove a blob (missing is fine). */
  remove(id: string): Promise<void>;
  /**
   * Remove temp files and every blob `isLive` does not claim, of those older than `graceMs`. 0 removes
   * them all: only while no write is in flight (one node, at start). Nodes sharing a store pass more than
   * the longest gap between a blob's write and its row's commit, so a write in flight elsewhere is safe.
   */
  sweep(isLive: (id: string) => boolean, graceMs?: number): Promise<BlobSweepResult>;
  /** Bytes (headers included) and count of the stored blobs. */
  usage(): Promise<{ bytes: number; files: number }>;
}

const MAGIC = Buffer.from('TTSBLOB1', 'latin1');
export const BLOB_HEADER_BYTES = 64;
const KIND_CODE: Record<BlobKind, number> = { raw: 1, cores: 2 };
export const BLOB_ID_RE = /^[0-9a-f]{32}$/;
/** Payloads up to this size are hashed on the event loop (under ~2 ms); larger ones off it. */
const SYNC_HASH_MAX = 4 << 20;

/** Hex SHA-256; large inputs are hashed on the thread pool (WebCrypto) so the event loop stays free. */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  if (data.byteLength <= SYNC_HASH_MAX) return createHash('sha256').update(data).digest('hex');
  const digest = await globalThis.crypto.subtle.digest('SHA-256', data);
  return Buffer.from(digest).toString('hex');
}

/** A blob that is missing, damaged, or not the one its row names: its data cannot be returned. */
export class BlobCorrupted extends Error {
  override readonly name = 'BlobCorrupted';
}

const corrupted = (detail: string): BlobCorrupted => new BlobCorrupted(detail);

/** A fresh blob: its id, checksum and header, for a store to write header + payload under the id. */
export async function newBlob(kind: BlobKind, payload: Uint8Array): Promise<{ id: string; checksum: string; header: Buffer }> {
  const id = randomBytes(16).toString('hex');
  const checksum = await sha256Hex(payload);
  const header = Buffer.alloc(BLOB_HEADER_BYTES);
  MAGIC.copy(header, 0);
  header[8] = KIND_CODE[kind];
  header.writeBigUInt64LE(BigInt(payload.byteLength), 16);
  Buffer.from(checksum, 'hex').copy(header, 24);
  return { id, checksum, header };
}

/**
 * Check a stored blob's header (its first BLOB_HEADER_BYTES or fewer) against `kind`, and its payload
 * length against the stored size (`storedBytes`, header included) and, when given, the row's length.
 */
function checkHeader(header: Buffer, kind: BlobKind, storedBytes: number, expectedLength?: number): void {
  if (header.length < BLOB_HEADER_BYTES || !MAGIC.equals(header.subarray(0, 8)) || header[8] !== KIND_CODE[kind]) {
    throw corrupted('the stored data of this entry has a damaged header');
  }
  const len = header.readBigUInt64LE(16);
  if (len !== BigInt(storedBytes - BLOB_HEADER_BYTES) || (expectedLength !== undefined && len !== BigInt(expectedLength))) {
    throw corrupted('the stored data of this entry has the wrong length');
  }
}

/** The payload of a stored blob (`null`: missing) once its header, length and checksum check out. */
export async function verifiedPayload(stored: Buffer | null, kind: BlobKind, checksum: string): Promise<Buffer> {
  if (stored === null) throw corrupted('the stored data of this entry is missing');
  checkHeader(stored, kind, stored.length);
  const payload = stored.subarray(BLOB_HEADER_BYTES);
  const actual = await sha256Hex(payload);
  if (actual !== checksum || stored.subarray(24, 56).toString('hex') !== checksum) {
    throw corrupted('the stored data of this entry failed its checksum');
  }
  return payload.byteOffset % 8 === 0 ? payload : Buffer.from(payload);
}

/**
 * Check a stored blob's header for a range read: magic, kind, and the payload length against the stored
 * size and the length its row records; then the range against that length.
 */
export function checkRangeHeader(
  header: Buffer,
  storedBytes: number,
  kind: BlobKind,
  expectedLength: number,
  offset: number,
  length: number,
): void {
  checkHeader(header, kind, storedBytes, expectedLength);
  if (offset < 0 || length < 0 || offset + length > expectedLength) throw new RangeError('blob range out of bounds');
}

/** Blob files under a directory, in 256 fan-out folders by the id's first two hex digits. */
export class FileBlobStore implements BlobStore {
  bytesRead = 0;

  private constructor(readonly dir: string) {}

  /** Create the directory tree, private (0700) like its files (0600). */
  static async open(dir: string): Promise<FileBlobStore> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const subdirs = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
    await Promise.all(subdirs.map((s) => mkdir(path.join(dir, s), { recursive: true, mode: 0o700 })));
    await fsyncDir(dir);
    await fsyncDir(path.dirname(dir));
    return new FileBlobStore(dir);
  }

  private fileOf(id: string, suffix = '.blob'): string {
    if (!BLOB_ID_RE.test(id)) throw new Error(`bad blob id ${id}`);
    return path.join(this.dir, id.slice(0, 2), id + suffix);
  }

  async write(kind: BlobKind, payload: Uint8Array): Promise<BlobRef> {
    const { id, checksum, header } = await newBlob(kind, payload);
    const tmp = this.fileOf(id, '.tmp');
    const final = this.fileOf(id);
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writev([header, payload]);
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    await fh.close();
    await rename(tmp, final);
    await fsyncDir(path.dirname(final));
    return { id, checksum, fileBytes: BLOB_HEADER_BYTES + payload.byteLength };
  }

  async read(id: string, kind: BlobKind, checksum: string): Promise<Buffer> {
    let file: Buffer | null;
    try {
      file = await readFile(this.fileOf(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      file = null;
    }
    const payload = await verifiedPayload(file, kind, checksum);
    this.bytesRead += payload.length;
    return payload;
  }

  async readRange(id: string, kind: BlobKind, expectedLength: number, offset: number, length: number): Promise<Buffer> {
    let fh;
    try {
      fh = await open(this.fileOf(id), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw corrupted('the stored data of this entry is missing');
      throw err;
    }
    try {
      const header = Buffer.alloc(BLOB_HEADER_BYTES);
      const { bytesRead: got } = await fh.read(header, 0, BLOB_HEADER_BYTES, 0);
      checkRangeHeader(header.subarray(0, got), (await fh.stat()).size, kind, expectedLength, offset, length);
      const out = Buffer.alloc(length); // a fresh buffer: 8-byte aligned
      let done = 0;
      while (done < length) {
        const { bytesRead: n } = await fh.read(out, done, length - done, BLOB_HEADER_BYTES + offset + done);
        if (n === 0) throw corrupted('the stored data of this entry has the wrong length');
        done += n;
      }
      this.bytesRead += length;
      return out;
    } finally {
      await fh.close();
    }
  }

  async remove(id: string): Promise<void> {
    await unlink(this.fileOf(id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** Path of a blob file, for tests that damage one on purpose. */
  pathOf(id: string): string {
    return this.fileOf(id);
  }

  async sweep(isLive: (id: string) => boolean, graceMs = 0): Promise<BlobSweepResult> {
    const before = Date.now() - graceMs;
    const old = async (file: string): Promise<boolean> =>
      graceMs <= 0 || ((await stat(file).catch(() => null))?.mtimeMs ?? Infinity) < before;
    let orphans = 0;
    let temps = 0;
    for (const sub of await readdir(this.dir)) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      const subdir = path.join(this.dir, sub);
      for (const name of await readdir(subdir)) {
        const m = /^([0-9a-f]{32})\.(blob|tmp)$/.exec(name);
        if (!m || (m[2] === 'blob' && isLive(m[1]!))) continue;
        const file = path.join(subdir, name);
        if (!(await old(file))) continue;
        await unlink(file).catch(() => undefined);
        if (m[2] === 'tmp') temps++;
        else orphans++;
      }
    }
    return { orphans, temps };
  }

  async usage(): Promise<{ bytes: number; files: number }> {
    let bytes = 0;
    let files = 0;
    for (const sub of await readdir(this.dir).catch(() => [] as string[])) {
      const subdir = path.join(this.dir, sub);
      const names = await readdir(subdir).catch(() => [] as string[]);
      const sizes = await Promise.all(
        names
          .filter((n) => n.endsWith('.blob'))
          .map((n) =>
            stat(path.join(subdir, n)).then(
              (st) => st.size,
              () => 0,
            ),
          ),
      );
      for (const size of sizes) bytes += size;
      files += sizes.length;
    }
    return { bytes, files };
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
