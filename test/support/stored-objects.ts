import fs from 'node:fs';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../src/db/schema.ts';
import { startS3rver, type S3rverHandle } from './s3rver.ts';
import { s3Env } from './storage-env.ts';

export type Provider = 'local' | 's3';
export const providers: Provider[] = ['local', 's3'];

/**
 * The storage provider a test server runs on: the environment to give startTestServer, and ways
 * to look at what is really stored, independent of the server's own storage code.
 */
export interface StorageUnderTest {
  provider: Provider;
  env: Record<string, string>;
  /** Keys of stored objects under `prefix` (local: files under DATA_DIR/files). */
  keys(dataDir: string, prefix?: string): Promise<string[]>;
  /** Leftovers of interrupted writes: local temp files, or S3 multipart uploads never completed nor aborted. */
  leftovers(dataDir: string): Promise<string[]>;
  stop(): Promise<void>;
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

export async function storageUnderTest(provider: Provider): Promise<StorageUnderTest> {
  if (provider === 'local') {
    return {
      provider,
      env: {},
      async keys(dataDir, prefix = '') {
        const root = path.join(dataDir, 'files');
        return walk(root)
          .map((file) => path.relative(root, file).split(path.sep).join('/'))
          .filter((key) => key.startsWith(prefix));
      },
      async leftovers(dataDir) {
        return walk(path.join(dataDir, 'tmp'));
      },
      async stop() {},
    };
  }
  const s3rver: S3rverHandle = await startS3rver();
  const client = new S3Client({
    endpoint: s3rver.endpoint,
    region: s3rver.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3rver.accessKeyId, secretAccessKey: s3rver.secretAccessKey },
  });
  return {
    provider,
    env: s3Env(s3rver),
    async keys(_dataDir, prefix = '') {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket: s3rver.bucket, Prefix: prefix, ContinuationToken: token }));
        keys.push(...(page.Contents ?? []).map((object) => object.Key!));
        token = page.NextContinuationToken;
      } while (token);
      return keys;
    },
    async leftovers(dataDir) {
      // Parts spooled to disk before an S3 part upload live in DATA_DIR/tmp too.
      return [...(await s3rver.pendingUploadIds()), ...walk(path.join(dataDir, 'tmp'))];
    },
    async stop() {
      client.destroy();
      await s3rver.stop();
    },
  };
}

/**
 * What an account has in storage is exactly what its file records name, and its `usedBytes` is
 * their sizes' sum: no bytes without a record, no record without bytes, no quota drift.
 */
export async function expectStoredAsRecorded(server: { dataDir: string; ctx: { db: Kysely<Database> } }, storage: StorageUnderTest, userId: string): Promise<void> {
  const files = await server.ctx.db.selectFrom('files').select(['storageKey', 'thumbnailKey', 'size']).where('userId', '=', userId).execute();
  // A file's thumbnail (contract §10) is stored beside its bytes.
  const keys = files.flatMap((f) => (f.thumbnailKey === null ? [f.storageKey] : [f.storageKey, f.thumbnailKey]));
  expect((await storage.keys(server.dataDir, `files/${userId}/`)).sort()).toEqual(keys.sort());
  const user = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', userId).executeTakeFirstOrThrow();
  expect(Number(user.usedBytes)).toBe(files.reduce((sum, f) => sum + Number(f.size), 0));
}
