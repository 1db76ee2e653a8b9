// The blob store SVC_GATE_BLOB_URL names: the private folder <dataDir>/blobs (one node, swept at start
// with no grace), a folder every node mounts, or S3-compatible storage (both shared, so swept with a grace).
import path from 'node:path';
import type { Config } from '../config.js';
import { FileBlobStore, type BlobStore } from './blobs.js';

export interface OpenedBlobs {
  blobs: BlobStore;
  /** Age under which the start-up sweep leaves an unclaimed blob alone (BlobStore.sweep). */
  sweepGraceMs: number;
  /** Where the blobs are, for the log (never a credential). */
  where: string;
  close(): void;
}

export async function openBlobStore(config: Config): Promise<OpenedBlobs> {
  const url = config.blobUrl;
  if (url === undefined) {
    const dir = path.join(config.dataDir, 'blobs');
    return { blobs: await FileBlobStore.open(dir), sweepGraceMs: 0, where: dir, close: () => undefined };
  }
  const sweepGraceMs = config.blobSweepGraceS * 1000;
  if (!url.startsWith('s3://')) return { blobs: await FileBlobStore.open(url), sweepGraceMs, where: url, close: () => undefined };
  // The S3 client loads only for an s3:// URL: one node on files never loads it.
  const { S3BlobStore } = await import('./s3-blobs.js');
  const s3 = new S3BlobStore({
    url,
    endpoint: config.s3Endpoint,
    region: config.s3Region ?? 'us-east-1',
    forcePathStyle: config.s3ForcePathStyle === 'true',
    credentials:
      config.s3AccessKeyId && config.s3SecretAccessKey
        ? { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey }
        : undefined,
  });
  try {
    await s3.check();
  } catch (err) {
    s3.close();
    const e = err as Error;
    throw new Error(
      `SVC_GATE_BLOB_URL: cannot list ${url}${config.s3Endpoint ? ` at ${config.s3Endpoint}` : ''} (${e.name}: ${e.message})`,
    );
  }
  return { blobs: s3, sweepGraceMs, where: url, close: () => s3.close() };
}
