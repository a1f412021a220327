/**
 * Archives in the owner's library (contract §9): the manifest and one entry's bytes through HTTP, on
 * both storage providers; any Authorization header is the generic 401; a client mistake gets its 4xx
 * even while every slot of archive capacity is held; a full process answers 503 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { storageEnv, storageKinds } from '../support/storage-env.ts';
import { inflatingZip, zipBytes, zipLayout } from '../support/archives.ts';

const BIG = 32 * 1024 * 1024;
const idOf = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;

describe.each(storageKinds)('archives on %s storage', (kind) => {
  let server: TestServer;
  let stopStorage: () => Promise<void>;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let archiveId: string;
  let textId: string;

  beforeAll(async () => {
    const storage = await storageEnv(kind);
    stopStorage = storage.stop;
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', ARCHIVE_CONCURRENCY: '1' });
    owner = await signUp(server.baseUrl);
    await owner.patch('/api/settings', { registration: 'open' });
    // big.bin: 32 MiB of zeros, a few kB deflated; a client that does not read it holds the response open.
    const zip = await zipBytes([{ dir: 'docs/' }, { name: 'docs/readme.md', data: '# Hello' }, { name: 'notes\\today.txt', data: 'backslash' }, { name: 'big.bin', data: Buffer.alloc(BIG) }]);
    const uploaded = await uploadFile(owner, 'bundle.zip', zip, { type: 'application/zip' });
    expect(uploaded.status).toBe(200);
    archiveId = idOf(uploaded.body.data);
    textId = idOf((await uploadFile(owner, 'plain.txt', 'not an archive')).body.data);
  });
  afterAll(async () => {
    await server?.close();
    await stopStorage?.();
  });

  it('lists the manifest of an owned ZIP', async () => {
    const answer = await owner.get(`/api/archives/${archiveId}`);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual({
      format: 'zip',
      entryCount: 4,
      totalSize: 7 + 9 + BIG,
      truncated: false,
      entries: [
        { path: 'docs', size: 0, compressedSize: 0, directory: true, modifiedAt: '2026-01-02T03:04:06.000Z', encrypted: false },
        { path: 'docs/readme.md', size: 7, compressedSize: expect.any(Number), directory: false, modifiedAt: '2026-01-02T03:04:06.000Z', encrypted: false },
        { path: 'notes/today.txt', size: 9, compressedSize: expect.any(Number), directory: false, modifiedAt: '2026-01-02T03:04:06.000Z', encrypted: false },
        { path: 'big.bin', size: BIG, compressedSize: expect.any(Number), directory: false, modifiedAt: '2026-01-02T03:04:06.000Z', encrypted: false },
      ],
    });
  });

  it("refuses an entry to this site's own pages as a script, a style or a worker, as a file is refused", async () => {
    const path = `/api/archives/${archiveId}/entry?path=${encodeURIComponent('docs/readme.md')}`;
    for (const dest of ['script', 'style', 'worker', 'serviceworker']) {
      const refused = await owner.get(path, { headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': dest } });
      expect([refused.status, refused.body], dest).toEqual([403, { success: false, error: "A file is not served to this site's own pages as a script, a style or a worker" }]);
    }
    expect((await owner.get(path, { headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'empty' } })).status).toBe(200);
    expect((await owner.get(path, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'script' } })).status).toBe(200);
  });

  it("sends one entry's bytes as an attachment, typed by its name", async () => {
    const answer = await owner.get(`/api/archives/${archiveId}/entry?path=${encodeURIComponent('docs/readme.md')}`);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('# Hello');
    expect(answer.headers.get('content-disposition')).toMatch(/^attachment; filename="readme.md"/);
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect((await owner.get(`/api/archives/${archiveId}/entry?path=missing.txt`)).status).toBe(404);
    expect((await owner.get(`/api/archives/${archiveId}/entry`)).status).toBe(400);
    // Each mistake in its own words, not all as a missing path.
    for (const [query, message] of [
      ['', /path: is required/],
      ['?path=a&path=b', /path: give the parameter once/],
      [`?path=${'p'.repeat(4097)}`, /path: .*4096/],
    ] as const) {
      const refused = await owner.get(`/api/archives/${archiveId}/entry${query}`);
      expect([refused.status, refused.body.error], query.slice(0, 20)).toEqual([400, expect.stringMatching(message)]);
    }
  });

  it('answers 400 for an entry whose data inflates past its declared size or is not deflate data, on the owner\'s and the share route', async () => {
    const bomb = await inflatingZip({ name: 'bomb.bin', realSize: 4 * 1024 * 1024, declaredSize: 100, entries: [{ name: 'fine.txt', data: 'fine' }] });
    // An entry whose deflated bytes are 0xff throughout: "invalid block type" to zlib.
    const garbled = await zipBytes([{ name: 'bad.txt', data: 'x'.repeat(5000), compress: true }]);
    const record = zipLayout(garbled)[0]!;
    const dataAt = record.local + 30 + garbled.readUInt16LE(record.local + 26) + garbled.readUInt16LE(record.local + 28);
    garbled.fill(0xff, dataAt, dataAt + garbled.readUInt32LE(record.local + 18));
    const cases: Array<[string, Buffer, string, string]> = [
      ['bomb.zip', bomb.bytes, 'bomb.bin', 'The entry cannot be read: its data inflates past its declared size'],
      ['garbled.zip', garbled, 'bad.txt', 'The entry cannot be read: its data is damaged and cannot be decompressed'],
    ];
    const urlId = (await owner.get('/api/auth/me')).body.data.user.urlId;
    for (const [name, bytes, path, message] of cases) {
      const uploaded = await uploadFile(owner, name, bytes, { type: 'application/zip' });
      expect(uploaded.status, uploaded.text).toBe(200);
      const own = await owner.get(`/api/archives/${idOf(uploaded.body.data)}/entry?path=${path}`);
      expect([own.status, own.body?.error], name).toEqual([400, message]);
      const shared = await owner.post(`/api/share/${urlId}/${name}/archive/entry`, { path });
      expect([shared.status, shared.body?.error], name).toEqual([400, message]);
    }
    // The archive's other entries are read as ever.
    const fine = await owner.post(`/api/share/${urlId}/bomb.zip/archive/entry`, { path: 'fine.txt' });
    expect([fine.status, fine.text]).toEqual([200, 'fine']);
  });

  it('checks an entry against its CRC-32: a small damaged one is a 400, a large one never arrives whole', async () => {
    // The data changed after the archive was written, its CRC-32 left as it was: "PAY 100" → "PAY 999".
    const tampered = (bytes: Buffer, name: string, at: (dataAt: number, size: number) => number, value: number) => {
      const record = zipLayout(bytes).find((r) => r.name.toString() === name)!;
      const dataAt = record.local + 30 + bytes.readUInt16LE(record.local + 26) + bytes.readUInt16LE(record.local + 28);
      bytes[at(dataAt, bytes.readUInt32LE(record.local + 18))] = value;
      return bytes;
    };
    const small = tampered(await zipBytes([{ name: 'bank.txt', data: 'PAY 100 EUR', compress: false }, { name: 'fine.txt', data: 'fine' }]), 'bank.txt', (at) => at + 4, '9'.charCodeAt(0));
    const large = tampered(await zipBytes([{ name: 'large.bin', data: Buffer.alloc(4 * 1024 * 1024, 7), compress: false }]), 'large.bin', (at, size) => at + size - 1, 8);
    const message = 'The entry cannot be read: its data does not match its CRC-32 checksum';
    const urlId = (await owner.get('/api/auth/me')).body.data.user.urlId;
    const smallId = idOf((await uploadFile(owner, 'tampered.zip', small, { type: 'application/zip' })).body.data);
    const own = await owner.get(`/api/archives/${smallId}/entry?path=bank.txt`);
    expect([own.status, own.body?.error]).toEqual([400, message]);
    const shared = await owner.post(`/api/share/${urlId}/tampered.zip/archive/entry`, { path: 'bank.txt' });
    expect([shared.status, shared.body?.error]).toEqual([400, message]);
    expect((await owner.get(`/api/archives/${smallId}/entry?path=fine.txt`)).text).toBe('fine');
    // Found at the end of 4 MiB, when the answer has begun: it is cut short, never complete.
    const largeId = idOf((await uploadFile(owner, 'tampered-large.zip', large, { type: 'application/zip' })).body.data);
    const answer = await fetch(`${server.baseUrl}/api/archives/${largeId}/entry?path=large.bin`, { headers: { cookie: owner.cookieHeader() } });
    expect(answer.status).toBe(200);
    await expect(answer.arrayBuffer()).rejects.toThrow();
  });

  it('answers 400 for a file that is not an archive and 404 for another account’s or a missing file', async () => {
    const notArchive = await owner.get(`/api/archives/${textId}`);
    expect(notArchive.status).toBe(400);
    expect(notArchive.body).toEqual({ success: false, error: expect.stringContaining('not a ZIP or tar') });
    const stranger = await signUp(server.baseUrl);
    expect((await stranger.get(`/api/archives/${archiveId}`)).status).toBe(404);
    expect((await stranger.get(`/api/archives/${archiveId}/entry?path=docs/readme.md`)).status).toBe(404);
    expect((await owner.get('/api/archives/no-such-file')).status).toBe(404);
    // An empty tar (its two zero blocks, as `tar -cf empty.tar -T /dev/null` writes) is an archive of
    // nothing, as an empty ZIP is; zero bytes that are not a whole number of blocks are not a tar.
    const empty = await uploadFile(owner, 'empty.tar', new Uint8Array(1024), { type: 'application/x-tar' });
    const listed = await owner.get(`/api/archives/${idOf(empty.body.data)}`);
    expect([listed.status, listed.body.data]).toEqual([200, { format: 'tar', entryCount: 0, totalSize: 0, truncated: false, entries: [] }]);
    const zeros = await uploadFile(owner, 'zeros.tar', new Uint8Array(1000), { type: 'application/x-tar' });
    expect((await owner.get(`/api/archives/${idOf(zeros.body.data)}`)).status).toBe(400);
  });

  it('refuses any Authorization header with the generic 401, even beside a valid session', async () => {
    const token = await createToken(owner, ['files:read', 'files:upload']);
    const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken as string;
    for (const authorization of [`Bearer ${token}`, `Bearer ${legacy}`, 'Basic abc', 'whatever']) {
      for (const path of [`/api/archives/${archiveId}`, `/api/archives/${archiveId}/entry?path=docs/readme.md`]) {
        const answer = await owner.get(path, { headers: { authorization } });
        expect(answer.status, `${authorization} ${path}`).toBe(401);
        expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
      }
    }
  });

  it('holds a slot while an entry streams: others get 503 with Retry-After, client mistakes still their 4xx', async () => {
    // A client that does not read a 32 MiB entry holds the one slot (ARCHIVE_CONCURRENCY=1).
    const controller = new AbortController();
    const held = await fetch(`${server.baseUrl}/api/archives/${archiveId}/entry?path=big.bin`, {
      headers: { cookie: owner.cookieHeader() },
      signal: controller.signal,
    });
    expect(held.status).toBe(200);
    const busy = await owner.get(`/api/archives/${archiveId}`);
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('5');
    expect(busy.body).toEqual({ success: false, error: expect.stringContaining('try again') });
    // Mistakes, missing and other accounts' files are answered whatever the capacity.
    expect((await owner.get('/api/archives/no-such-file')).status).toBe(404);
    expect((await owner.get(`/api/archives/${archiveId}/entry`)).status).toBe(400);
    expect((await owner.get(`/api/archives/${archiveId}`, { headers: { authorization: 'Bearer x' } })).status).toBe(401);
    // The client goes away: the slot comes back. (The answer is referred to up to here: an unread
    // answer that is garbage collected has its body cancelled by fetch, which gives the slot back.)
    controller.abort();
    await held.body?.cancel().catch(() => undefined);
    await expect.poll(async () => (await owner.get(`/api/archives/${archiveId}`)).status, { timeout: 10_000 }).toBe(200);
  });
});


describe.each(storageKinds)('archive capacity shared with the public on %s storage', (kind) => {
  // Anyone may read a public archive's entries from its share page; such readers take slots as the
  // owners' requests do: every slot, and the request past them gets 503 (contract §9).
  let server: TestServer;
  let stopStorage: () => Promise<void>;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let archiveId: string;
  let shareUrl: string;

  beforeAll(async () => {
    const storage = await storageEnv(kind);
    stopStorage = storage.stop;
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', ARCHIVE_CONCURRENCY: '4' });
    owner = await signUp(server.baseUrl);
    const zip = await zipBytes([{ name: 'small.txt', data: 'small' }, { name: 'big.bin', data: Buffer.alloc(BIG) }]);
    const uploaded = await uploadFile(owner, 'public.zip', zip, { type: 'application/zip', fields: { visibility: 'PUBLIC' } });
    expect(uploaded.status).toBe(200);
    archiveId = idOf(uploaded.body.data);
    shareUrl = `${server.baseUrl}/api/share${new URL(uploaded.body.data.url).pathname}/archive`;
  });
  afterAll(async () => {
    await server?.close();
    await stopStorage?.();
  });

  it('lets readers of share pages hold every slot, as the contract has it; the request past them, an owner\'s too, gets 503', async () => {
    // Each unread answer is kept with its controller: one garbage collected would have its body
    // cancelled by fetch, closing the connection and giving its slot back before its time.
    const held: Array<{ controller: AbortController; answer: Response }> = [];
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      // Clients that never read their 32 MiB entry.
      const answer = await fetch(`${shareUrl}/entry`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: 'big.bin' }), signal: controller.signal });
      statuses.push(answer.status);
      if (answer.status === 200) held.push({ controller, answer });
      else await answer.text();
    }
    expect(statuses).toEqual([200, 200, 200, 200, 503]);
    const past = await owner.get(`/api/archives/${archiveId}`);
    expect([past.status, past.headers.get('retry-after')]).toEqual([503, '5']);
    for (const { controller, answer } of held) {
      controller.abort();
      await answer.body?.cancel().catch(() => undefined);
    }
    await expect.poll(async () => (await fetch(shareUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, { timeout: 10_000 }).toBe(200);
    // One slot back lets the manifest through; the next test needs every slot back, not just one.
    await expect.poll(() => server.ctx.archiveCapacity.inUse, { timeout: 10_000 }).toBe(0);
    expect((await owner.get(`/api/archives/${archiveId}`)).status).toBe(200);
  });

  it('lets one account use every slot (contract §9); the request past them gets 503 with Retry-After', async () => {
    // Kept with their answers, as above: a collected answer gave its slot back, and the request
    // past the slots got a 200.
    const held: Array<{ controller: AbortController; answer: Response }> = [];
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const controller = new AbortController();
      // An owner who never reads the 32 MiB entries it asked for.
      const answer = await fetch(`${server.baseUrl}/api/archives/${archiveId}/entry?path=big.bin`, { headers: { cookie: owner.cookieHeader() }, signal: controller.signal });
      statuses.push(answer.status);
      if (answer.status === 200) held.push({ controller, answer });
      else {
        expect(answer.headers.get('retry-after')).toBe('5');
        expect(((await answer.json()) as { error: string }).error).toBe('Too many archives are being read right now; try again shortly');
      }
    }
    expect(statuses).toEqual([200, 200, 200, 200, 503]);
    for (const { controller, answer } of held) {
      controller.abort();
      await answer.body?.cancel().catch(() => undefined);
    }
    await expect.poll(async () => (await owner.get(`/api/archives/${archiveId}`)).status, { timeout: 10_000 }).toBe(200);
    await expect.poll(() => server.ctx.archiveCapacity.inUse, { timeout: 10_000 }).toBe(0);
  });
});
