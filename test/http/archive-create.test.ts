/**
 * Creating a ZIP of owned files (contract §9), through HTTP on both databases and both storage
 * providers: the new archive is a normal file (upload links, folder, file.ready) whose entries are
 * the files' bytes under names unique also without case; types already compressed are stored; the
 * quota and size limit bound it while it streams, leaving nothing behind when it is refused.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { createToken, PNG_1X1, uploadFile } from '../support/uploads.ts';
import { expectStoredAsRecorded, providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';
import { everyoneRole, withoutEveryonePermission } from '../support/roles.ts';
import { zipBytes } from '../support/archives.ts';

const idOf = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.each(providers)('archive creation on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let admin: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: 'true', ARCHIVE_CONCURRENCY: '1' });
    admin = await signUp(server.baseUrl);
    await admin.patch('/api/settings', { registration: 'open' });
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  async function upload(client: typeof admin, name: string, bytes: Uint8Array | string, type?: string) {
    const answer = await uploadFile(client, name, bytes, type ? { type } : {});
    expect(answer.status, answer.text).toBe(200);
    return { id: idOf(answer.body.data), name: answer.body.data.name as string };
  }

  it('makes a ZIP of the files, a file of the library with its links, folder and file.ready', async () => {
    const user = await signUp(server.baseUrl);
    expect((await user.post('/api/webhooks', { name: 'ready', url: 'http://127.0.0.1:9/hook' })).status).toBe(201);
    const folder = (await user.post('/api/folders', { name: 'Bundles' })).body.data.folder as { id: string };
    const text = 'hello '.repeat(2000);
    const noise = randomBytes(200_000);
    const upper = await upload(user, 'Notes.txt', text);
    const lower = await upload(user, 'notes.txt', 'lower case');
    const png = await upload(user, 'dot.png', PNG_1X1, 'image/png');
    const bin = await upload(user, 'noise.bin', noise, 'application/octet-stream');

    const answer = await user.post('/api/archives', { fileIds: [upper.id, lower.id, png.id, bin.id], name: 'My bundle', folderId: folder.id });
    expect(answer.status, answer.text).toBe(201);
    const links = answer.body.data as { name: string; type: string; size: number; rawUrl: string; downloadUrl: string };
    expect(links.name).toBe('My_bundle.zip');
    expect(links.type).toBe('application/zip');
    const listed = (await user.get(`/api/files?folder=${folder.id}`)).body.data as Array<{ name: string }>;
    expect(listed.map((f) => f.name)).toEqual(['My_bundle.zip']);

    // Its manifest: names unique without case, text deflated, the PNG stored.
    const manifest = (await user.get(`/api/archives/${idOf(links)}`)).body.data as { entries: Array<{ path: string; size: number; compressedSize: number }> };
    expect(manifest.entries.map((e) => [e.path, e.size])).toEqual([
      ['Notes.txt', text.length],
      ['notes-1.txt', 10],
      ['dot.png', PNG_1X1.length],
      ['noise.bin', noise.length],
    ]);
    expect(manifest.entries[0]!.compressedSize).toBeLessThan(text.length / 10);
    expect(manifest.entries[2]!.compressedSize).toBe(PNG_1X1.length);
    // The entries' bytes are the files' own.
    const entry = await fetch(`${server.baseUrl}/api/archives/${idOf(links)}/entry?path=noise.bin`, { headers: { cookie: user.cookieHeader() } });
    expect(sha(new Uint8Array(await entry.arrayBuffer()))).toBe(sha(noise));
    const zipBytes = new Uint8Array(await (await fetch(links.rawUrl)).arrayBuffer());
    expect(zipBytes.length).toBe(links.size);

    const deliveries = await server.ctx.db.selectFrom('webhookDeliveries').select('body').where('userId', '=', user.userId).where('eventType', '=', 'file.ready').execute();
    expect(deliveries.map((d) => (JSON.parse(d.body) as { data: { name: string } }).data.name)).toContain('My_bundle.zip');
    await expectStoredAsRecorded(server, storage, user.userId);

    // Without a name: archive.zip, unfiled; a second one gets a unique name.
    const unnamed = await user.post('/api/archives', { fileIds: [png.id] });
    expect(unnamed.body.data.name).toBe('archive.zip');
    const again = await user.post('/api/archives', { fileIds: [png.id], folderId: null });
    expect(again.body.data.name).toBe('archive-1.zip');
    // A name of nothing a file name keeps: the default, not a bare "zip".
    for (const name of ['???', '?? ?.zip']) {
      const punctuation = await user.post('/api/archives', { fileIds: [png.id], name });
      expect(punctuation.status, punctuation.text).toBe(201);
      expect(punctuation.body.data.name).toMatch(/^archive-\d\.zip$/);
    }
  });

  it('keeps an archive of private or password-protected files private, whatever the default', async () => {
    const user = await signUp(server.baseUrl);
    const open = await upload(user, 'open.txt', 'for everyone');
    const secret = await upload(user, 'secret.txt', 'for me');
    const locked = await upload(user, 'locked.txt', 'for the password holder');
    expect((await user.patch(`/api/files/${secret.id}`, { visibility: 'PRIVATE' })).status).toBe(200);
    expect((await user.patch(`/api/files/${locked.id}`, { password: 'only the two of us' })).status).toBe(200);
    const visibilityOf = async (links: { downloadUrl: string }) =>
      ((await user.get('/api/files?limit=100')).body.data as Array<{ id: string; visibility: string; hasPassword: boolean }>).find((f) => f.id === idOf(links))!;
    // Public files alone: the account's default (public).
    const plain = await user.post('/api/archives', { fileIds: [open.id], name: 'plain' });
    expect(await visibilityOf(plain.body.data)).toMatchObject({ visibility: 'PUBLIC', hasPassword: false });
    // Half of a surrogate pair alone, as JSON can spell it, is no text: refused, as a rename refuses it
    // (it was stored as a replacement character).
    const halved = await user.post('/api/archives', { fileIds: [open.id], name: 'report\ud800 done' });
    expect([halved.status, halved.body.error]).toEqual([400, 'body.name: must be valid Unicode text (it holds half of a character, a lone surrogate)']);
    // Otherwise the archive would hand out what the files keep to their owner.
    for (const [name, ids] of [['with private', [open.id, secret.id]], ['with password', [open.id, locked.id]]] as const) {
      const answer = await user.post('/api/archives', { fileIds: ids, name });
      expect(answer.status, answer.text).toBe(201);
      expect(await visibilityOf(answer.body.data), name).toMatchObject({ visibility: 'PRIVATE' });
      expect((await fetch(answer.body.data.rawUrl)).status, name).toBe(404);
    }
  });

  it('refuses an archive over the quota with 413, leaving no bytes, record or charge', async () => {
    const user = await signUp(server.baseUrl);
    // Declared as what they are: random bytes may begin with a file signature (one in 65,536 with
    // ARJ's two bytes), which a declared text/plain would contradict (400).
    const a = await upload(user, 'a.bin', randomBytes(3000), 'application/octet-stream');
    const b = await upload(user, 'b.bin', randomBytes(3000), 'application/octet-stream');
    const used = 6000;
    expect((await admin.patch(`/api/users/${user.userId}`, { quotaBytes: used + 4000 })).status).toBe(200);
    const answer = await user.post('/api/archives', { fileIds: [a.id, b.id] });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ success: false, error: expect.stringContaining('quota') });
    const files = await user.get('/api/files');
    expect(files.body.pagination.total).toBe(2);
    await expectStoredAsRecorded(server, storage, user.userId);
    expect(await storage.leftovers(server.dataDir)).toEqual([]);
  });

  it('answers 409 when a file of the selection is deleted while the archive is made: the selection is out of date, nothing is lost', async () => {
    const user = await signUp(server.baseUrl);
    // Deflated first, for a second or more: the second file's bytes are read only after it.
    const big = await upload(user, 'big.bin', randomBytes(48 * 1024 * 1024), 'application/octet-stream');
    const victim = await upload(user, 'victim.txt', 'going');
    const making = user.post('/api/archives', { fileIds: [big.id, victim.id] });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await user.delete(`/api/files/${victim.id}`)).status).toBe(204);
    const answer = await making;
    expect([answer.status, answer.body.error]).toEqual([409, 'victim.txt was deleted while the archive was being made; make it again without it']);
    expect((await user.get('/api/files')).body.pagination.total).toBe(1);
    expect(await storage.leftovers(server.dataDir)).toEqual([]);
  });

  it('answers 404 naming a file whose bytes are gone, wherever it is in the selection, and keeps serving', async () => {
    const user = await signUp(server.baseUrl);
    const kept = await upload(user, 'kept.txt', 'kept');
    const lost = await upload(user, 'lost.txt', 'lost');
    const { storageKey } = await server.ctx.db.selectFrom('files').select('storageKey').where('id', '=', lost.id).executeTakeFirstOrThrow();
    await server.ctx.storage.delete(storageKey);
    for (const fileIds of [[lost.id], [lost.id, kept.id], [kept.id, lost.id]]) {
      const answer = await user.post('/api/archives', { fileIds });
      expect(answer.status, answer.text).toBe(404);
      expect(answer.body.error).toContain('lost.txt');
    }
    expect((await user.get('/api/health')).status).toBe(200);
    const files = await user.get('/api/files');
    expect(files.body.pagination.total).toBe(2);
    expect(await storage.leftovers(server.dataDir)).toEqual([]);
  });

  it('needs files.read and files.upload, owned files and a valid body; tokens and the legacy credential get the generic 401', async () => {
    const user = await signUp(server.baseUrl);
    const mine = await upload(user, 'mine.txt', 'mine');
    const stranger = await signUp(server.baseUrl);
    const theirs = await upload(stranger, 'theirs.txt', 'theirs');

    const missing = await user.post('/api/archives', { fileIds: [mine.id, theirs.id] });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toContain(theirs.id);
    expect((await user.post('/api/archives', { fileIds: [mine.id], folderId: 'no-such-folder' })).status).toBe(404);
    for (const body of [{}, { fileIds: [] }, { fileIds: [mine.id, mine.id] }, { fileIds: Array.from({ length: 501 }, (_, i) => `id${i}`) }, { fileIds: [mine.id], name: '' }, { fileIds: [mine.id], other: 1 }]) {
      const answer = await user.post('/api/archives', body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
    }
    const everyone = await everyoneRole(admin);
    for (const permission of ['files.read', 'files.upload']) {
      await withoutEveryonePermission(admin, everyone, permission, async () => {
        expect((await user.post('/api/archives', { fileIds: [mine.id] })).status, permission).toBe(403);
      });
    }
    const token = await createToken(user, ['files:read', 'files:upload']);
    const legacy = (await user.get('/api/profile/upload-token')).body.data.uploadToken as string;
    for (const authorization of [`Bearer ${token}`, `Bearer ${legacy}`]) {
      const answer = await user.post('/api/archives', { fileIds: [mine.id] }, { headers: { authorization } });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
    }
    await expectStoredAsRecorded(server, storage, user.userId);
  });

  it('while the one slot is held, extraction and creation get 503 with Retry-After, and client mistakes still their 4xx', async () => {
    const user = await signUp(server.baseUrl);
    // 32 MiB of zeros deflate to a few kB: a client that does not read the entry holds the slot.
    const big = await zipBytes([{ name: 'big.bin', data: new Uint8Array(32 * 1024 * 1024), compress: true }]);
    const archive = await upload(user, 'big.zip', big, 'application/zip');
    const small = await upload(user, 'small.txt', 'small');
    const controller = new AbortController();
    const held = await fetch(`${server.baseUrl}/api/archives/${archive.id}/entry?path=big.bin`, {
      headers: { cookie: user.cookieHeader() },
      signal: controller.signal,
    });
    expect(held.status).toBe(200);
    try {
      for (const [path, body] of [[`/api/archives/${archive.id}/extract`, {}], ['/api/archives', { fileIds: [small.id] }]] as const) {
        const busy = await user.post(path, body);
        expect(busy.status, path).toBe(503);
        expect(busy.headers.get('retry-after')).toBe('5');
        expect(busy.body).toEqual({ success: false, error: expect.stringContaining('try again') });
      }
      expect((await user.post('/api/archives/no-such-file/extract', {})).status).toBe(404);
      expect((await user.post(`/api/archives/${archive.id}/extract`, { paths: [] })).status).toBe(400);
      expect((await user.post('/api/archives', { fileIds: ['no-such-file'] })).status).toBe(404);
      expect((await user.post('/api/archives', { fileIds: [] })).status).toBe(400);
      expect((await user.post('/api/archives', { fileIds: [small.id] }, { headers: { authorization: 'Bearer x' } })).status).toBe(401);
      expect((await user.post('/api/archives', { fileIds: [small.id] }, { origin: 'https://evil.example' })).status).toBe(403);
    } finally {
      // The unread answer is referred to up to here: one garbage collected has its body cancelled
      // by fetch, which would give the slot back before the requests above.
      controller.abort();
      await held.body?.cancel().catch(() => undefined);
    }
    await expect.poll(async () => (await user.post('/api/archives', { fileIds: [small.id] })).status, { timeout: 10_000 }).toBe(201);
  });
});
