/**
 * A shared archive's manifest and entries (contract §9, "Share pages"): the file's visibility and
 * password rules as on its share page and downloads, the password in the body or the file's unlock
 * cookie, the generic 401 for any Authorization header, JSON and form bodies; and the share page of
 * an open archive showing its manifest as a tree. On both storage providers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import yazl from 'yazl';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile, type UploadOptions } from '../support/uploads.ts';
import { storageEnv, storageKinds } from '../support/storage-env.ts';
import { manyEntriesZip } from '../support/archives.ts';

const MTIME = new Date('2026-01-02T03:04:06Z');

async function zipBytes(entries: Array<{ name: string; data: string | Buffer } | { dir: string }>): Promise<Uint8Array> {
  const file = new yazl.ZipFile();
  for (const entry of entries) {
    if ('dir' in entry) file.addEmptyDirectory(entry.dir, { mtime: MTIME });
    else file.addBuffer(Buffer.from(entry.data), entry.name, { mtime: MTIME });
  }
  file.end();
  const chunks: Buffer[] = [];
  for await (const chunk of file.outputStream) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

async function tarGzBytes(entries: Array<{ name: string; data: string }>): Promise<Uint8Array> {
  const pack = tar.pack();
  for (const entry of entries) pack.entry({ name: entry.name, mtime: MTIME }, entry.data);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
  return new Uint8Array(gzipSync(Buffer.concat(chunks)));
}

const BUNDLE = [{ dir: 'docs/' }, { name: 'docs/readme.md', data: '# Hello' }, { name: 'docs/guide/intro.txt', data: 'intro text' }, { name: 'top.txt', data: 'at the top' }];
const PASSWORD = 'open sesame';

describe.each(storageKinds)('shared archives on %s storage', (kind) => {
  let server: TestServer;
  let stopStorage: () => Promise<void>;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let urlId: string;
  let zip: Uint8Array;

  beforeAll(async () => {
    const storage = await storageEnv(kind);
    stopStorage = storage.stop;
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    owner = await signUp(server.baseUrl);
    await owner.patch('/api/settings', { registration: 'open' });
    urlId = (await owner.get('/api/auth/me')).body.data.user.urlId;
    zip = await zipBytes(BUNDLE);
  });
  afterAll(async () => {
    await server?.close();
    await stopStorage?.();
  });

  const anonymous = () => new Client(server.baseUrl);

  /** Uploads with the owner's session; answers the file's ID, its share routes and its page. */
  async function upload(name: string, content: string | Uint8Array, options: UploadOptions = {}) {
    const response = await uploadFile(owner, name, content, { type: 'application/zip', ...options });
    expect(response.status, response.text).toBe(200);
    const base = `/api/share/${urlId}/${encodeURIComponent(name)}/archive`;
    return { id: response.body.data.downloadUrl.split('/').at(-2) as string, manifest: base, entry: `${base}/entry`, page: `/${urlId}/${encodeURIComponent(name)}` };
  }
  const form = (client: Client, path: string, fields: Record<string, string>) =>
    client.request('POST', path, { body: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });

  it('lists the manifest of a public archive to anyone, with or without a body', async () => {
    const file = await upload('public.zip', zip);
    const expected = {
      format: 'zip',
      entryCount: 4,
      totalSize: 7 + 10 + 10,
      truncated: false,
      entries: [
        { path: 'docs', size: 0, compressedSize: 0, directory: true, modifiedAt: MTIME.toISOString(), encrypted: false },
        { path: 'docs/readme.md', size: 7, compressedSize: expect.any(Number), directory: false, modifiedAt: MTIME.toISOString(), encrypted: false },
        { path: 'docs/guide/intro.txt', size: 10, compressedSize: expect.any(Number), directory: false, modifiedAt: MTIME.toISOString(), encrypted: false },
        { path: 'top.txt', size: 10, compressedSize: expect.any(Number), directory: false, modifiedAt: MTIME.toISOString(), encrypted: false },
      ],
    };
    for (const answer of [await anonymous().post(file.manifest, {}), await anonymous().post(file.manifest), await form(anonymous(), file.manifest, {})]) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body).toEqual({ success: true, data: expected });
      // Open to everyone: nothing that asks caches to keep it private.
      expect(answer.headers.get('cache-control')).toBeNull();
    }
  });

  it('names both body types it reads when sent another', async () => {
    const file = await upload('typed.zip', zip);
    const asText = await anonymous().request('POST', file.entry, { body: 'path=top.txt', headers: { 'content-type': 'text/plain' } });
    expect([asText.status, asText.body.error]).toEqual([400, 'body: must be a JSON object or a form, sent with Content-Type: application/json or application/x-www-form-urlencoded']);
    const asXml = await anonymous().request('POST', file.manifest, { body: '<path/>', headers: { 'content-type': 'application/xml' } });
    expect([asXml.status, asXml.body.error]).toEqual([400, 'Unsupported Content-Type: application/xml; send the body as application/json or application/x-www-form-urlencoded']);
  });

  it("sends one entry's bytes as an attachment, from a JSON or a form body", async () => {
    const file = await upload('entries.zip', zip);
    for (const answer of [await anonymous().post(file.entry, { path: 'docs/readme.md' }), await form(anonymous(), file.entry, { path: 'docs/readme.md' })]) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).toBe('# Hello');
      expect(answer.headers.get('content-disposition')).toMatch(/^attachment; filename="readme.md"/);
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('content-type')).toMatch(/^text\/markdown/);
      expect(answer.headers.get('content-security-policy')).toContain('sandbox');
    }
    const nested = await anonymous().post(file.entry, { path: 'docs/guide/intro.txt' });
    expect(nested.text).toBe('intro text');
    expect(nested.headers.get('content-type')).toMatch(/^text\/plain/);
  });

  it('reads a tar.gz too', async () => {
    const file = await upload('bundle.tar.gz', await tarGzBytes([{ name: 'a/b.txt', data: 'tarred' }]), { type: 'application/gzip' });
    const manifest = await anonymous().post(file.manifest, {});
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.body.data).toMatchObject({ format: 'tar', entryCount: 1, totalSize: 6, entries: [{ path: 'a/b.txt', size: 6, directory: false }] });
    expect((await anonymous().post(file.entry, { path: 'a/b.txt' })).text).toBe('tarred');
  });

  it("is a 404 for a private file, except to the owner's session (which must send this instance's Origin)", async () => {
    const file = await upload('private.zip', zip, { fields: { visibility: 'PRIVATE' } });
    const stranger = await signUp(server.baseUrl);
    for (const client of [anonymous(), stranger]) {
      const manifest = await client.post(file.manifest, {});
      expect(manifest.status).toBe(404);
      expect(manifest.body).toEqual({ success: false, error: 'File not found' });
      expect((await client.post(file.entry, { path: 'top.txt' })).status).toBe(404);
    }
    const mine = await owner.post(file.manifest, {});
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data.entryCount).toBe(4);
    expect(mine.headers.get('cache-control')).toBe('private, no-store');
    const entry = await owner.post(file.entry, { path: 'top.txt' });
    expect(entry.text).toBe('at the top');
    expect(entry.headers.get('cache-control')).toBe('private, no-store');
    // A POST carrying the session cookie from another site is refused (a browser sends its Origin).
    const crossSite = await owner.post(file.manifest, {}, { origin: 'https://elsewhere.example' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body).toEqual({ success: false, error: expect.stringMatching(/Origin/) });
  });

  it('is a 404 for an expired file and for a missing one', async () => {
    const file = await upload('expired.zip', zip, { fields: { expiresAt: new Date(Date.now() + 3_600_000).toISOString() } });
    expect((await anonymous().post(file.manifest, {})).status).toBe(200);
    // Time passes: the expiry is reached, and the expiry job has not run yet.
    await server.ctx.db.updateTable('files').set({ expiresAt: Date.now() - 1000 }).where('id', '=', file.id).execute();
    for (const path of [file.manifest, `/api/share/${urlId}/no-such-file.zip/archive`, `/api/share/nosuchurlid/expired.zip/archive`]) {
      const answer = await anonymous().post(path, {});
      expect(answer.status, path).toBe(404);
      expect(answer.body).toEqual({ success: false, error: 'File not found' });
    }
    expect((await anonymous().post(file.entry, { path: 'top.txt' })).status).toBe(404);
  });

  it('asks for the password of a protected file: 403 without or with a wrong one, 200 with it in the body or the unlock cookie', async () => {
    const file = await upload('locked.zip', zip, { fields: { password: PASSWORD } });
    const visitor = anonymous();
    const without = await visitor.post(file.manifest, {});
    expect(without.status).toBe(403);
    expect(without.body).toEqual({ success: false, error: expect.stringMatching(/password/) });
    expect((await visitor.post(file.entry, { path: 'top.txt' })).status).toBe(403);
    const wrong = await visitor.post(file.manifest, { password: 'wrong guess' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ success: false, error: 'Wrong password' });
    expect((await visitor.post(file.entry, { path: 'top.txt', password: 'wrong guess' })).status).toBe(403);

    const manifest = await visitor.post(file.manifest, { password: PASSWORD });
    expect(manifest.status, manifest.text).toBe(200);
    expect(manifest.body.data.entryCount).toBe(4);
    expect(manifest.headers.get('cache-control')).toBe('private, no-store');
    const entry = await form(visitor, file.entry, { path: 'top.txt', password: PASSWORD });
    expect(entry.status, entry.text).toBe(200);
    expect(entry.text).toBe('at the top');
    expect(entry.headers.get('cache-control')).toBe('private, no-store');

    // The file's unlock cookie opens it without the password.
    const unlocked = anonymous();
    expect((await unlocked.post(`/api/files/${file.id}/unlock`, { password: PASSWORD })).status).toBe(204);
    expect((await unlocked.post(file.manifest, {})).status).toBe(200);
    expect((await unlocked.post(file.entry, { path: 'docs/readme.md' })).text).toBe('# Hello');
    // The owner's session opens it too, as it does the share page.
    expect((await owner.post(file.manifest, {})).status).toBe(200);
  });

  it('counts wrong passwords toward the unlock throttle of the file', async () => {
    const file = await upload('guarded.zip', zip, { fields: { password: PASSWORD } });
    const visitor = anonymous();
    // Ten wrong guesses through the archive routes (the unlock throttle allows ten per window)…
    for (let i = 0; i < 5; i += 1) {
      expect((await visitor.post(file.manifest, { password: `guess ${i}` })).status).toBe(403);
      expect((await visitor.post(file.entry, { path: 'top.txt', password: `guess ${i}b` })).status).toBe(403);
    }
    // …use up the attempts of POST /api/files/{id}/unlock as well, and the other way round.
    const unlock = await visitor.post(`/api/files/${file.id}/unlock`, { password: PASSWORD });
    expect(unlock.status).toBe(429);
    expect(unlock.headers.get('retry-after')).toMatch(/^\d+$/);
    const limited = await visitor.post(file.manifest, { password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, error: expect.stringMatching(/Too many wrong passwords/) });
  });

  it('refuses any Authorization header with the generic 401, whatever else the request carries', async () => {
    const file = await upload('bearer.zip', zip);
    const token = await createToken(owner, ['files:read', 'files:upload']);
    const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken as string;
    expect(token).toMatch(/^svc_/);
    for (const authorization of [`Bearer ${token}`, `Bearer ${legacy}`, 'Basic x', 'whatever']) {
      for (const client of [anonymous(), owner]) {
        for (const [path, body] of [
          [file.manifest, {}],
          [file.entry, { path: 'top.txt' }],
        ] as const) {
          const answer = await client.post(path, body, { headers: { authorization } });
          expect(answer.status, `${authorization} ${path}`).toBe(401);
          expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
        }
      }
    }
  });

  it('answers 404 for an unknown entry, 400 for a file that is not an archive and for a body it does not take', async () => {
    const file = await upload('mistakes.zip', zip);
    const missing = await anonymous().post(file.entry, { path: 'no/such/entry.txt' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: 'No such entry in the archive' });
    // A directory is not an entry with bytes.
    expect((await anonymous().post(file.entry, { path: 'docs' })).status).toBe(404);

    const text = await upload('plain.txt', 'not an archive', { type: 'text/plain' });
    const notArchive = await anonymous().post(text.manifest, {});
    expect(notArchive.status).toBe(400);
    expect(notArchive.body).toEqual({ success: false, error: expect.stringContaining('not a ZIP or tar') });
    expect((await anonymous().post(text.entry, { path: 'x' })).status).toBe(400);

    const cases: Array<[string, Awaited<ReturnType<Client['post']>>, RegExp]> = [
      ['unknown JSON property', await anonymous().post(file.manifest, { password: PASSWORD, extract: true }), /unknown field "extract"/],
      ['unknown entry property', await anonymous().post(file.entry, { path: 'top.txt', folderId: null }), /unknown field "folderId"/],
      ['unknown form field', await form(anonymous(), file.entry, { path: 'top.txt', extra: '1' }), /unknown field "extra"/],
      ['a form field twice', await anonymous().request('POST', file.entry, { body: 'path=top.txt&path=docs/readme.md', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), /more than once/],
      ['no path', await anonymous().post(file.entry, {}), /^body\.path: is required: the entry path as the manifest lists it$/],
      // Each problem in its own words, not "is required" for all.
      ['a path too long', await anonymous().post(file.entry, { path: 'a'.repeat(4097) }), /^body\.path: must be at most 4096 characters$/],
      ['a path that is a number', await anonymous().post(file.entry, { path: 5 }), /^body\.path: must be text: the entry path as the manifest lists it$/],
      ['an empty password', await anonymous().post(file.manifest, { password: '' }), /password/],
      ['not JSON', await anonymous().request('POST', file.manifest, { body: '{"password":', headers: { 'content-type': 'application/json' } }), /not valid JSON/],
    ];
    for (const [what, answer, message] of cases) {
      expect(answer.status, what).toBe(400);
      expect(answer.body, what).toEqual({ success: false, error: expect.stringMatching(message) });
    }
    const otherType = await anonymous().request('POST', file.manifest, { body: '<password/>', headers: { 'content-type': 'application/xml' } });
    expect(otherType.status).toBe(400);
    expect(otherType.body).toEqual({ success: false, error: expect.stringContaining('Unsupported Content-Type') });
  });

  it('answers 404 for a file record whose bytes are gone', async () => {
    const file = await upload('vanished.zip', zip);
    const { storageKey } = await server.ctx.db.selectFrom('files').select('storageKey').where('id', '=', file.id).executeTakeFirstOrThrow();
    await server.ctx.storage.delete(storageKey);
    expect((await anonymous().post(file.manifest, {})).status).toBe(404);
    expect((await anonymous().post(file.entry, { path: 'top.txt' })).status).toBe(404);
  });

  describe('the share page', () => {
    it('shows the manifest of a public archive as a tree, each file with a download button posting to the entry route', async () => {
      const file = await upload('tree.zip', zip);
      const page = await anonymous().get(file.page);
      expect(page.status).toBe(200);
      const html = page.text;
      expect(html).toContain('ZIP archive · 4 entries · 27 bytes uncompressed');
      expect(html).toContain(`<form method="post" action="${server.baseUrl}${file.entry}">`);
      // Directories nest: docs/ holds guide/, which holds intro.txt; top.txt sits at the top.
      expect(html).toMatch(/<summary><bdi>docs<\/bdi>\/<\/summary><ul><li><details open><summary><bdi>guide<\/bdi>\/<\/summary><ul><li class="file"><bdi class="name">intro.txt<\/bdi><span class="size">10 bytes<\/span><button type="submit" name="path" value="docs\/guide\/intro.txt"/);
      expect(html).toContain('<bdi class="name">readme.md</bdi><span class="size">7 bytes</span><button type="submit" name="path" value="docs/readme.md"');
      expect(html).toContain('<bdi class="name">top.txt</bdi>');
      // No script on an open page; its CSP still allows no inline script, and forms only to itself.
      expect(html).not.toContain('<script');
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("form-action 'self'");
      expect(csp).not.toContain('unsafe-inline');
      // What the page's form posts is what the entry route answers.
      const posted = await form(anonymous(), file.entry, { path: 'docs/guide/intro.txt' });
      expect(posted.text).toBe('intro text');
      // HEAD says what GET sends: the length of the page with its tree, and the same caching.
      const head = await fetch(server.baseUrl + file.page, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-length'), head.headers.get('cache-control')]).toEqual([200, String(Buffer.byteLength(html)), page.headers.get('cache-control')]);
    });

    it('shows the first 1,000 entries of a 10,000-entry ZIP, quickly', async () => {
      const file = await upload('many.zip', manyEntriesZip(10_000));
      const started = performance.now();
      const page = await anonymous().get(file.page);
      const elapsed = performance.now() - started;
      expect(page.status).toBe(200);
      expect(page.text).toContain('ZIP archive · 10,000 entries');
      expect(page.text).toContain('The first 1,000 entries are shown.');
      expect(page.text.match(/<button type="submit" name="path"/g)).toHaveLength(1000);
      expect(page.text).toContain('value="f/001000.txt"');
      expect(page.text).not.toContain('value="f/001001.txt"');
      // Read within the page's time budget (else it would have no tree), on a slow machine too.
      expect(elapsed).toBeLessThan(2500);
    });

    it("offers no download for a tar's links and special files, which have no bytes of their own", async () => {
      const pack = tar.pack();
      pack.entry({ name: 'real.txt', mtime: new Date(0) }, 'real bytes');
      pack.entry({ name: 'to-passwd', type: 'symlink', linkname: '/etc/passwd', mtime: new Date(0) });
      pack.entry({ name: 'again.txt', type: 'link', linkname: 'real.txt', mtime: new Date(0) });
      pack.finalize();
      const chunks: Buffer[] = [];
      for await (const chunk of pack as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
      const file = await upload('links.tar', Buffer.concat(chunks), { type: 'application/x-tar' });
      const html = (await anonymous().get(file.page)).text;
      expect(html).toContain('value="real.txt"');
      for (const path of ['to-passwd', 'again.txt']) {
        expect(html).not.toContain(`value="${path}"`);
        expect((await form(anonymous(), file.entry, { path })).status, path).toBe(404);
      }
      expect(html).toContain('<bdi class="name">to-passwd</bdi><span class="size">a symbolic link, not a file</span>');
      expect(html).toContain('<bdi class="name">again.txt</bdi><span class="size">a hard link, not a file</span>');
    });

    it('escapes entry names in the tree', async () => {
      const file = await upload('hostile.zip', await zipBytes([{ name: 'x/<img src=y onerror=alert(1)>"q.txt', data: 'boo' }]));
      const html = (await anonymous().get(file.page)).text;
      expect(html).not.toContain('<img src=y');
      expect(html).toContain('&lt;img src=y onerror=alert(1)&gt;&quot;q.txt');
    });

    it('shows and saves an entry whose name holds direction controls without them: no "invoiceexe.png" spoof', async () => {
      const spoof = 'invoice\u202Egnp.exe';
      const file = await upload('spoof.zip', await zipBytes([{ name: `bills/${spoof}`, data: 'MZ' }, { name: '\u2067\u0641\u0627\u062a\u0648\u0631\u0629.pdf', data: 'ok' }]));
      const html = (await anonymous().get(file.page)).text;
      // Only in the button's value, which is never shown.
      expect(html.split('\u202E')).toHaveLength(2);
      expect(html).toContain('<bdi class="name">invoicegnp.exe</bdi>');
      expect(html).toContain('aria-label="Download invoicegnp.exe"');
      // The button still asks for the entry by its name as stored, and gets it, saved without them.
      expect(html).toContain(`value="bills/${spoof}"`);
      const entry = await anonymous().post(file.entry, { path: `bills/${spoof}` });
      expect(entry.status).toBe(200);
      expect(entry.headers.get('content-disposition')).toBe(`attachment; filename="invoicegnp.exe"; filename*=UTF-8''invoicegnp.exe`);
      // The manifest gives names as stored (contract §9).
      expect((await anonymous().post(file.manifest, {})).body.data.entries.map((e: { path: string }) => e.path)).toContain(`bills/${spoof}`);
    });

    it('shows no tree for a locked archive, a file that is not one, or an archive it cannot read', async () => {
      const locked = await upload('locked-page.zip', zip, { fields: { password: PASSWORD } });
      const lockedPage = await anonymous().get(locked.page);
      expect(lockedPage.status).toBe(200);
      expect(lockedPage.text).toContain('type="password"');
      expect(lockedPage.text).not.toContain('class="archive"');
      // Unlocked, the same browser sees it.
      const visitor = anonymous();
      await visitor.post(`/api/files/${locked.id}/unlock`, { password: PASSWORD });
      expect((await visitor.get(locked.page)).text).toContain('class="archive"');

      const broken = await upload('broken.zip', 'PK\u0003\u0004 and then nothing a ZIP needs', { type: 'application/octet-stream' });
      const brokenPage = await anonymous().get(broken.page);
      expect(brokenPage.status).toBe(200);
      expect(brokenPage.text).not.toContain('class="archive"');
      const text = await upload('notes.txt', 'just text', { type: 'text/plain' });
      expect((await anonymous().get(text.page)).text).not.toContain('class="archive"');
    });
  });
});
