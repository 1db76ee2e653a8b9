// What SVC_GATE_BLOB_URL may say, in one place (the configuration checks it, the blob stores read it).

/** The bucket and key prefix (empty, or ending in '/') of an `s3://bucket/prefix` URL; null when it is not one. */
export function parseS3Url(url: string): { bucket: string; prefix: string } | null {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/([A-Za-z0-9._/-]*))?$/.exec(url);
  if (!m) return null;
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: m[1]!, prefix: prefix === '' ? '' : `${prefix}/` };
}
