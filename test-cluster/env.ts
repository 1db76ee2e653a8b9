// The servers these tests run against, from the env file `scripts/cluster.sh services` writes
// (source it first). A missing one fails the suite: these tests never pass by skipping.
export interface ClusterEnv {
  redisUrl: string;
  s3: { endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string };
}

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is unset: run \`bash scripts/cluster.sh services\` and source the env file it prints`);
  return v;
}

export function clusterEnv(): ClusterEnv {
  return {
    redisUrl: need('TTSTORE_TEST_REDIS_URL'),
    s3: {
      endpoint: need('TTSTORE_TEST_S3_ENDPOINT'),
      bucket: need('TTSTORE_TEST_S3_BUCKET'),
      accessKeyId: need('TTSTORE_TEST_S3_ACCESS_KEY_ID'),
      secretAccessKey: need('TTSTORE_TEST_S3_SECRET_ACCESS_KEY'),
    },
  };
}

/** The SVC_GATE_* variables of a node on these servers, its blobs under `prefix` of the bucket. */
export function nodeEnv(env: ClusterEnv, prefix: string): Record<string, string> {
  return {
    SVC_GATE_REDIS_URL: env.redisUrl,
    SVC_GATE_BLOB_URL: `s3://${env.s3.bucket}/${prefix}`,
    SVC_GATE_S3_ENDPOINT: env.s3.endpoint,
    SVC_GATE_S3_ACCESS_KEY_ID: env.s3.accessKeyId,
    SVC_GATE_S3_SECRET_ACCESS_KEY: env.s3.secretAccessKey,
  };
}
