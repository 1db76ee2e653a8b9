// Blob files (TT cores and uncompressed payloads) under <dataDir>/blobs/. A blob is named by a random
// id, never by anything a client chose, so no key can reach outside the directory. Every file is a
// 64-byte header followed by the payload:
//
//   0  "TTSBLOB1"          8 bytes magic
//   8  kind                u8 (1 raw, 2 cores)
//  16  payload length      u64 LE
//  24  SHA-256 of payload  32 bytes
//  56  reserved            8 bytes (zero)
//
// Writes go temp file -> fsync -> rename -> fsync(directory), so once write() resolves the blob survives
// a crash; the metadata row that names it is committed only after that. Reads verify the checksum
// against both the header and the caller's expected value (the row's): a mismatch is a BlobCorrupted
// error (the entries service answers it as 500 data_corrupted), never wrong data.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

export type BlobKind = 'raw' | 'cores';

export interface BlobRef {
  id: string;
  /** Hex SHA-256 of the payload. */
  checksum: string;
  /** Bytes on disk, header included. */
  fileBytes: number;
}

const MAGIC = Buffer.from('TTSBLOB1', 'latin1');
export const BLOB_HEADER_BYTES = 64;
const KIND_CODE: Record<BlobKind, number> = { raw: 1, cores: 2 };
const ID_RE = /^[0-9a-f]{32}$/;
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

export interface BlobLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class BlobStore {
  /** Payload bytes read from blob files since start (whole reads and ranges), for the metrics. */
  bytesRead = 0;

  private constructor(readonly dir: string) {}

  /** Create the directory tree (256 fan-out folders by the id's first two hex digits), private (0700) like its files (0600). */
  static async open(dir: string): Promise<BlobStore> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const subdirs = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
    await Promise.all(subdirs.map((s) => mkdir(path.join(dir, s), { recursive: true, mode: 0o700 })));
    await fsyncDir(dir);
    await fsyncDir(path.dirname(dir));
    return new BlobStore(dir);
  }

  private fileOf(id: string, suffix = '.blob'): string {
    if (!ID_RE.test(id)) throw new Error(`bad blob id ${id}`);
    return path.join(this.dir, id.slice(0, 2), id + suffix);
  }

  /** Write `payload` durably under a fresh id; resolves once file and directory entry are on disk. */
  async write(kind: BlobKind, payload: Uint8Array): Promise<BlobRef> {
    const id = randomBytes(16).toString('hex');
    const checksum = await sha256Hex(payload);
    const header = Buffer.alloc(BLOB_HEADER_BYTES);
    MAGIC.copy(header, 0);
    header[8] = KIND_CODE[kind];
    header.writeBigUInt64LE(BigInt(payload.byteLength), 16);
    Buffer.from(checksum, 'hex').copy(header, 24);
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

  /**
   * The payload of blob `id`, verified against `checksum` (the value recorded with the metadata row).
   * The returned buffer starts at an 8-byte aligned offset of its own ArrayBuffer.
   */
  async read(id: string, kind: BlobKind, checksum: string): Promise<Buffer> {
    let file: Buffer;
    try {
      file = await readFile(this.fileOf(id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw corrupted('the stored data of this entry is missing');
      throw err;
    }
    if (file.length < BLOB_HEADER_BYTES || !MAGIC.equals(file.subarray(0, 8)) || file[8] !== KIND_CODE[kind]) {
      throw corrupted('the stored data of this entry has a damaged header');
    }
    const len = file.readBigUInt64LE(16);
    if (len !== BigInt(file.length - BLOB_HEADER_BYTES)) throw corrupted('the stored data of this entry has the wrong length');
    const payload = file.subarray(BLOB_HEADER_BYTES);
    this.bytesRead += payload.length;
    const actual = await sha256Hex(payload);
    if (actual !== checksum || file.subarray(24, 56).toString('hex') !== checksum) {
      throw corrupted('the stored data of this entry failed its checksum');
    }
    return payload.byteOffset % 8 === 0 ? payload : Buffer.from(payload);
  }

  /**
   * Bytes [offset, offset + length) of blob `id`'s payload, for a part of a large passthrough entry:
   * the header is checked (magic, kind, the payload length against the file's and `expectedLength`),
   * but not the checksum, which covers the whole payload only (read() verifies it). 8-byte aligned.
   */
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
      const size = (await fh.stat()).size;
      if (got < BLOB_HEADER_BYTES || !MAGIC.equals(header.subarray(0, 8)) || header[8] !== KIND_CODE[kind]) {
        throw corrupted('the stored data of this entry has a damaged header');
      }
      const len = header.readBigUInt64LE(16);
      if (len !== BigInt(size - BLOB_HEADER_BYTES) || len !== BigInt(expectedLength)) {
        throw corrupted('the stored data of this entry has the wrong length');
      }
      if (offset < 0 || length < 0 || offset + length > expectedLength) throw new RangeError('blob range out of bounds');
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

  /** Remove a blob (missing is fine). */
  async remove(id: string): Promise<void> {
    await unlink(this.fileOf(id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** Path of a blob file, for tests that damage one on purpose. */
  pathOf(id: string): string {
    return this.fileOf(id);
  }

  /**
   * Remove temp files and every blob `isLive` does not claim. Call only while no write is in flight
   * (at start, before listening): a blob is written before its row commits.
   */
  async sweep(isLive: (id: string) => boolean): Promise<{ orphans: number; temps: number }> {
    let orphans = 0;
    let temps = 0;
    for (const sub of await readdir(this.dir)) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      const subdir = path.join(this.dir, sub);
      for (const name of await readdir(subdir)) {
        const m = /^([0-9a-f]{32})\.(blob|tmp)$/.exec(name);
        if (!m) continue;
        if (m[2] === 'tmp') {
          await unlink(path.join(subdir, name)).catch(() => undefined);
          temps++;
        } else if (!isLive(m[1]!)) {
          await unlink(path.join(subdir, name)).catch(() => undefined);
          orphans++;
        }
      }
    }
    return { orphans, temps };
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
