import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../src/storage/local.ts';
import { S3Storage } from '../../src/storage/s3.ts';
import { StorageLimitError, StorageNotFoundError, StoragePartError } from '../../src/storage/storage.ts';
import type { Storage } from '../../src/storage/storage.ts';
import { startS3rver } from '../support/s3rver.ts';
import type { S3rverHandle } from '../support/s3rver.ts';

const MiB = 1024 * 1024;

interface Backend {
  storage: Storage;
  /** Temp files, or multipart uploads, that are neither finished nor cleaned up. */
  leftovers(): Promise<string[]>;
}

/** Streams the buffer in small chunks, so nothing in the storage layer sees it whole. */
function streamOf(data: Buffer, chunkSize = 64 * 1024): Readable {
  return Readable.from(
    (function* () {
      for (let offset = 0; offset < data.length; offset += chunkSize) yield data.subarray(offset, offset + chunkSize);
    })(),
  );
}

/** A source that never ends unless the consumer stops reading. */
function endlessStream(): Readable {
  const chunk = randomBytes(64 * 1024);
  return Readable.from(
    (function* () {
      for (;;) yield chunk;
    })(),
  );
}

/** Sends some bytes and then fails, like a client that disconnects mid-upload. */
function failingStream(bytesBeforeFailure: number): Readable {
  return Readable.from(
    (async function* () {
      yield* streamOf(randomBytes(bytesBeforeFailure));
      throw new Error('client went away');
    })(),
  );
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

let keyCounter = 0;
function freshKey(): string {
  keyCounter += 1;
  return `files/user-${keyCounter}/${randomBytes(6).toString('hex')}`;
}

function storageContract(name: string, setup: () => Backend) {
  describe(`${name} storage contract`, { timeout: 60_000 }, () => {
    let backend: Backend;
    let storage: Storage;
    beforeEach(() => {
      backend = setup();
      storage = backend.storage;
    });

    it('round-trips a multi-MiB stream', async () => {
      const key = freshKey();
      const data = randomBytes(7 * MiB + 123);
      expect(await storage.put(key, streamOf(data), { contentType: 'application/octet-stream' })).toEqual({
        size: data.length,
      });
      const stored = await storage.get(key);
      expect(stored.size).toBe(data.length);
      expect(sha256(await readAll(stored.stream))).toBe(sha256(data));
    });

    it('puts a batch whose names are made durable together, then serves each', async () => {
      const keys = [freshKey(), freshKey(), freshKey()];
      const data = keys.map((_, i) => randomBytes(1000 + i));
      for (const [i, key] of keys.entries()) expect(await storage.put(key, streamOf(data[i]!), { deferNameSync: true })).toEqual({ size: data[i]!.length });
      await storage.syncNames(keys);
      await storage.syncNames([]);
      for (const [i, key] of keys.entries()) expect((await readAll((await storage.get(key)).stream)).equals(data[i]!)).toBe(true);
      expect(await backend.leftovers()).toEqual([]);
    });

    it('serves inclusive byte ranges and reports the total size', async () => {
      const key = freshKey();
      const data = randomBytes(MiB + 17);
      await storage.put(key, streamOf(data));
      const cases = [
        { start: 0, end: 99 },
        { start: 500_000, end: 600_123 },
        { start: data.length - 10, end: data.length - 1 },
      ];
      for (const range of cases) {
        const stored = await storage.get(key, range);
        expect(stored.size).toBe(data.length);
        expect((await readAll(stored.stream)).equals(data.subarray(range.start, range.end + 1))).toBe(true);
      }
      await expect(storage.get(key, { start: data.length, end: data.length + 5 })).rejects.toBeInstanceOf(RangeError);
    });

    it('stats existing and missing keys', async () => {
      const key = freshKey();
      await storage.put(key, streamOf(Buffer.from('hello')));
      expect(await storage.stat(key)).toEqual({ size: 5 });
      expect(await storage.stat(freshKey())).toBeNull();
    });

    it('deletes, and a deleted key is not found', async () => {
      const key = freshKey();
      await storage.put(key, streamOf(Buffer.from('bye')));
      await storage.delete(key);
      await expect(storage.get(key)).rejects.toBeInstanceOf(StorageNotFoundError);
      expect(await storage.stat(key)).toBeNull();
      await storage.delete(key);
    });

    it('stops an over-limit body while streaming and leaves nothing behind', async () => {
      const key = freshKey();
      // An endless source only terminates if the limit is enforced as bytes arrive.
      await expect(storage.put(key, endlessStream(), { maxBytes: 6 * MiB })).rejects.toBeInstanceOf(StorageLimitError);
      expect(await storage.stat(key)).toBeNull();
      await expect(storage.put(key, streamOf(randomBytes(1025)), { maxBytes: 1024 })).rejects.toBeInstanceOf(
        StorageLimitError,
      );
      expect(await storage.stat(key)).toBeNull();
      expect(await backend.leftovers()).toEqual([]);
    });

    it('accepts a body of exactly maxBytes', async () => {
      const key = freshKey();
      expect(await storage.put(key, streamOf(randomBytes(1024)), { maxBytes: 1024 })).toEqual({ size: 1024 });
    });

    it('leaves nothing behind when the source fails, and keeps an existing object', async () => {
      const key = freshKey();
      await expect(storage.put(key, failingStream(6 * MiB))).rejects.toThrow('client went away');
      expect(await storage.stat(key)).toBeNull();

      const previous = randomBytes(1000);
      await storage.put(key, streamOf(previous));
      await expect(storage.put(key, failingStream(MiB))).rejects.toThrow('client went away');
      expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(previous));
      expect(await backend.leftovers()).toEqual([]);
    });

    it('assembles a multipart upload in part order', async () => {
      const key = freshKey();
      const parts = [randomBytes(5 * MiB), randomBytes(5 * MiB), randomBytes(1024)];
      const { uploadId } = await storage.createMultipart(key, 'application/octet-stream');
      // Upload out of order, with and without a declared length, to exercise both paths.
      const third = await storage.uploadPart(key, uploadId, 3, streamOf(parts[2]!), { contentLength: 1024 });
      const first = await storage.uploadPart(key, uploadId, 1, streamOf(parts[0]!), { maxBytes: 64 * MiB });
      const second = await storage.uploadPart(key, uploadId, 2, streamOf(parts[1]!), { contentLength: 5 * MiB });
      for (const [part, data] of [[first, parts[0]!], [second, parts[1]!], [third, parts[2]!]] as const) {
        expect(part.size).toBe(data.length);
        // ETags are bare hex MD5s, whichever backend produced them.
        expect(part.etag).toBe(createHash('md5').update(data).digest('hex'));
      }
      const result = await storage.completeMultipart(key, uploadId, [
        { partNumber: 1, etag: first.etag },
        { partNumber: 2, etag: second.etag },
        { partNumber: 3, etag: third.etag },
      ]);
      const whole = Buffer.concat(parts);
      expect(result).toEqual({ size: whole.length });
      const stored = await storage.get(key);
      expect(stored.size).toBe(whole.length);
      expect(sha256(await readAll(stored.stream))).toBe(sha256(whole));
      expect(await backend.leftovers()).toEqual([]);
    });

    it('replaces a part that is sent again', async () => {
      const key = freshKey();
      const stale = randomBytes(5 * MiB);
      const fresh = randomBytes(5 * MiB);
      const tail = randomBytes(10);
      const { uploadId } = await storage.createMultipart(key);
      await storage.uploadPart(key, uploadId, 1, streamOf(stale));
      const first = await storage.uploadPart(key, uploadId, 1, streamOf(fresh));
      const second = await storage.uploadPart(key, uploadId, 2, streamOf(tail));
      await storage.completeMultipart(key, uploadId, [
        { partNumber: 1, etag: `"${first.etag}"` },
        { partNumber: 2, etag: second.etag },
      ]);
      expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(Buffer.concat([fresh, tail])));
      expect(await backend.leftovers()).toEqual([]);
    });

    it('enforces part limits and declared lengths', async () => {
      const key = freshKey();
      const { uploadId } = await storage.createMultipart(key);
      await expect(
        storage.uploadPart(key, uploadId, 1, streamOf(randomBytes(10)), { contentLength: 2048, maxBytes: 1024 }),
      ).rejects.toBeInstanceOf(StorageLimitError);
      await expect(
        storage.uploadPart(key, uploadId, 1, endlessStream(), { maxBytes: MiB }),
      ).rejects.toBeInstanceOf(StorageLimitError);
      await expect(
        storage.uploadPart(key, uploadId, 1, streamOf(randomBytes(100)), { contentLength: 200 }),
      ).rejects.toThrow(/declared/);
      await expect(
        storage.uploadPart(key, uploadId, 1, streamOf(randomBytes(300)), { contentLength: 200 }),
      ).rejects.toThrow(/declared/);
      await storage.abortMultipart(key, uploadId);
      expect(await backend.leftovers()).toEqual([]);
    });

    it('aborts a multipart upload', async () => {
      const key = freshKey();
      const { uploadId } = await storage.createMultipart(key);
      const part = await storage.uploadPart(key, uploadId, 1, streamOf(randomBytes(1000)));
      await storage.abortMultipart(key, uploadId);
      await expect(storage.completeMultipart(key, uploadId, [{ partNumber: 1, ...part }])).rejects.toThrow();
      expect(await storage.stat(key)).toBeNull();
      // Aborting twice, or an upload that never existed, is not an error.
      await storage.abortMultipart(key, uploadId);
      expect(await backend.leftovers()).toEqual([]);
    });
  });
}

