import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../src/storage/local.ts';
import { S3Storage } from '../../src/storage/s3.ts';
import { StorageNotFoundError, type Storage } from '../../src/storage/storage.ts';
import { DamagedEntryError, MANIFEST_ENTRY_LIMIT, NotAnArchiveError, openEntry, readManifest } from '../../src/archives/reader.ts';
import { abortableReads } from '../../src/archives/abortable-reads.ts';
import { startS3rver, type S3rverHandle } from '../support/s3rver.ts';
import { ARCHIVE_MTIME, encryptedFlagZip, inflatingZip, manyEntriesZip, streamOf, tarBytes, zipBytes, type ArchiveEntrySpec } from '../support/archives.ts';

// The archive reader (contract §9) on both storage providers: manifests of ZIP (ZIP64 included), tar
// and tar.gz, and one entry's bytes, read where the archive is stored; hostile archives (names that
// traverse or are absolute, encrypted entries, an entry inflating past its declared size, more
// entries than a manifest lists) are described as stored and never read past what they declare.

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const big = Buffer.alloc(200_000, 'x');
const contents: ArchiveEntrySpec[] = [
  { dir: 'docs/' },
  { name: 'docs/readme.txt', data: 'hello archive' },
  { name: 'docs\\windows.txt', data: 'backslashes' },
  { name: 'big.bin', data: big, compress: false },
];

let s3rver: S3rverHandle;
let dir: string;
const storages: Array<[string, () => Storage]> = [];
beforeAll(async () => {
  s3rver = await startS3rver();
  dir = await mkdtemp(join(tmpdir(), 'hoard-archives-'));
});
afterAll(async () => {
  await s3rver.stop();
  await rm(dir, { recursive: true, force: true });
});
storages.push(['local', () => new LocalStorage({ root: join(dir, 'files'), tmpDir: join(dir, 'tmp') })]);
storages.push([
  's3',
  () => new S3Storage({ endpoint: s3rver.endpoint, region: s3rver.region, bucket: s3rver.bucket, accessKeyId: s3rver.accessKeyId, secretAccessKey: s3rver.secretAccessKey, forcePathStyle: true }),
]);

