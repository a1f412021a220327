import { startS3rver, type S3rverHandle } from './s3rver.ts';

export const storageKinds = ['local', 's3'] as const;
export type StorageKind = (typeof storageKinds)[number];

/**
 * The environment a test server needs for a storage provider (s3: a fresh s3rver, also handed back
 * as `s3` so tests can look at it directly), and how to stop it.
 */
export async function storageEnv(kind: StorageKind): Promise<{ env: Record<string, string>; stop: () => Promise<void>; s3?: S3rverHandle }> {
  if (kind === 'local') return { env: {}, stop: async () => {} };
  const s3rver = await startS3rver();
  return {
    env: s3Env(s3rver),
    stop: () => s3rver.stop(),
    s3: s3rver,
  };
}

/** The variables that point Hoard at an s3rver. */
export function s3Env(s3rver: S3rverHandle): Record<string, string> {
  return {
    STORAGE: 's3',
    S3_ENDPOINT: s3rver.endpoint,
    S3_BUCKET: s3rver.bucket,
    S3_REGION: s3rver.region,
    S3_ACCESS_KEY_ID: s3rver.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3rver.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
  };
}
