/**
 * Extracting an owned archive into the library (contract §9), through HTTP on both databases and
 * both storage providers: each entry becomes a file under the rules of POST /api/files (options and
 * permissions, naming, size limit, quota, the atomic commit and file.ready); traversing, absolute
 * and backslashed paths are reduced to their last segment; encrypted entries, and entries that are
 * too large, over the quota or inflate past their declared size, are skipped with their reason and
 * leave neither bytes nor a record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { createToken, PNG_1X1, uploadFile } from '../support/uploads.ts';
import { expectStoredAsRecorded, providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';
import tar from 'tar-stream';
import { inflatingZip, renamedInTar, tarBytes, zipBytes, zipLayout } from '../support/archives.ts';
import { everyoneRole, withoutEveryonePermission } from '../support/roles.ts';

const idOf = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;

describe.each(providers)('archive extraction on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof signUp>>;
  const logged: Array<{ level: number; msg?: string }> = [];

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: 'true' }, undefined, logged);
    owner = await signUp(server.baseUrl);
    await owner.patch('/api/settings', { registration: 'open' });
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  /** Extracts every entry of `archiveId` (201): the new files' names, and what was skipped. */
  async function extracted(client: typeof owner, archiveId: string) {
    const answer = await client.post(`/api/archives/${archiveId}/extract`, {});
    expect(answer.status, answer.text).toBe(201);
    const { files, skipped } = answer.body.data as { files: Array<{ name: string }>; skipped: Array<{ path: string; reason: string }> };
    return { names: files.map((f) => f.name), skipped };
  }

  async function upload(client: typeof owner, name: string, bytes: Uint8Array) {
    const answer = await uploadFile(client, name, bytes, { type: 'application/octet-stream' });
    expect(answer.status, answer.text).toBe(200);
    return idOf(answer.body.data);
  }

  it('makes every file entry a file named after its last segment, skipping the encrypted one and the one that inflates past its declared size', async () => {
    const user = await signUp(server.baseUrl);
    const webhook = await user.post('/api/webhooks', { name: 'ready', url: 'http://127.0.0.1:9/hook' });
    expect(webhook.status).toBe(201);
    const bomb = await inflatingZip({
      entries: [
        { dir: 'docs/' },
        { name: 'docs/readme.md', data: '# Hello', compress: true },
        { name: 'readme.md', data: 'top level', compress: false },
        { name: '../../etc/passwd', data: 'root:x:0:0' },
        { name: '/abs/path/notes.txt', data: 'absolute' },
        { name: 'win\\dir\\report.csv', data: 'a,b\n1,2\n' },
        { name: 'pictures/dot.png', data: PNG_1X1, compress: false },
        { name: 'secret.txt', data: 'hidden' },
      ],
      name: 'bomb.bin',
      realSize: 4 * 1024 * 1024,
      declaredSize: 2048,
    });
    // secret.txt of the same archive is flagged encrypted.
    const bytes = Buffer.from(bomb.bytes);
    const record = zipLayout(bytes).find((r) => r.name.toString() === 'secret.txt')!;
    bytes.writeUInt16LE(bytes.readUInt16LE(record.local + 6) | 1, record.local + 6);
    bytes.writeUInt16LE(bytes.readUInt16LE(record.central + 8) | 1, record.central + 8);
    const archiveId = await upload(user, 'bundle.zip', bytes);

    const answer = await user.post(`/api/archives/${archiveId}/extract`, {});
    expect(answer.status, answer.text).toBe(201);
    const { files, skipped } = answer.body.data as { files: Array<{ name: string; size: number; type: string; rawUrl: string; url: string }>; skipped: Array<{ path: string; reason: string }> };
    expect(files.map((f) => f.name)).toEqual(['readme.md', 'readme-1.md', 'passwd', 'notes.txt', 'report.csv', 'dot.png']);
    expect(files.map((f) => f.size)).toEqual([7, 9, 10, 8, 8, PNG_1X1.length]);
    expect(files.find((f) => f.name === 'dot.png')!.type).toBe('image/png');
    expect(files.find((f) => f.name === 'report.csv')!.type).toBe('text/csv');
    expect(files.every((f) => f.url.startsWith(`${server.baseUrl}/`))).toBe(true);
    expect(skipped).toEqual([
      { path: 'secret.txt', reason: expect.stringContaining('encrypted') },
      { path: 'bomb.bin', reason: expect.stringContaining('inflates past its declared size') },
    ]);
    // The bytes are the entries' own.
    const readme = await fetch(files[0]!.rawUrl);
    expect(await readme.text()).toBe('# Hello');
    const passwd = await fetch(files[2]!.rawUrl);
    expect(await passwd.text()).toBe('root:x:0:0');
    await expectStoredAsRecorded(server, storage, user.userId);

    // Each new file is ready: one file.ready delivery per file, none for the skipped entries.
    const deliveries = await server.ctx.db.selectFrom('webhookDeliveries').select('body').where('userId', '=', user.userId).where('eventType', '=', 'file.ready').execute();
    const readyNames = deliveries.map((d) => (JSON.parse(d.body) as { data: { name: string } }).data.name).sort();
    expect(readyNames).toEqual(['bundle.zip', ...files.map((f) => f.name)].sort());

    // Extracting again makes new, uniquely named files: nothing is overwritten.
    const again = await user.post(`/api/archives/${archiveId}/extract`, { paths: ['docs/readme.md'] });
    expect(again.status).toBe(201);
    expect(again.body.data.files.map((f: { name: string }) => f.name)).toEqual(['readme-2.md']);
  });

  it('skips an entry whose data does not match its CRC-32, stored or deflated, and keeps nothing of it', async () => {
    const user = await signUp(server.baseUrl);
    const bytes = await zipBytes([
      { name: 'bank.txt', data: 'PAY 100 EUR', compress: false },
      { name: 'ledger.csv', data: 'amount\n'.repeat(20_000), compress: true },
      { name: 'fine.txt', data: 'fine' },
    ]);
    // bank.txt's data changed after the archive was written; ledger.csv's recorded CRC-32 in both headers.
    const [bank, ledger] = zipLayout(bytes);
    bytes[bank!.local + 30 + bytes.readUInt16LE(bank!.local + 26) + bytes.readUInt16LE(bank!.local + 28) + 4] = '9'.charCodeAt(0);
    for (const at of [ledger!.local + 14, ledger!.central + 16]) bytes.writeUInt32LE(bytes.readUInt32LE(at) ^ 1, at);
    const archiveId = await upload(user, 'tampered.zip', bytes);
    const { names, skipped } = await extracted(user, archiveId);
    expect(names).toEqual(['fine.txt']);
    expect(skipped).toEqual([
      { path: 'bank.txt', reason: 'its data does not match its CRC-32 checksum' },
      { path: 'ledger.csv', reason: 'its data does not match its CRC-32 checksum' },
    ]);
    await expectStoredAsRecorded(server, storage, user.userId);
  });

  it('skips an entry compressed with a method it cannot read, saying so, and answers 400 for it on the entry route', async () => {
    const user = await signUp(server.baseUrl);
    const bytes = await zipBytes([{ name: 'plain.txt', data: 'readable' }, { name: 'packed.bin', data: 'lzma, say', compress: false }]);
    // Method 14 (LZMA) in the local header (+8) and the central-directory record (+10).
    const record = zipLayout(bytes).find((r) => r.name.toString() === 'packed.bin')!;
    bytes.writeUInt16LE(14, record.local + 8);
    bytes.writeUInt16LE(14, record.central + 10);
    const archiveId = await upload(user, 'methods.zip', bytes);
    const { names, skipped } = await extracted(user, archiveId);
    expect(names).toEqual(['plain.txt']);
    expect(skipped).toEqual([{ path: 'packed.bin', reason: 'it is compressed with a method Hoard cannot read (14)' }]);
    // Every field of the body has its default: no body at all is the same request.
    const bodiless = await user.post(`/api/archives/${archiveId}/extract`);
    expect(bodiless.status, bodiless.text).toBe(201);
    expect(bodiless.body.data.files.map((f: { name: string }) => f.name)).toEqual(['plain-1.txt']);
    const entry = await user.get(`/api/archives/${archiveId}/entry?path=packed.bin`);
    expect([entry.status, entry.body.error]).toEqual([400, 'The entry cannot be read: unsupported compression method: 14']);
  });

  it('keeps what it extracts from a private or password-protected archive private, whatever the default', async () => {
    const user = await signUp(server.baseUrl);
    const zip = await zipBytes([{ name: 'inside.txt', data: 'kept to its owner' }]);
    const open = await upload(user, 'open.zip', zip);
    const secret = await upload(user, 'secret.zip', zip);
    const locked = await upload(user, 'locked.zip', zip);
    expect((await user.patch(`/api/files/${secret}`, { visibility: 'PRIVATE' })).status).toBe(200);
    expect((await user.patch(`/api/files/${locked}`, { password: 'only the two of us' })).status).toBe(200);
    const visibilities: Record<string, string> = {};
    for (const [name, id] of [['open', open], ['secret', secret], ['locked', locked]] as const) {
      const answer = await user.post(`/api/archives/${id}/extract`, {});
      expect(answer.status, answer.text).toBe(201);
      const extracted = idOf(answer.body.data.files[0]);
      const record = ((await user.get('/api/files?limit=100')).body.data as Array<{ id: string; visibility: string }>).find((f) => f.id === extracted)!;
      visibilities[name] = record.visibility;
    }
    // An open archive's entries follow the account's default (public); the others stay the owner's.
    expect(visibilities).toEqual({ open: 'PUBLIC', secret: 'PRIVATE', locked: 'PRIVATE' });
  });

  it('extracts a selection into a folder; a directory or an unknown path in the selection is skipped with its reason', async () => {
    const user = await signUp(server.baseUrl);
    const folder = (await user.post('/api/folders', { name: 'Unpacked' })).body.data.folder as { id: string };
    const zip = await zipBytes([{ dir: 'a/' }, { name: 'a/one.txt', data: 'one' }, { name: 'a/two.txt', data: 'two' }, { name: 'three.txt', data: 'three' }]);
    const archiveId = await upload(user, 'pick.zip', zip);
    const answer = await user.post(`/api/archives/${archiveId}/extract`, { paths: ['a/two.txt', 'a', 'nope.txt'], folderId: folder.id });
    expect(answer.status, answer.text).toBe(201);
    expect(answer.body.data.files.map((f: { name: string }) => f.name)).toEqual(['two.txt']);
    expect(answer.body.data.skipped).toEqual([
      { path: 'a', reason: expect.stringContaining('directory') },
      { path: 'nope.txt', reason: 'not in the archive' },
    ]);
    const listed = await user.get(`/api/files?folder=${folder.id}`);
    expect(listed.body.data.map((f: { name: string }) => f.name)).toEqual(['two.txt']);
    // Unfiled with null.
    const unfiled = await user.post(`/api/archives/${archiveId}/extract`, { paths: ['three.txt'], folderId: null });
    expect(unfiled.status).toBe(201);
    const file = (await user.get(`/api/files?search=three`)).body.data[0] as { folderId: string | null };
    expect(file.folderId).toBeNull();
  });

  it('lists a tar\'s links and special files as entries, and skips them on extraction, saying what they are', async () => {
    const user = await signUp(server.baseUrl);
    const pack = tar.pack();
    pack.entry({ name: 'real.txt', mtime: new Date(0) }, 'real bytes');
    pack.entry({ name: 'to-passwd', type: 'symlink', linkname: '/etc/passwd', mtime: new Date(0) });
    pack.entry({ name: 'again.txt', type: 'link', linkname: 'real.txt', mtime: new Date(0) });
    pack.entry({ name: 'pipe', type: 'fifo', mtime: new Date(0) });
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
    const archiveId = await upload(user, 'links.tar', Buffer.concat(chunks));
    const manifest = await user.get(`/api/archives/${archiveId}`);
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.body.data).toMatchObject({ entryCount: 4, totalSize: 10 });
    expect(manifest.body.data.entries.map((e: { path: string; size: number; directory: boolean }) => [e.path, e.size, e.directory])).toEqual([
      ['real.txt', 10, false],
      ['to-passwd', 0, false],
      ['again.txt', 0, false],
      ['pipe', 0, false],
    ]);
    const { names, skipped } = await extracted(user, archiveId);
    expect(names).toEqual(['real.txt']);
    expect(skipped).toEqual([
      { path: 'to-passwd', reason: 'a symbolic link, not a file: Hoard extracts the files links point to, not links' },
      { path: 'again.txt', reason: 'a hard link, not a file: Hoard extracts the files links point to, not links' },
      { path: 'pipe', reason: 'a special file (fifo), not a file' },
    ]);
    const entry = await user.get(`/api/archives/${archiveId}/entry?path=to-passwd`);
    expect(entry.status).toBe(404);
  });

  it("skips a ZIP's symbolic link as a tar's, rather than making a file of its target's path", async () => {
    const user = await signUp(server.baseUrl);
    const archiveId = await upload(user, 'links.zip', await zipBytes([{ name: 'real.txt', data: 'real bytes' }, { name: 'to-passwd', data: '/etc/passwd', mode: 0o120777, compress: false }]));
    const manifest = await user.get(`/api/archives/${archiveId}`);
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.body.data).toMatchObject({ entryCount: 2, totalSize: 10 });
    expect(manifest.body.data.entries.map((e: { path: string; size: number }) => [e.path, e.size])).toEqual([['real.txt', 10], ['to-passwd', 0]]);
    const { names, skipped } = await extracted(user, archiveId);
    expect(names).toEqual(['real.txt']);
    expect(skipped).toEqual([{ path: 'to-passwd', reason: 'a symbolic link, not a file: Hoard extracts the files links point to, not links' }]);
    expect((await user.get(`/api/archives/${archiveId}/entry?path=to-passwd`)).status).toBe(404);
  });

  it('reads tar, tar.gz and ZIP64 archives', async () => {
    const user = await signUp(server.baseUrl);
    const entries = [{ dir: 'd' }, { name: 'd/x.txt', data: 'ex' }, { name: 'y\\z.txt', data: 'why zed' }];
    for (const [name, bytes] of [
      ['plain.tar', await tarBytes(entries)],
      ['packed.tar.gz', await tarBytes(entries, { gzip: true })],
      ['wide.zip', await zipBytes(entries, { zip64: true })],
    ] as const) {
      const archiveId = await upload(user, name, bytes);
      const answer = await user.post(`/api/archives/${archiveId}/extract`, {});
      expect(answer.status, `${name}: ${answer.text}`).toBe(201);
      expect(answer.body.data.files.map((f: { name: string; size: number }) => [f.name.replace(/-\d+(?=\.txt$)/, ''), f.size]), name).toEqual([
        ['x.txt', 2],
        ['z.txt', 7],
      ]);
      expect(answer.body.data.skipped, name).toEqual([]);
    }
    await expectStoredAsRecorded(server, storage, user.userId);
  });

  it('reads a tar entry name as UTF-8 when it is, as Latin-1 when it is not, and a pax name as UTF-8', async () => {
    const user = await signUp(server.baseUrl);
    // Written by an older system: the names' bytes as they were on its disk.
    const written = await tarBytes([{ name: 'caf#.txt', data: 'latin-1' }, { name: 'na##ve.txt', data: 'utf-8' }, { name: '日本.txt', data: 'pax' }]);
    const latin1 = renamedInTar(written, 'caf#.txt', Buffer.from('café.txt', 'latin1'));
    const bytes = renamedInTar(latin1, 'na##ve.txt', Buffer.from('naïve.txt', 'utf8'));
    const archiveId = await upload(user, 'old.tar', bytes);
    const manifest = await user.get(`/api/archives/${archiveId}`);
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.body.data.entries.map((e: { path: string }) => e.path)).toEqual(['café.txt', 'naïve.txt', '日本.txt']);
    const entry = await user.get(`/api/archives/${archiveId}/entry?path=${encodeURIComponent('café.txt')}`);
    expect([entry.status, entry.text]).toEqual([200, 'latin-1']);
    const extracted = await user.post(`/api/archives/${archiveId}/extract`, {});
    expect(extracted.status, extracted.text).toBe(201);
    expect(extracted.body.data.files.map((f: { name: string }) => f.name)).toEqual(['café.txt', 'naïve.txt', '日本.txt']);
    await expectStoredAsRecorded(server, storage, user.userId);
  });

  it('skips entries over the size limit or the quota, leaving no bytes and no charge behind', async () => {
    const user = await signUp(server.baseUrl);
    const zip = await zipBytes([
      { name: 'small.txt', data: 'x'.repeat(100) },
      { name: 'big.txt', data: 'y'.repeat(5000) },
      { name: 'medium.txt', data: 'z'.repeat(900) },
      { name: 'last.txt', data: 'w'.repeat(100) },
    ]);
    const archiveId = await upload(user, 'sizes.zip', zip);
    const used = Number((await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', user.userId).executeTakeFirstOrThrow()).usedBytes);
    // 4000-byte files at most, and room for 1,050 bytes beyond the archive itself.
    await owner.patch('/api/settings', { maxUploadSizeBytes: 4000 });
    try {
      expect((await owner.patch(`/api/users/${user.userId}`, { quotaBytes: used + 1050 })).status).toBe(200);
      const { names, skipped } = await extracted(user, archiveId);
      expect(names).toEqual(['small.txt', 'medium.txt']);
      expect(skipped).toEqual([
        { path: 'big.txt', reason: 'larger than the maximum upload size of 3.9 KiB (4000 bytes)' },
        { path: 'last.txt', reason: 'over your storage quota' },
      ]);
    } finally {
      await owner.patch('/api/settings', { maxUploadSizeBytes: 1073741824 });
    }
    await expectStoredAsRecorded(server, storage, user.userId);
  });

  it('applies the upload rules: account defaults, no files.share makes files private, a profile option needing a missing permission is 403', async () => {
    const user = await signUp(server.baseUrl);
    const zip = await zipBytes([{ name: 'one.txt', data: 'one' }]);
    const archiveId = await upload(user, 'rules.zip', zip);
    const everyone = await everyoneRole(owner);
    await withoutEveryonePermission(owner, everyone, 'files.share', async () => {
      const answer = await user.post(`/api/archives/${archiveId}/extract`, {});
      expect(answer.status, answer.text).toBe(201);
    });
    const listed = (await user.get('/api/files?search=one')).body.data as Array<{ name: string; visibility: string }>;
    expect(listed.find((f) => f.name === 'one.txt')!.visibility).toBe('PRIVATE');

    // A default profile that deletes on expiry needs files.delete, as an upload would.
    const profile = (await user.post('/api/upload-profiles', { name: 'Short-lived', options: { expiration: 'DAY', expiryAction: 'DELETE' } })).body.data.profile as { id: string };
    expect((await user.patch('/api/account', { defaultProfileId: profile.id })).status).toBeLessThan(300);
    await withoutEveryonePermission(owner, everyone, 'files.delete', async () => {
      const refused = await user.post(`/api/archives/${archiveId}/extract`, {});
      expect(refused.status).toBe(403);
    });
    const withExpiry = await user.post(`/api/archives/${archiveId}/extract`, {});
    expect(withExpiry.status).toBe(201);
    const made = (await user.get(`/api/files?search=${encodeURIComponent(withExpiry.body.data.files[0].name)}`)).body.data[0] as { expiresAt: string | null };
    expect(made.expiresAt).not.toBeNull();

    // files.upload is the route's permission; a folder needs folders.manage.
    await withoutEveryonePermission(owner, everyone, 'files.upload', async () => {
      expect((await user.post(`/api/archives/${archiveId}/extract`, {})).status).toBe(403);
    });
    const folder = (await user.post('/api/folders', { name: 'F' })).body.data.folder as { id: string };
    await withoutEveryonePermission(owner, everyone, 'folders.manage', async () => {
      expect((await user.post(`/api/archives/${archiveId}/extract`, { folderId: folder.id })).status).toBe(403);
    });
  });

  it('an archive deleted while it is extracted: what was made is kept and listed, the rest is not called damaged, nothing is logged as lost', async () => {
    for (const delay of [60, 200]) {
      const user = await signUp(server.baseUrl);
      const entries = Array.from({ length: 400 }, (_, i) => ({ name: `entry-${i}.bin`, data: new Uint8Array(20_000).fill(i % 251), compress: false }));
      const archiveId = await upload(user, `deleted-${delay}.zip`, await zipBytes(entries));
      const [extracted, deleted] = await Promise.all([
        user.post(`/api/archives/${archiveId}/extract`, {}),
        new Promise((resolve) => setTimeout(resolve, delay)).then(() => user.delete(`/api/files/${archiveId}`)),
      ]);
      expect(deleted.status).toBe(204);
      const left = ((await user.get('/api/files?limit=100&sortBy=name&order=asc')).body.data as Array<{ name: string }>).map((f) => f.name);
      if (extracted.status === 404) {
        // Deleted before any entry was made: the file is gone, as its download would say.
        expect(extracted.body.error).toBe('File not found');
        expect(left).toEqual([]);
        continue;
      }
      expect(extracted.status, extracted.text).toBe(201);
      const { files, skipped } = extracted.body.data as { files: Array<{ name: string }>; skipped: Array<{ path: string; reason: string }> };
      // Every file made is in the answer; no entry is called damaged for the archive having gone.
      expect(files.map((f) => f.name).sort()).toEqual([...left].sort());
      expect(skipped.filter((s) => /damaged/.test(s.reason))).toEqual([]);
      if (files.length < entries.length) expect(skipped).toEqual([{ path: '', reason: 'the archive was deleted while it was extracted: extraction stopped here' }]);
    }
    expect(logged.filter((line) => line.level >= 50).map((line) => line.msg)).toEqual([]);
  });

  it('answers client mistakes, other accounts and credentials with their 4xx', async () => {
    const user = await signUp(server.baseUrl);
    const archiveId = await upload(user, 'mine.zip', await zipBytes([{ name: 'a.txt', data: 'a' }]));
    const textId = await upload(user, 'plain.txt', new TextEncoder().encode('not an archive'));
    const stranger = await signUp(server.baseUrl);
    const strangerFolder = (await stranger.post('/api/folders', { name: 'Theirs' })).body.data.folder as { id: string };

    expect((await stranger.post(`/api/archives/${archiveId}/extract`, {})).status).toBe(404);
    expect((await user.post('/api/archives/no-such-file/extract', {})).status).toBe(404);
    expect((await user.post(`/api/archives/${archiveId}/extract`, { folderId: strangerFolder.id })).status).toBe(404);
    const notArchive = await user.post(`/api/archives/${textId}/extract`, {});
    expect(notArchive.status).toBe(400);
    expect(notArchive.body).toEqual({ success: false, error: expect.stringContaining('not a ZIP or tar') });
    for (const body of [{ paths: [] }, { paths: ['a.txt', 'a.txt'] }, { paths: 'a.txt' }, { extra: true }, { folderId: 5 }]) {
      const answer = await user.post(`/api/archives/${archiveId}/extract`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.success).toBe(false);
    }
    const token = await createToken(user, ['files:read', 'files:upload']);
    const legacy = (await user.get('/api/profile/upload-token')).body.data.uploadToken as string;
    for (const authorization of [`Bearer ${token}`, `Bearer ${legacy}`, 'Basic abc']) {
      const answer = await user.post(`/api/archives/${archiveId}/extract`, {}, { headers: { authorization } });
      expect(answer.status, authorization).toBe(401);
      expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
    }
    // A record whose bytes are gone is a 404 on every owner route, as its download would be.
    const gone = await upload(user, 'gone.zip', await zipBytes([{ name: 'g.txt', data: 'g' }]));
    const goneKey = (await server.ctx.db.selectFrom('files').select('storageKey').where('id', '=', gone).executeTakeFirstOrThrow()).storageKey;
    await server.ctx.storage.delete(goneKey);
    expect((await user.get(`/api/archives/${gone}`)).status).toBe(404);
    expect((await user.get(`/api/archives/${gone}/entry?path=g.txt`)).status).toBe(404);
    expect((await user.post(`/api/archives/${gone}/extract`, {})).status).toBe(404);
    expect((await user.delete(`/api/files/${gone}`)).status).toBe(204);
    // A session's state change needs this instance's Origin.
    expect((await user.post(`/api/archives/${archiveId}/extract`, {}, { origin: 'https://evil.example' })).status).toBe(403);
    await expectStoredAsRecorded(server, storage, user.userId);
  });
});