describe.each(storages)('reading archives on %s storage', { timeout: 60_000 }, (_name, make) => {
  let storage: Storage;
  const put = async (key: string, bytes: Uint8Array) => (await storage.put(key, streamOf(bytes))).size;
  beforeAll(() => {
    storage = make();
  });

  it('lists a ZIP: paths as stored with / for \\, directories without their slash, sizes, UTC times', async () => {
    const size = await put('a.zip', await zipBytes(contents));
    const manifest = await readManifest(storage, 'a.zip', size);
    expect(manifest).toMatchObject({ format: 'zip', entryCount: 4, totalSize: 13 + 11 + big.length, truncated: false });
    expect(manifest.entries.map((e) => [e.path, e.directory, e.size])).toEqual([
      ['docs', true, 0],
      ['docs/readme.txt', false, 13],
      ['docs/windows.txt', false, 11],
      ['big.bin', false, big.length],
    ]);
    expect(manifest.entries[3]!.compressedSize).toBe(big.length);
    expect(manifest.entries[0]!.modifiedAt).toBe(ARCHIVE_MTIME.toISOString());
    expect(manifest.entries.every((e) => e.encrypted === false)).toBe(true);
    expect(await text((await openEntry(storage, 'a.zip', size, 'docs/readme.txt'))!.stream)).toBe('hello archive');
    // Stored as `docs\windows.txt`, asked for by its listed path.
    expect(await text((await openEntry(storage, 'a.zip', size, 'docs/windows.txt'))!.stream)).toBe('backslashes');
    expect((await text((await openEntry(storage, 'a.zip', size, 'big.bin'))!.stream)).length).toBe(big.length);
    expect(await openEntry(storage, 'a.zip', size, 'missing.txt')).toBeNull();
    expect(await openEntry(storage, 'a.zip', size, 'docs')).toBeNull();
  });

  it('reads a ZIP64 archive: sizes from the ZIP64 extra field, entries read back', async () => {
    const deflated = Buffer.alloc(300_000, 'abc');
    const size = await put('a64.zip', await zipBytes([...contents, { name: 'deflated.txt', data: deflated, compress: true }], { zip64: true }));
    const manifest = await readManifest(storage, 'a64.zip', size);
    expect(manifest).toMatchObject({ format: 'zip', entryCount: 5, totalSize: 13 + 11 + big.length + deflated.length, truncated: false });
    expect(manifest.entries.map((e) => [e.path, e.directory, e.size])).toEqual([
      ['docs', true, 0],
      ['docs/readme.txt', false, 13],
      ['docs/windows.txt', false, 11],
      ['big.bin', false, big.length],
      ['deflated.txt', false, deflated.length],
    ]);
    expect(manifest.entries[3]!.compressedSize).toBe(big.length);
    expect(manifest.entries[4]!.compressedSize).toBeGreaterThan(0);
    expect(manifest.entries[4]!.compressedSize).toBeLessThan(deflated.length);
    const opened = (await openEntry(storage, 'a64.zip', size, 'deflated.txt'))!;
    expect(opened).toMatchObject({ size: deflated.length, encrypted: false });
    expect(await text(opened.stream)).toBe(deflated.toString('utf8'));
    expect(await text((await openEntry(storage, 'a64.zip', size, 'big.bin'))!.stream)).toBe(big.toString('utf8'));
    expect(await text((await openEntry(storage, 'a64.zip', size, 'docs/windows.txt'))!.stream)).toBe('backslashes');
  });

  it('lists an entry flagged encrypted and does not open it', async () => {
    const size = await put('locked.zip', await encryptedFlagZip([{ name: 'open.txt', data: 'plain' }, { name: 'secret.txt', data: 'classified' }], 'secret.txt'));
    const manifest = await readManifest(storage, 'locked.zip', size);
    expect(manifest.entries.map((e) => [e.path, e.encrypted])).toEqual([
      ['open.txt', false],
      ['secret.txt', true],
    ]);
    const secret = (await openEntry(storage, 'locked.zip', size, 'secret.txt'))!;
    expect(secret).toMatchObject({ encrypted: true, size: 10 });
    expect(await text(secret.stream)).toBe('');
    expect(await text((await openEntry(storage, 'locked.zip', size, 'open.txt'))!.stream)).toBe('plain');
  });

  it('fails an entry that inflates past its declared size, never giving more than declared', async () => {
    // 40,000 declared bytes sit between two of zlib's 16 KiB output chunks: some bytes come out, then
    // the error. With 1,024 the first chunk already crosses them: the entry fails to open.
    for (const declaredSize of [1024, 40_000]) {
      const bomb = await inflatingZip({ declaredSize, realSize: 1024 * 1024, entries: [{ name: 'fine.txt', data: 'fine' }] });
      const key = `bomb-${declaredSize}.zip`;
      const size = await put(key, bomb.bytes);
      const manifest = await readManifest(storage, key, size);
      expect(manifest.entries.map((e) => [e.path, e.size])).toEqual([
        ['fine.txt', 4],
        ['bomb.bin', declaredSize],
      ]);
      if (declaredSize < 16 * 1024) {
        const refused = openEntry(storage, key, size, 'bomb.bin');
        await expect(refused).rejects.toBeInstanceOf(DamagedEntryError);
        await expect(refused).rejects.toThrow('The entry cannot be read: its data inflates past its declared size');
      } else {
        const opened = (await openEntry(storage, key, size, 'bomb.bin'))!;
        expect(opened).toMatchObject({ size: declaredSize, encrypted: false });
        let received = 0;
        const reading = (async () => {
          for await (const chunk of opened.stream) received += (chunk as Buffer).length;
        })();
        await expect(reading).rejects.toThrow(/too many bytes/);
        expect(received).toBeLessThanOrEqual(declaredSize);
      }
      // The archive stays readable: the honest entry next to it opens.
      expect(await text((await openEntry(storage, key, size, 'fine.txt'))!.stream)).toBe('fine');
    }
  });

  it('shows traversing, absolute and backslashed names as stored', async () => {
    const hostile: ArchiveEntrySpec[] = [
      { name: '../x.txt', data: 'up' },
      { name: '/abs/path.txt', data: 'root' },
      { name: 'a\\..\\b.txt', data: 'back' },
      { dir: '/etc/' },
    ];
    const size = await put('evil.zip', await zipBytes(hostile));
    const manifest = await readManifest(storage, 'evil.zip', size);
    expect(manifest.entries.map((e) => [e.path, e.directory])).toEqual([
      ['../x.txt', false],
      ['/abs/path.txt', false],
      ['a/../b.txt', false],
      ['/etc', true],
    ]);
    expect(await text((await openEntry(storage, 'evil.zip', size, '../x.txt'))!.stream)).toBe('up');
    expect(await text((await openEntry(storage, 'evil.zip', size, '/abs/path.txt'))!.stream)).toBe('root');
    for (const gzip of [false, true]) {
      const key = gzip ? 'evil.tar.gz' : 'evil.tar';
      const tarSize = await put(key, await tarBytes(hostile, { gzip }));
      const listed = await readManifest(storage, key, tarSize);
      expect(listed.entries.map((e) => [e.path, e.directory])).toEqual([
        ['../x.txt', false],
        ['/abs/path.txt', false],
        ['a/../b.txt', false],
        ['/etc', true],
      ]);
      expect(await text((await openEntry(storage, key, tarSize, '../x.txt'))!.stream)).toBe('up');
    }
  });

  it('lists tar and tar.gz with directories and backslashes, and streams one entry', async () => {
    for (const gzip of [false, true]) {
      const key = gzip ? 'a.tar.gz' : 'a.tar';
      const size = await put(key, await tarBytes([...contents, { dir: 'empty' }, { name: 'dir\\sub\\deep.txt', data: 'deep' }], { gzip }));
      const manifest = await readManifest(storage, key, size);
      expect(manifest).toMatchObject({ format: 'tar', entryCount: 6, totalSize: 13 + 11 + big.length + 4, truncated: false });
      expect(manifest.entries.map((e) => [e.path, e.directory, e.size, e.compressedSize])).toEqual([
        ['docs', true, 0, 0],
        ['docs/readme.txt', false, 13, 13],
        ['docs/windows.txt', false, 11, 11],
        ['big.bin', false, big.length, big.length],
        ['empty', true, 0, 0],
        ['dir/sub/deep.txt', false, 4, 4],
      ]);
      expect(manifest.entries.every((e) => e.modifiedAt === ARCHIVE_MTIME.toISOString() && !e.encrypted)).toBe(true);
      expect(await text((await openEntry(storage, key, size, 'docs/readme.txt'))!.stream)).toBe('hello archive');
      expect(await text((await openEntry(storage, key, size, 'dir/sub/deep.txt'))!.stream)).toBe('deep');
      expect((await text((await openEntry(storage, key, size, 'big.bin'))!.stream)).length).toBe(big.length);
      expect(await openEntry(storage, key, size, 'nope')).toBeNull();
      expect(await openEntry(storage, key, size, 'docs')).toBeNull();
    }
  });

  it('stops listing a tar or tar.gz when its reads are aborted, failing the listing and nothing else', async () => {
    // The share page gives a manifest 2 seconds (src/http/routes/share-page.ts); aborting destroyed
    // the stored object's stream with an error that, behind gunzip, nothing listened to: the
    // process's unhandled 'error' event, which ended the server.
    const noise = randomBytes(8 * 1024 * 1024);
    for (const gzip of [false, true]) {
      const key = gzip ? 'slow.tar.gz' : 'slow.tar';
      const size = await put(key, await tarBytes([{ name: 'noise.bin', data: noise }, { name: 'after.txt', data: 'after' }], { gzip }));
      const budget = new AbortController();
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const watched = new Proxy(storage, {
        get(target, property) {
          if (property !== 'get') return Reflect.get(target, property, target);
          return async (...args: Parameters<Storage['get']>) => {
            const object = await target.get(...args);
            opened();
            return object;
          };
        },
      });
      const listing = readManifest(abortableReads(watched, budget.signal), key, size);
      listing.catch(() => undefined);
      // Aborted while the bytes flow (8 MiB take tens of milliseconds to list).
      await open;
      await new Promise((resolve) => setTimeout(resolve, 5));
      budget.abort();
      await expect(listing, key).rejects.toBeInstanceOf(Error);
      // The archive itself is whole: listed again without a budget, it is all there.
      expect((await readManifest(storage, key, size)).entryCount, key).toBe(2);
    }
  });

  it('lets go of every stored read when an entry stream is destroyed half-way (a client gone)', async () => {
    // A stored read left open keeps its file handle (local) or connection (S3) until garbage
    // collection: a download cut off half-way must close what it was reading from.
    const noise = randomBytes(8 * 1024 * 1024);
    const archives: Array<[string, Uint8Array]> = [
      ['cut.zip', await zipBytes([{ name: 'noise.bin', data: noise, compress: false }])],
      ['cut.tar', await tarBytes([{ name: 'noise.bin', data: noise }])],
      ['cut.tar.gz', await tarBytes([{ name: 'noise.bin', data: noise }], { gzip: true })],
    ];
    for (const [key, bytes] of archives) {
      const size = await put(key, bytes);
      const reads: Readable[] = [];
      const watched = new Proxy(storage, {
        get(target, property) {
          if (property !== 'get') return Reflect.get(target, property, target);
          return async (...args: Parameters<Storage['get']>) => {
            const object = await target.get(...args);
            reads.push(object.stream);
            return object;
          };
        },
      });
      const entry = (await openEntry(watched, key, size, 'noise.bin'))!;
      for await (const _chunk of entry.stream) break; // one chunk, then the consumer is gone
      await expect.poll(() => reads.filter((stream) => !stream.destroyed).length, { message: key, timeout: 5_000 }).toBe(0);
    }
  });

  it('lists at most the limit, counting every entry', async () => {
    const entries = Array.from({ length: 25 }, (_, i) => ({ name: `f${i}.txt`, data: String(i) }));
    const size = await put('many.zip', await zipBytes(entries));
    const manifest = await readManifest(storage, 'many.zip', size, 10);
    expect(manifest.entries).toHaveLength(10);
    expect(manifest).toMatchObject({ truncated: true, entryCount: 25, totalSize: entries.reduce((sum, e) => sum + e.data.length, 0) });
  });

  it('lists 10,000 of a 20,000-entry ZIP, with the exact count and total size', async () => {
    const count = 20_000;
    const size = await put('twenty-thousand.zip', manyEntriesZip(count));
    const manifest = await readManifest(storage, 'twenty-thousand.zip', size);
    let totalSize = 0;
    for (let i = 1; i <= count; i += 1) totalSize += String(i).length;
    expect(MANIFEST_ENTRY_LIMIT).toBe(10_000);
    expect(manifest).toMatchObject({ format: 'zip', truncated: true, entryCount: count, totalSize });
    expect(manifest.entries).toHaveLength(10_000);
    expect(manifest.entries[0]).toEqual({ path: 'f/000001.txt', size: 1, compressedSize: 1, directory: false, modifiedAt: ARCHIVE_MTIME.toISOString(), encrypted: false });
    expect(manifest.entries.at(-1)!.path).toBe('f/010000.txt');
    expect(await text((await openEntry(storage, 'twenty-thousand.zip', size, 'f/019999.txt'))!.stream)).toBe('19999');
  });

  it('refuses what is not an archive', async () => {
    const size = await put('plain.txt', Buffer.from('just text, not an archive'));
    await expect(readManifest(storage, 'plain.txt', size)).rejects.toBeInstanceOf(NotAnArchiveError);
    const broken = await put('broken.zip', Buffer.from('PK\u0003\u0004 and then nothing useful'));
    await expect(readManifest(storage, 'broken.zip', broken)).rejects.toBeInstanceOf(NotAnArchiveError);
  });

  it('an archive deleted as one of its entries is opened: storage says the object is gone, no entry is called damaged', async () => {
    const size = await put('going.zip', await zipBytes(contents));
    // The object goes just before the entry's local header is read: after the reads of its kind,
    // of the end of its central directory and of the central directory itself.
    let reads = 0;
    const deleting: Storage = Object.create(storage) as Storage;
    deleting.get = async (key, range) => {
      if (++reads === 4) await storage.delete(key);
      return storage.get(key, range);
    };
    const opening = openEntry(deleting, 'going.zip', size, 'docs/readme.txt');
    await expect(opening).rejects.toBeInstanceOf(StorageNotFoundError);
    await expect(opening).rejects.not.toBeInstanceOf(DamagedEntryError);
  });
});