// Local storage ------------------------------------------------------------------------------

let localDirs: string[] = [];
afterEach(async () => {
  await Promise.all(localDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  localDirs = [];
});

function localBackend(): Backend & { storage: LocalStorage; dir: string } {
  // LocalStorage creates its directories on demand, so a fresh unique path is all it needs.
  const dir = join(tmpdir(), `hoard-local-${randomBytes(8).toString('hex')}`);
  localDirs.push(dir);
  const tmpDir = join(dir, 'tmp');
  return {
    dir,
    storage: new LocalStorage({ root: join(dir, 'files'), tmpDir }),
    async leftovers() {
      // Every contract test ends with its uploads completed or aborted, so nothing may remain.
      const entries = await readdir(tmpDir, { recursive: true }).catch(() => []);
      return entries.filter((entry) => entry !== 'multipart');
    },
  };
}

storageContract('local', localBackend);

describe('local storage specifics', () => {
  it('reports its target as the absolute root', () => {
    const backend = localBackend();
    expect(backend.storage.target).toBe(`local:${join(backend.dir, 'files')}`);
  });

  it('rejects keys that could escape the root', async () => {
    const { storage } = localBackend();
    const bad = ['../outside', 'files/../../outside', '/etc/passwd', 'files/a\0b', '', 'files//a', './files/a', 'a/'];
    for (const key of bad) {
      await expect(storage.put(key, streamOf(Buffer.from('x'))), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.get(key), key).rejects.toThrow(/Invalid storage key/);
      await expect(storage.createMultipart(key), key).rejects.toThrow(/Invalid storage key/);
    }
    await expect(storage.abortMultipart('files/a', '../../files')).rejects.toThrow(/Invalid upload id/);
  });

  it('makes its directories again when they were removed behind its back', async () => {
    const backend = localBackend();
    const { storage } = backend;
    await storage.put('files/someone/a', streamOf(Buffer.from('a')));
    await rm(join(backend.dir, 'files', 'files', 'someone'), { recursive: true });
    await rm(join(backend.dir, 'tmp'), { recursive: true });
    await storage.put('files/someone/b', streamOf(Buffer.from('b')), { deferNameSync: true });
    await storage.syncNames(['files/someone/b']);
    expect((await readAll((await storage.get('files/someone/b')).stream)).toString()).toBe('b');
    expect(await storage.stat('files/someone/a')).toBeNull();
  });

  it('creates objects from bytes in memory with blocking calls, in new and known directories, and again after its directories were removed', async () => {
    const backend = localBackend();
    const { storage } = backend;
    await storage.createBlocking('files/someone/a', Buffer.from('first'));
    await storage.createBlocking('files/someone/b', Buffer.alloc(0));
    expect(await storage.stat('files/someone/b')).toEqual({ size: 0 });
    // Only new keys: an existing object is never written over.
    await expect(storage.createBlocking('files/someone/a', Buffer.from('other'))).rejects.toMatchObject({ code: 'EEXIST' });
    expect((await readAll((await storage.get('files/someone/a')).stream)).toString()).toBe('first');
    await rm(join(backend.dir, 'files', 'files', 'someone'), { recursive: true });
    await storage.createBlocking('files/someone/c', Buffer.from('third'));
    await storage.syncNames(['files/someone/c']);
    expect((await readAll((await storage.get('files/someone/c')).stream)).toString()).toBe('third');
    expect(await storage.stat('files/someone/a')).toBeNull();
    await expect(storage.createBlocking('../outside', Buffer.from('x'))).rejects.toThrow(/Invalid storage key/);
    expect(await readdir(backend.dir)).toEqual(['files']);
  });

  it('treats a key below an existing file as missing', async () => {
    const { storage } = localBackend();
    await storage.put('files/a', streamOf(Buffer.from('x')));
    expect(await storage.stat('files/a/b')).toBeNull();
    await expect(storage.get('files/a/b')).rejects.toBeInstanceOf(StorageNotFoundError);
    await expect(storage.get('files')).rejects.toBeInstanceOf(StorageNotFoundError);
  });

  it('refuses to complete with a stale ETag, a missing part or unsorted parts', async () => {
    const { storage } = localBackend();
    const key = 'files/multi';
    const { uploadId } = await storage.createMultipart(key);
    const stale = await storage.uploadPart(key, uploadId, 1, streamOf(Buffer.from('old')));
    const current = await storage.uploadPart(key, uploadId, 1, streamOf(Buffer.from('new')));
    const second = await storage.uploadPart(key, uploadId, 2, streamOf(Buffer.from('two')));
    await expect(storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: stale.etag }])).rejects.toThrow(
      StoragePartError,
    );
    await expect(storage.completeMultipart(key, uploadId, [{ partNumber: 3, etag: current.etag }])).rejects.toThrow(
      /never uploaded/,
    );
    await expect(
      storage.completeMultipart(key, uploadId, [
        { partNumber: 2, etag: second.etag },
        { partNumber: 1, etag: current.etag },
      ]),
    ).rejects.toBeInstanceOf(StoragePartError);
    await expect(storage.completeMultipart('files/other', uploadId, [{ partNumber: 1, ...current }])).rejects.toThrow(
      /another key/,
    );
    // Failed attempts leave the upload intact for a corrected retry.
    await storage.completeMultipart(key, uploadId, [
      { partNumber: 1, etag: current.etag },
      { partNumber: 2, etag: second.etag },
    ]);
    expect((await readAll((await storage.get(key)).stream)).toString()).toBe('newtwo');
  });

  it('returns no presigned URL', async () => {
    const { storage } = localBackend();
    const { uploadId } = await storage.createMultipart('files/x');
    expect(await storage.presignPart('files/x', uploadId, 1, 60)).toBeNull();
  });
});

