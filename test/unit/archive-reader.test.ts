import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import tar from 'tar-stream';
import { LocalStorage } from '../../src/storage/local.ts';
import { S3Storage } from '../../src/storage/s3.ts';
import type { Storage } from '../../src/storage/storage.ts';
import { NotAnArchiveError, openEntry, readManifest } from '../../src/archives/reader.ts';
import { startS3rver, type S3rverHandle } from '../support/s3rver.ts';

// The archive reader (contract §9) on both storage providers: manifests of ZIP, tar and tar.gz, and
// one entry's bytes, read where the archive is stored.

const when = new Date('2026-03-04T05:06:08Z');

function zip(entries: Array<{ name: string; data?: Buffer; directory?: boolean; compress?: boolean }>): Readable {
  const file = new yazl.ZipFile();
  for (const entry of entries) {
    if (entry.directory) file.addEmptyDirectory(entry.name, { mtime: when });
    else file.addBuffer(entry.data ?? Buffer.alloc(0), entry.name, { mtime: when, compress: entry.compress ?? true });
  }
  file.end();
  return file.outputStream as Readable;
}

function tarball(entries: Array<{ name: string; data?: Buffer; directory?: boolean }>, gzip: boolean): Readable {
  const pack = tar.pack();
  for (const entry of entries) {
    if (entry.directory) pack.entry({ name: entry.name, type: 'directory', mtime: when });
    else pack.entry({ name: entry.name, mtime: when }, entry.data ?? Buffer.alloc(0));
  }
  pack.finalize();
  const out = new PassThrough();
  const packed = Readable.from(pack as unknown as AsyncIterable<Buffer>);
  (gzip ? packed.pipe(createGzip()) : packed).pipe(out);
  return out;
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const big = Buffer.alloc(200_000, 'x');
const contents = [
  { name: 'docs/', directory: true },
  { name: 'docs/readme.txt', data: Buffer.from('hello archive') },
  { name: 'docs\\windows.txt', data: Buffer.from('backslashes') },
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
  const put = async (key: string, body: Readable) => (await storage.put(key, body)).size;
  beforeAll(() => {
    storage = make();
  });

  it('lists a ZIP: paths as stored with / for \\, directories without their slash, sizes, UTC times', async () => {
    const size = await put('a.zip', zip(contents));
    const manifest = await readManifest(storage, 'a.zip', size);
    expect(manifest).toMatchObject({ format: 'zip', entryCount: 4, totalSize: 13 + 11 + big.length, truncated: false });
    expect(manifest.entries.map((e) => [e.path, e.directory, e.size])).toEqual([
      ['docs', true, 0],
      ['docs/readme.txt', false, 13],
      ['docs/windows.txt', false, 11],
      ['big.bin', false, big.length],
    ]);
    expect(manifest.entries[3]!.compressedSize).toBe(big.length);
    expect(manifest.entries[0]!.modifiedAt).toBe(when.toISOString());
    expect(manifest.entries.every((e) => e.encrypted === false)).toBe(true);
    expect(await text((await openEntry(storage, 'a.zip', size, 'docs/readme.txt'))!.stream)).toBe('hello archive');
    expect((await text((await openEntry(storage, 'a.zip', size, 'big.bin'))!.stream)).length).toBe(big.length);
    expect(await openEntry(storage, 'a.zip', size, 'missing.txt')).toBeNull();
    expect(await openEntry(storage, 'a.zip', size, 'docs')).toBeNull();
  });

  it('shows traversing and absolute names as stored', async () => {
    await put('evil.zip', zip([{ name: 'safe.txt', data: Buffer.from('ok') }]));
    // yazl refuses such names, so one of the same length is written into the archive's bytes.
    const raw = (await storage.get('evil.zip')).stream;
    const chunks: Buffer[] = [];
    for await (const chunk of raw) chunks.push(chunk as Buffer);
    const patched = Buffer.from(Buffer.concat(chunks).toString('latin1').replaceAll('safe.txt', '../x.txt'), 'latin1');
    const patchedSize = await put('evil2.zip', Readable.from([patched]));
    const manifest = await readManifest(storage, 'evil2.zip', patchedSize);
    expect(manifest.entries.map((e) => e.path)).toEqual(['../x.txt']);
  });

  it('lists tar and tar.gz, and streams one entry', async () => {
    for (const gzip of [false, true]) {
      const key = gzip ? 'a.tar.gz' : 'a.tar';
      const size = await put(key, tarball(contents, gzip));
      const manifest = await readManifest(storage, key, size);
      expect(manifest).toMatchObject({ format: 'tar', entryCount: 4, totalSize: 13 + 11 + big.length, truncated: false });
      expect(manifest.entries.map((e) => [e.path, e.directory, e.size, e.compressedSize])).toEqual([
        ['docs', true, 0, 0],
        ['docs/readme.txt', false, 13, 13],
        ['docs/windows.txt', false, 11, 11],
        ['big.bin', false, big.length, big.length],
      ]);
      expect(await text((await openEntry(storage, key, size, 'docs/readme.txt'))!.stream)).toBe('hello archive');
      expect((await text((await openEntry(storage, key, size, 'big.bin'))!.stream)).length).toBe(big.length);
      expect(await openEntry(storage, key, size, 'nope')).toBeNull();
    }
  });

  it('lists at most the limit, counting every entry', async () => {
    const entries = Array.from({ length: 25 }, (_, i) => ({ name: `f${i}.txt`, data: Buffer.from(String(i)) }));
    const size = await put('many.zip', zip(entries));
    const manifest = await readManifest(storage, 'many.zip', size, 10);
    expect(manifest.entries).toHaveLength(10);
    expect(manifest).toMatchObject({ truncated: true, entryCount: 25, totalSize: entries.reduce((sum, e) => sum + e.data.length, 0) });
  });

  it('refuses what is not an archive', async () => {
    const size = await put('plain.txt', Readable.from([Buffer.from('just text, not an archive')]));
    await expect(readManifest(storage, 'plain.txt', size)).rejects.toBeInstanceOf(NotAnArchiveError);
    const broken = await put('broken.zip', Readable.from([Buffer.from('PK\u0003\u0004 and then nothing useful')]));
    await expect(readManifest(storage, 'broken.zip', broken)).rejects.toBeInstanceOf(NotAnArchiveError);
  });
});
