/**
 * Damaged archives (contract §7: a client mistake is a 4xx, never a 500): a few hundred ZIPs, tars
 * and tar.gz files with bytes flipped, runs overwritten, or cut short go through the manifest, one
 * entry, and extraction. Every answer is below 500, no request hangs, the process never sees an
 * error nobody handles (vitest reports one as a failure), and what an extraction made is consistent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { uploadFile } from '../support/uploads.ts';
import { ARCHIVE_MTIME, resizedInTar, retimedInTar, sizeFieldInTar, tarBytes, zipBytes, zipDeclaring, zipLayout, type ArchiveEntrySpec } from '../support/archives.ts';
import { providers } from '../support/stored-objects.ts';
import { serverOnStorage, type ServerOnStorage } from '../support/server-on-storage.ts';
// Deterministic, so a failure can be replayed from its seed.
import { seededRandom as random } from '../support/random.ts';

function mutate(original: Buffer, next: () => number): Buffer {
  const bytes = Buffer.from(original);
  const at = () => Math.floor(next() * bytes.length);
  switch (Math.floor(next() * 4)) {
    case 0: // a few bytes flipped anywhere
      for (let i = 0; i < 1 + Math.floor(next() * 8); i++) bytes[at()] = Math.floor(next() * 256);
      return bytes;
    case 1: // a run overwritten with 0x00 or 0xff (sizes, counts and offsets become 0 or huge)
      bytes.fill(next() < 0.5 ? 0 : 0xff, at(), Math.min(bytes.length, at() + 1 + Math.floor(next() * 12)));
      return bytes;
    case 2: // cut short
      return bytes.subarray(0, Math.max(1, at()));
    default: // the tail, where a ZIP keeps its directory, damaged
      for (let i = 0; i < 4; i++) bytes[bytes.length - 1 - Math.floor(next() * Math.min(bytes.length, 200))] = Math.floor(next() * 256);
      return bytes;
  }
}

const entries: ArchiveEntrySpec[] = [
  { dir: 'docs/' },
  { name: 'docs/readme.md', data: '# Hello\n'.repeat(50), compress: true },
  { name: 'plain.txt', data: 'stored bytes', compress: false },
  { name: 'data.bin', data: new Uint8Array(4096).map((_, i) => (i * 7) & 0xff), compress: true },
];

describe.each(providers)('damaged archives on %s storage', (provider) => {
  const under = serverOnStorage(provider, { UPLOAD_RATE_LIMIT: '0' });
  let server: ServerOnStorage['server'];
  let owner: ServerOnStorage['owner'];
  beforeAll(() => {
    ({ server, owner } = under);
  });

  it('never answer 5xx to the manifest, an entry or an extraction', { timeout: 240_000 }, async () => {
    const originals = [await zipBytes(entries), await zipBytes(entries, { zip64: true }), await tarBytes(entries), await tarBytes(entries, { gzip: true })];
    const next = random(20261124);
    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    for (let round = 0; round < 60; round++) {
      for (const original of originals) {
        const damaged = mutate(original, next);
        const uploaded = await uploadFile(owner, `damaged-${round}.bin`, damaged, { type: 'application/octet-stream' });
        expect(uploaded.status, uploaded.text).toBe(200);
        const id = (uploaded.body.data.downloadUrl as string).split('/').at(-2)!;
        const where = `round ${round}, ${damaged.length} bytes`;
        // A request that hangs fails here, naming the archive it hung on, kept for replaying outside
        // the file's own temporary directory (which goes with the file).
        const answered = async <T>(what: string, request: Promise<T>) => {
          let timer: NodeJS.Timeout | undefined;
          try {
            return await Promise.race([
              request,
              new Promise<never>((_, reject) => {
                timer = setTimeout(() => {
                  const kept = path.join(process.env.HOARD_OUTER_TMPDIR ?? os.tmpdir(), `hoard-hung-archive-${round}.bin`);
                  fs.writeFileSync(kept, damaged);
                  reject(new Error(`${what} did not answer within 15 s (${where}; the archive is in ${kept})`));
                }, 15_000);
              }),
            ]);
          } finally {
            clearTimeout(timer);
          }
        };
        const manifest = await answered('the manifest', owner.get(`/api/archives/${id}`));
        expect(manifest.status, `manifest, ${where}: ${manifest.text.slice(0, 200)}`).toBeLessThan(500);
        count(manifest.status);
        const entry = await answered('the entry', owner.get(`/api/archives/${id}/entry?path=${encodeURIComponent('docs/readme.md')}`));
        expect(entry.status, `entry, ${where}: ${entry.text.slice(0, 200)}`).toBeLessThan(500);
        count(entry.status);
        const extracted = await answered('the extraction', owner.post(`/api/archives/${id}/extract`, {}));
        expect(extracted.status, `extraction, ${where}: ${extracted.text.slice(0, 200)}`).toBeLessThan(500);
        count(extracted.status);
      }
    }
    // Both outcomes happen: damage the readers notice (400) and damage they read past (200/201).
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    expect((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0)).toBeGreaterThan(0);
    // Every file the extractions made has its bytes, and the charge is their sum.
    const files = await server.ctx.db.selectFrom('files').select(['storageKey', 'size']).where('userId', '=', owner.userId).execute();
    for (const file of files) expect(await server.ctx.storage.stat(file.storageKey)).toEqual({ size: Number(file.size) });
    const user = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', owner.userId).executeTakeFirstOrThrow();
    expect(Number(user.usedBytes)).toBe(files.reduce((sum, f) => sum + Number(f.size), 0));
  });

  // Headers that are whole (their checksums and records hold) but whose values are impossible.
  it('lists a tar entry whose time field holds no time, with no time, and extracts it', async () => {
    const plain = await tarBytes([{ name: 'good.txt', data: 'good' }, { name: 'octal.txt', data: 'not octal' }, { name: 'far.txt', data: 'far future' }, { name: 'year.txt', data: 'year 11476' }]);
    // Digits that are not octal, a base-256 number past any date, and one in the year 11476.
    const year11476 = Buffer.alloc(12);
    year11476[0] = 0x80;
    year11476.writeBigUInt64BE(300_000_000_000n, 4);
    const tarFile = retimedInTar(
      retimedInTar(retimedInTar(plain, 'octal.txt', Buffer.from('99999999999\0', 'latin1')), 'far.txt', Buffer.concat([Buffer.from([0x80]), Buffer.alloc(11, 0xff)])),
      'year.txt',
      year11476,
    );
    const { id, share } = await uploadArchive('times.tar', tarFile);
    const expected = {
      format: 'tar',
      entryCount: 4,
      totalSize: 4 + 9 + 10 + 10,
      truncated: false,
      entries: [
        { path: 'good.txt', size: 4, compressedSize: 4, directory: false, modifiedAt: ARCHIVE_MTIME.toISOString(), encrypted: false },
        { path: 'octal.txt', size: 9, compressedSize: 9, directory: false, modifiedAt: null, encrypted: false },
        { path: 'far.txt', size: 10, compressedSize: 10, directory: false, modifiedAt: null, encrypted: false },
        { path: 'year.txt', size: 10, compressedSize: 10, directory: false, modifiedAt: null, encrypted: false },
      ],
    };
    for (const answer of [await owner.get(`/api/archives/${id}`), await owner.post(share, {})]) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.data).toEqual(expected);
    }
    const extracted = await owner.post(`/api/archives/${id}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.files.map((f: { name: string }) => f.name)).toEqual(['good.txt', 'octal.txt', 'far.txt', 'year.txt']);
    expect(extracted.body.data.skipped).toEqual([]);
  });

  it('takes a tar entry that declares a negative size (base-256) for damage: a 400 on every route before the first entry, the end of the extraction after it', async () => {
    const minusOne = Buffer.alloc(12, 0xff);
    const first = sizeFieldInTar(await tarBytes([{ name: 'neg.txt', data: 'abc' }, { name: 'after.txt', data: 'after' }]), 'neg.txt', minusOne);
    const { id, share } = await uploadArchive('negative.tar', first);
    for (const answer of [
      await owner.get(`/api/archives/${id}`),
      await owner.post(share, {}),
      await owner.get(`/api/archives/${id}/entry?path=neg.txt`),
      await owner.post(`${share}/entry`, { path: 'neg.txt' }),
      await owner.post(`/api/archives/${id}/extract`, {}),
    ]) {
      expect([answer.status, answer.body?.error], answer.text).toEqual([400, expect.stringMatching(/^The tar file cannot be read: .*negative size/)]);
    }
    const named = (name: string) => server.ctx.db.selectFrom('files').select('id').where('userId', '=', owner.userId).where('name', '=', name).execute();
    expect(await named('neg.txt')).toEqual([]);

    // After a whole entry: that one is made, and the extraction ends at the damage.
    const later = sizeFieldInTar(await tarBytes([{ name: 'whole.txt', data: 'whole' }, { name: 'neg2.txt', data: 'abc' }, { name: 'after2.txt', data: 'after' }]), 'neg2.txt', minusOne);
    const second = await uploadArchive('negative-later.tar', later);
    const extracted = await owner.post(`/api/archives/${second.id}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.files.map((f: { name: string }) => f.name)).toEqual(['whole.txt']);
    expect(extracted.body.data.skipped).toEqual([{ path: '', reason: expect.stringContaining('damaged after "whole.txt"') }]);
    expect(await named('neg2.txt')).toEqual([]);
  });

  it('lists a ZIP entry whose MS-DOS date or time holds no time by its extended timestamp, or with no time without one', async () => {
    const names = ['good.txt', 'ones.txt', 'feb30.txt', 'ones-bare.txt', 'feb30-bare.txt'];
    const bytes = await zipBytes(names.map((name) => ({ name, data: name })));
    const layout = (name: string) => zipLayout(bytes).find((r) => r.name.toString('utf8') === name)!;
    const dated = (name: string, time: number, date: number) => {
      const record = layout(name);
      for (const [at, value] of [[record.central + 12, time], [record.central + 14, date], [record.local + 10, time], [record.local + 12, date]] as const) bytes.writeUInt16LE(value, at);
    };
    // Every bit set (read as 2108-04-01 once rolled over), and the 30th of February 2024 at noon.
    for (const suffix of ['', '-bare']) {
      dated(`ones${suffix}.txt`, 0xffff, 0xffff);
      dated(`feb30${suffix}.txt`, 12 << 11, ((2024 - 1980) << 9) | (2 << 5) | 30);
    }
    // The "-bare" ones lose their extended timestamp (0x5455, which yazl writes): its ID becomes one no reader knows.
    for (const name of ['ones-bare.txt', 'feb30-bare.txt']) {
      const timestamp = layout(name).extras.find((extra) => extra.id === 0x5455)!;
      bytes.writeUInt16LE(0x7a7a, timestamp.at);
    }
    const { id } = await uploadArchive('dates.zip', bytes);
    const manifest = await owner.get(`/api/archives/${id}`);
    expect(manifest.status, manifest.text).toBe(200);
    // Contract §9: the MS-DOS time is read unless an extended timestamp is present.
    expect(manifest.body.data.entries.map((e: { path: string; modifiedAt: string | null }) => [e.path, e.modifiedAt])).toEqual([
      ['good.txt', ARCHIVE_MTIME.toISOString()],
      ['ones.txt', ARCHIVE_MTIME.toISOString()],
      ['feb30.txt', ARCHIVE_MTIME.toISOString()],
      ['ones-bare.txt', null],
      ['feb30-bare.txt', null],
    ]);
  });

  it("answers an entry whose header lies past the end of the ZIP in the archive's words, not storage's", async () => {
    const bytes = await zipBytes([{ name: 'good.txt', data: 'good' }, { name: 'far.txt', data: 'far away' }]);
    const record = zipLayout(bytes).find((r) => r.name.toString('utf8') === 'far.txt')!;
    bytes.writeUInt32LE(bytes.length + 1000, record.central + 42);
    const { id } = await uploadArchive('far.zip', bytes);
    const entry = await owner.get(`/api/archives/${id}/entry?path=far.txt`);
    expect([entry.status, entry.body.error]).toEqual([400, 'The entry cannot be read: it lies past the end of the file']);
    expect((await owner.get(`/api/archives/${id}/entry?path=good.txt`)).text).toBe('good');
  });

  it('reads a tar whose directory declares a size, which the format ignores: no route waits for its bytes', async () => {
    const plain = await tarBytes([{ dir: 'pkg/' }, { name: 'pkg/a.txt', data: 'ok' }, { dir: 'more/' }, { name: 'b.txt', data: 'bee' }]);
    const tarFile = resizedInTar(resizedInTar(plain, 'pkg/', 4096), 'more/', 1);
    const { id, share } = await uploadArchive('dir-sizes.tar', tarFile);
    for (const answer of [await owner.get(`/api/archives/${id}`), await owner.post(share, {})]) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.data.entries.map((e: { path: string; directory: boolean }) => [e.path, e.directory])).toEqual([['pkg', true], ['pkg/a.txt', false], ['more', true], ['b.txt', false]]);
    }
    expect((await owner.get(`/api/archives/${id}/entry?path=b.txt`)).text).toBe('bee');
    expect((await owner.post(`${share}/entry`, { path: 'b.txt' })).text).toBe('bee');
    const extracted = await owner.post(`/api/archives/${id}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.files.map((f: { name: string }) => f.name)).toEqual(['a.txt', 'b.txt']);
  });

  it('refuses to list a ZIP that declares more bytes than a size can say, and extracts what it can', async () => {
    // 2^63 bytes for one entry, in its ZIP64 field.
    const huge = await zipDeclaring([{ name: 'small.txt', data: 'small' }, { name: 'huge.bin', data: 'twelve bytes' }], { 'huge.bin': 2n ** 63n });
    const { id, share } = await uploadArchive('huge.zip', huge);
    for (const answer of [await owner.get(`/api/archives/${id}`), await owner.post(share, {})]) {
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body.error).toBe('The ZIP file cannot be read: its entry "huge.bin" declares more than 9007199254740991 bytes');
    }
    const entry = await owner.get(`/api/archives/${id}/entry?path=huge.bin`);
    expect(entry.status, entry.text).toBe(400);
    expect(entry.body.error).toBe('The entry cannot be read: it declares more than 9007199254740991 bytes');
    expect((await owner.get(`/api/archives/${id}/entry?path=small.txt`)).text).toBe('small');
    const extracted = await owner.post(`/api/archives/${id}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.files.map((f: { name: string }) => f.name)).toEqual(['small.txt']);
    expect(extracted.body.data.skipped).toEqual([{ path: 'huge.bin', reason: expect.stringMatching(/^larger than the maximum upload size/) }]);

    // Three entries of 2^52 bytes each: every size can be said, their sum cannot.
    const many = await zipDeclaring(
      ['a', 'b', 'c'].map((name) => ({ name, data: name })),
      { a: 2n ** 52n, b: 2n ** 52n, c: 2n ** 52n },
    );
    const summed = await uploadArchive('many.zip', many);
    const answer = await owner.get(`/api/archives/${summed.id}`);
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body.error).toBe('The ZIP file cannot be read: its entries declare more than 9007199254740991 bytes in all');
  });

  it('says where a damaged archive stopped the extraction, never naming an entry it extracted', async () => {
    const plain = await tarBytes([{ name: 'one.txt', data: 'one' }, { name: 'two.txt', data: 'two two' }, { name: 'three.txt', data: 'three' }]);
    // The second header (at 1,024: one.txt's header and its data block before it) with a byte
    // changed, so its checksum fails; and the archive cut off in the middle of two.txt's bytes.
    const badHeader = Buffer.from(plain);
    badHeader[1024 + 100] = badHeader[1024 + 100]! ^ 0x01;
    const cut = plain.subarray(0, 1024 + 512 + 3);
    const answers = [];
    for (const [name, bytes] of [['bad-header.tar', badHeader], ['cut.tar', cut]] as const) {
      const { id } = await uploadArchive(name, bytes);
      const answer = await owner.post(`/api/archives/${id}/extract`, {});
      expect(answer.status, answer.text).toBe(201);
      answers.push(answer.body.data);
    }
    expect(answers.map((a) => a.files.map((f: { name: string }) => f.name))).toEqual([['one.txt'], ['one-1.txt']]);
    expect(answers.map((a) => a.skipped)).toEqual([
      [{ path: '', reason: 'the archive is damaged after "one.txt": extraction stopped, and the entries after it cannot be read' }],
      [{ path: 'two.txt', reason: 'the archive is damaged from here on: extraction stopped' }],
    ]);
  });

  async function uploadArchive(name: string, bytes: Buffer): Promise<{ id: string; share: string }> {
    const uploaded = await uploadFile(owner, name, bytes, { type: 'application/octet-stream' });
    expect(uploaded.status, uploaded.text).toBe(200);
    const urlId = (await owner.get('/api/auth/me')).body.data.user.urlId as string;
    return { id: (uploaded.body.data.downloadUrl as string).split('/').at(-2)!, share: `/api/share/${urlId}/${encodeURIComponent(name)}/archive` };
  }
});