describe('local multipart assembly (parts sent in order are appended, not copied)', () => {
  const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
  const uploadDir = (dir: string, uploadId: string) => join(dir, 'tmp', 'multipart', uploadId);

  it('renames the assembled parts into place without copying them', async () => {
    const { storage, dir, leftovers } = localBackend();
    const key = 'files/in-order';
    const parts = [randomBytes(3 * MiB + 5), randomBytes(2 * MiB), randomBytes(777)];
    const { uploadId } = await storage.createMultipart(key);
    const stored = [];
    for (const [index, data] of parts.entries()) stored.push(await storage.uploadPart(key, uploadId, index + 1, streamOf(data), { contentLength: data.length }));
    expect(stored.map((p) => p.etag)).toEqual(parts.map(md5));
    const assembly = await stat(join(uploadDir(dir, uploadId), 'assembly'));
    expect(assembly.size).toBe(3 * MiB + 5 + 2 * MiB + 777);
    const result = await storage.completeMultipart(key, uploadId, stored.map((p, i) => ({ partNumber: i + 1, etag: p.etag })));
    expect(result).toEqual({ size: assembly.size });
    // The same file, renamed: the assembled bytes were written once.
    expect((await stat(join(dir, 'files', key))).ino).toBe(assembly.ino);
    expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(Buffer.concat(parts)));
    expect(await leftovers()).toEqual([]);
  });

  it('appends the parts that came out of order to the assembled prefix', async () => {
    const { storage, leftovers } = localBackend();
    const key = 'files/mixed';
    const parts = [randomBytes(MiB), randomBytes(MiB + 1), randomBytes(10), randomBytes(MiB)];
    const { uploadId } = await storage.createMultipart(key);
    const etags = new Map<number, string>();
    for (const n of [2, 1, 4, 3]) etags.set(n, (await storage.uploadPart(key, uploadId, n, streamOf(parts[n - 1]!))).etag);
    await storage.completeMultipart(key, uploadId, [1, 2, 3, 4].map((n) => ({ partNumber: n, etag: etags.get(n)! })));
    expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(Buffer.concat(parts)));
    expect(await leftovers()).toEqual([]);
  });

  it('replaces an assembled part that is sent again, refusing its old ETag', async () => {
    const { storage } = localBackend();
    const key = 'files/resent';
    const [old, fresh, second] = [randomBytes(MiB), randomBytes(MiB), randomBytes(MiB)];
    const { uploadId } = await storage.createMultipart(key);
    const stale = await storage.uploadPart(key, uploadId, 1, streamOf(old!));
    const two = await storage.uploadPart(key, uploadId, 2, streamOf(second!));
    const one = await storage.uploadPart(key, uploadId, 1, streamOf(fresh!));
    await expect(storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: stale.etag }, { partNumber: 2, etag: two.etag }])).rejects.toThrow(
      `Part 1 has ETag ${one.etag}, not ${stale.etag}`,
    );
    await storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: one.etag }, { partNumber: 2, etag: two.etag }]);
    expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(Buffer.concat([fresh!, second!])));
  });

  it('completes with fewer parts than were assembled, and a failed completion keeps every part', async () => {
    const { storage, leftovers } = localBackend();
    const key = 'files/subset';
    const parts = [randomBytes(MiB), randomBytes(MiB), randomBytes(MiB)];
    const { uploadId } = await storage.createMultipart(key);
    const stored = [];
    for (const [index, data] of parts.entries()) stored.push(await storage.uploadPart(key, uploadId, index + 1, streamOf(data)));
    await expect(storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: stored[0]!.etag }, { partNumber: 4, etag: stored[2]!.etag }])).rejects.toThrow(
      /never uploaded/,
    );
    // Parts 1 and 3 only: part 2's bytes sit between them in the assembly, so they are copied.
    await storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: stored[0]!.etag }, { partNumber: 3, etag: stored[2]!.etag }]);
    expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(Buffer.concat([parts[0]!, parts[2]!])));
    expect(await leftovers()).toEqual([]);
  });

  it('retries an append that failed part-way over the bytes it left behind', async () => {
    const { storage } = localBackend();
    const key = 'files/retried';
    const parts = [randomBytes(MiB), randomBytes(MiB)];
    const { uploadId } = await storage.createMultipart(key);
    const one = await storage.uploadPart(key, uploadId, 1, streamOf(parts[0]!));
    await expect(storage.uploadPart(key, uploadId, 2, failingStream(3 * MiB))).rejects.toThrow('client went away');
    await expect(storage.uploadPart(key, uploadId, 2, endlessStream(), { maxBytes: 2 * MiB })).rejects.toBeInstanceOf(StorageLimitError);
    const two = await storage.uploadPart(key, uploadId, 2, streamOf(parts[1]!));
    await storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: one.etag }, { partNumber: 2, etag: two.etag }]);
    const stored = await storage.get(key);
    expect(stored.size).toBe(2 * MiB);
    expect(sha256(await readAll(stored.stream))).toBe(sha256(Buffer.concat(parts)));
  });

  it('falls back to separate part files and a copy when the assembly is locked (a crash left the lock)', async () => {
    const { storage, dir, leftovers } = localBackend();
    const key = 'files/locked';
    const parts = [randomBytes(MiB), randomBytes(MiB)];
    const { uploadId } = await storage.createMultipart(key);
    await writeFile(join(uploadDir(dir, uploadId), 'append.lock'), '');
    const one = await storage.uploadPart(key, uploadId, 1, streamOf(parts[0]!));
    const two = await storage.uploadPart(key, uploadId, 2, streamOf(parts[1]!));
    expect((await readdir(uploadDir(dir, uploadId))).sort()).toEqual([`1.${one.etag}`, `2.${two.etag}`, 'append.lock', 'key']);
    await storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: one.etag }, { partNumber: 2, etag: two.etag }]);
    expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(Buffer.concat(parts)));
    expect(await leftovers()).toEqual([]);
  });

  it('takes parts sent concurrently', async () => {
    const { storage } = localBackend();
    const key = 'files/concurrent';
    const parts = Array.from({ length: 6 }, () => randomBytes(MiB + 3));
    const { uploadId } = await storage.createMultipart(key);
    const stored = await Promise.all(parts.map((data, i) => storage.uploadPart(key, uploadId, i + 1, streamOf(data))));
    await storage.completeMultipart(key, uploadId, stored.map((p, i) => ({ partNumber: i + 1, etag: p.etag })));
    expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(Buffer.concat(parts)));
  });
});

