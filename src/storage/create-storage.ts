import { join } from 'node:path';
import { LocalStorage } from './local.ts';
import type { S3StorageOptions } from './s3.ts';
import type { Storage } from './storage.ts';

export async function createStorage(options: {
  kind: 'local' | 's3';
  dataDir: string;
  s3?: Omit<S3StorageOptions, 'tmpDir'>;
}): Promise<Storage> {
  // Temp files live under dataDir so local renames stay on one filesystem and S3 part spooling
  // does not fill a small (often RAM-backed) /tmp.
  const tmpDir = join(options.dataDir, 'tmp');
  if (options.kind === 'local') return new LocalStorage({ root: join(options.dataDir, 'files'), tmpDir });
  if (!options.s3) throw new Error('S3 storage needs s3 options');
  // The AWS SDK is loaded only when S3 is configured: it is the largest dependency by far (about
  // 20 MiB of resident memory), which a local-disk instance should not carry.
  const { S3Storage } = await import('./s3.ts');
  return new S3Storage({ ...options.s3, tmpDir });
}
