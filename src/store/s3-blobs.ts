// Blobs in S3-compatible object storage (AWS S3, Ceph radosgw, MinIO, ...), for nodes that share one
// store: the same header + payload objects as the file store, under `<prefix>blobs/<id>`. A PUT is
// atomic, so an object is complete once write() resolves and its row commits only after that; reads
// verify the checksum as the file store's do. Nodes write while another sweeps, so the sweep removes
// only unclaimed objects older than a grace period (see BlobStore.sweep).
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import {
  BLOB_HEADER_BYTES,
  BLOB_ID_RE,
  BlobCorrupted,
  checkRangeHeader,
  newBlob,
  verifiedPayload,
  type BlobKind,
  type BlobRef,
  type BlobStore,
  type BlobSweepResult,
} from './blobs.js';
import { parseS3Url } from './blob-url.js';

export interface S3BlobOptions {
  /** `s3://bucket` or `s3://bucket/prefix`. */
  url: string;
  /** Endpoint of an S3-compatible server (unset: AWS's endpoint for the region). */
  endpoint?: string;
  region: string;
  /** Bucket in the path (`endpoint/bucket/key`) rather than the host name: what most non-AWS servers want. */
  forcePathStyle: boolean;
  /** Unset: the SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

const isMissing = (err: unknown): boolean =>
  err instanceof NoSuchKey || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly keyPrefix: string;
  bytesRead = 0;

  constructor(opts: S3BlobOptions) {
    const where = parseS3Url(opts.url);
    if (!where) throw new Error(`not an s3://bucket/prefix URL: ${opts.url}`);
    this.bucket = where.bucket;
    this.keyPrefix = `${where.prefix}blobs/`;
    const config: S3ClientConfig = {
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      // The blob header carries its own SHA-256, verified on every read; the SDK's default CRC
      // trailers (aws-chunked uploads) are not understood by every S3-compatible server.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    if (opts.endpoint) config.endpoint = opts.endpoint;
    if (opts.credentials) config.credentials = opts.credentials;
    this.client = new S3Client(config);
  }

  private keyOf(id: string): string {
    if (!BLOB_ID_RE.test(id)) throw new Error(`bad blob id ${id}`);
    return this.keyPrefix + id;
  }

  /** Fails (with the server's error) when the bucket is missing or the credentials are refused. */
  async check(): Promise<void> {
    await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.keyPrefix, MaxKeys: 1 }));
  }

  async write(kind: BlobKind, payload: Uint8Array): Promise<BlobRef> {
    const { id, checksum, header } = await newBlob(kind, payload);
    const body = Buffer.concat([header, payload]);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.keyOf(id), Body: body, ContentLength: body.length }));
    return { id, checksum, fileBytes: BLOB_HEADER_BYTES + payload.byteLength };
  }

  async read(id: string, kind: BlobKind, checksum: string): Promise<Buffer> {
    let stored: Buffer | null;
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(id) }));
      stored = res.Body ? Buffer.from(await res.Body.transformToByteArray()) : null;
    } catch (err) {
      if (!isMissing(err)) throw err;
      stored = null;
    }
    const payload = await verifiedPayload(stored, kind, checksum);
    this.bytesRead += payload.length;
    return payload;
  }

  /** Bytes `first..last` (inclusive) of an object, and the object's whole size from Content-Range. */
  private async getRange(id: string, first: number, last: number): Promise<{ bytes: Buffer; size: number }> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.keyOf(id), Range: `bytes=${first}-${last}` }),
      );
      const bytes = res.Body ? Buffer.from(await res.Body.transformToByteArray()) : Buffer.alloc(0);
      const size = Number(/\/(\d+)$/.exec(res.ContentRange ?? '')?.[1] ?? NaN);
      return { bytes, size };
    } catch (err) {
      if (isMissing(err)) throw new BlobCorrupted('the stored data of this entry is missing');
      throw err;
    }
  }

  async readRange(id: string, kind: BlobKind, expectedLength: number, offset: number, length: number): Promise<Buffer> {
    const head = await this.getRange(id, 0, BLOB_HEADER_BYTES - 1);
    checkRangeHeader(head.bytes, head.size, kind, expectedLength, offset, length);
    if (length === 0) return Buffer.alloc(0);
    const part = await this.getRange(id, BLOB_HEADER_BYTES + offset, BLOB_HEADER_BYTES + offset + length - 1);
    if (part.bytes.length !== length) throw new BlobCorrupted('the stored data of this entry has the wrong length');
    this.bytesRead += length;
    const out = Buffer.alloc(length); // a fresh buffer: 8-byte aligned
    part.bytes.copy(out);
    return out;
  }

  async remove(id: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(id) }));
  }

  /** Every blob object, page by page (1000 keys a page). */
  private async *objects(): AsyncGenerator<{ id: string; size: number; modifiedMs: number }> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.keyPrefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) {
        const id = o.Key?.slice(this.keyPrefix.length) ?? '';
        if (BLOB_ID_RE.test(id)) yield { id, size: o.Size ?? 0, modifiedMs: o.LastModified?.getTime() ?? Date.now() };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async sweep(isLive: (id: string) => boolean, graceMs = 0): Promise<BlobSweepResult> {
    const before = Date.now() - graceMs;
    let orphans = 0;
    for await (const o of this.objects()) {
      if (isLive(o.id) || (graceMs > 0 && o.modifiedMs >= before)) continue;
      await this.remove(o.id);
      orphans++;
    }
    return { orphans, temps: 0 };
  }

  async usage(): Promise<{ bytes: number; files: number }> {
    let bytes = 0;
    let files = 0;
    for await (const o of this.objects()) {
      bytes += o.size;
      files++;
    }
    return { bytes, files };
  }

  close(): void {
    this.client.destroy();
  }
}