// S3 storage (against s3rver) -----------------------------------------------------------------

let s3rver: S3rverHandle;
const s3Storages: S3Storage[] = [];
beforeAll(async () => {
  s3rver = await startS3rver();
});
afterAll(async () => {
  await Promise.all(s3Storages.map((storage) => storage.close()));
  await s3rver.stop();
});

function s3Options() {
  return {
    endpoint: s3rver.endpoint,
    region: s3rver.region,
    bucket: s3rver.bucket,
    accessKeyId: s3rver.accessKeyId,
    secretAccessKey: s3rver.secretAccessKey,
    forcePathStyle: true,
  };
}

function s3Backend(): Backend & { storage: S3Storage } {
  const storage = new S3Storage(s3Options());
  s3Storages.push(storage);
  return { storage, leftovers: () => s3rver.pendingUploadIds() };
}

storageContract('s3', s3Backend);

describe('s3 storage specifics', { timeout: 60_000 }, () => {
  // A read's watch for a store that stops in the middle of the bytes: once the store has sent them
  // all, nothing more is awaited from it, however long the reader then takes the last ones (a slow
  // client's download near its end was cut when they waited in the read's buffer).
  it('keeps a read whose store has sent every byte, however long the reader takes the rest', async () => {
    const storage = new S3Storage({ ...s3Options(), idleTimeoutMs: 200 });
    s3Storages.push(storage);
    const key = freshKey();
    const data = randomBytes(MiB);
    await storage.put(key, streamOf(data));
    const body = (await storage.get(key)).stream as Readable & { complete: boolean };
    const chunks: Buffer[] = [];
    // Take the bytes as they come, leaving a few in the read's buffer, until the store has sent them all.
    while (!body.complete) {
      while (body.readableLength > 4096) chunks.push(body.read(4096) as Buffer);
      body.read(0);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (body.readableLength > 1000) chunks.push(body.read(body.readableLength - 1000) as Buffer);
    expect(body.readableLength).toBeGreaterThan(0);
    expect(body.readableLength).toBeLessThan(body.readableHighWaterMark);
    // Four times the store's allowed silence, with the last bytes still waiting in the buffer.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    chunks.push(await readAll(body));
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(data));
  });

  it('reports its target as endpoint and bucket', () => {
    expect(s3Backend().storage.target).toBe(`s3:${s3rver.endpoint}/${s3rver.bucket}`);
  });

  it('accepts a part PUT to a presigned URL without credentials', async () => {
    const { storage } = s3Backend();
    const key = freshKey();
    const { uploadId } = await storage.createMultipart(key);
    const url = await storage.presignPart(key, uploadId, 1, 300);
    expect(url).toBeTypeOf('string');
    expect(url).not.toMatch(/x-amz-checksum|x-amz-sdk-checksum/i);

    const data = randomBytes(MiB + 5);
    const response = await fetch(url!, { method: 'PUT', body: data });
    expect(response.status).toBe(200);
    const etag = response.headers.get('etag');
    expect(etag).toBeTruthy();

    expect(await storage.completeMultipart(key, uploadId, [{ partNumber: 1, etag: etag! }])).toEqual({
      size: data.length,
    });
    expect(sha256(await readAll((await storage.get(key)).stream))).toBe(sha256(data));
  });
});
