import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, PNG_1X1, uploadFile, type UploadOptions } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';
import { PEOPLE, UNFURLERS } from '../support/user-agents.ts';

/**
 * Serving (contract §3 "Files", §6): the share page, the raw bytes, the download route and
 * unlocking a password-protected file, on both storage providers.
 */
describe.each(providers)('serving files from %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let urlId: string;

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    owner = await signUp(server.baseUrl);
    await owner.patch('/api/settings', { registration: 'open' });
    urlId = (await owner.get('/api/auth/me')).body.data.user.urlId;
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  const anonymous = () => new Client(server.baseUrl);
  const local = (url: string) => url.slice(server.baseUrl.length);

  /** Uploads with the owner's session; answers the upload links, the file ID and local paths. */
  async function upload(name: string, content: string | Uint8Array, options: UploadOptions = {}) {
    const response = await uploadFile(owner, name, content, options);
    expect(response.status, response.text).toBe(200);
    const links = response.body.data;
    return {
      links,
      id: links.downloadUrl.split('/').at(-2) as string,
      page: local(links.pageUrl),
      raw: local(links.rawUrl),
      download: local(links.downloadUrl),
    };
  }
  const countsOf = (id: string) => server.ctx.db.selectFrom('files').select(['views', 'downloads']).where('id', '=', id).executeTakeFirstOrThrow();

  it('answers at once, with an error and no file headers, when the stored bytes are shorter than the record', async () => {
    const file = await upload('cut.bin', new Uint8Array(300_000).fill(7));
    const { storageKey } = await server.ctx.db.selectFrom('files').select('storageKey').where('id', '=', file.id).executeTakeFirstOrThrow();
    // The object replaced by a shorter one behind Hoard's back: a disk fault, a partial restore.
    await server.ctx.storage.put(storageKey, Readable.from([Buffer.alloc(1000, 7)]));
    for (const [path, headers] of [[file.raw, {}], [file.download, {}], [file.raw, { range: 'bytes=0-99' }], [file.raw, { range: 'bytes=5000-5999' }]] as const) {
      const started = Date.now();
      const answer = await owner.get(path, { headers });
      expect(answer.status, `${path} ${JSON.stringify(headers)}: ${answer.text}`).toBe(500);
      expect(answer.headers.get('etag')).toBeNull();
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    // Nothing was served, so nothing was counted.
    expect(await countsOf(file.id)).toEqual({ views: 0, downloads: 0 });
  });

  it('answers a range outside the file with 416 that no cache keeps under the file', async () => {
    const file = await upload('short.txt', 'short');
    const answer = await anonymous().get(file.raw, { headers: { range: 'bytes=100-' } });
    expect(answer.status).toBe(416);
    expect(answer.headers.get('content-range')).toBe('bytes */5');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.headers.get('etag')).toBeNull();
    expect(answer.headers.get('content-disposition')).toBeNull();
  });

  describe('the share page', () => {
    it('previews an image with OpenGraph and Twitter card tags', async () => {
      const file = await upload('photo.png', PNG_1X1, { type: 'image/png' });
      const page = await anonymous().get(file.page);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.text).toMatch(/^<!doctype html>/);
      expect(page.text).toContain(`<img src="${file.links.rawUrl}" alt="photo.png">`);
      expect(page.text).toContain('<meta property="og:title" content="photo.png">');
      expect(page.text).toContain(`<meta property="og:url" content="${file.links.pageUrl}">`);
      expect(page.text).toContain(`<meta property="og:image" content="${file.links.rawUrl}">`);
      expect(page.text).toContain('<meta property="og:image:type" content="image/png">');
      expect(page.text).toContain('<meta name="twitter:card" content="summary_large_image">');
      expect(page.text).toContain('<meta name="twitter:title" content="photo.png">');
      expect(page.text).toContain(`<meta name="twitter:image" content="${file.links.rawUrl}">`);
      expect(page.text).toContain(`href="${file.links.downloadUrl}"`);
    });

    it('previews video, audio and PDF, with og:image only for images', async () => {
      const video = await upload('clip.mp4', 'not really a video', { type: 'video/mp4' });
      const audio = await upload('song.mp3', 'not really audio', { type: 'audio/mpeg' });
      const pdf = await upload('report.pdf', '%PDF-1.4\n%âãÏÓ\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', { type: 'application/pdf' });

      const videoPage = (await anonymous().get(video.page)).text;
      // Named for a screen reader, as an image is by its alt text.
      expect(videoPage).toContain(`<video src="${video.links.rawUrl}" controls preload="metadata" aria-label="clip.mp4">`);
      expect((await anonymous().get(audio.page)).text).toContain(`<audio src="${audio.links.rawUrl}" controls preload="metadata" aria-label="song.mp3">`);
      expect(videoPage).toContain(`<meta property="og:video" content="${video.links.rawUrl}">`);
      expect(videoPage).toContain('<meta property="og:title" content="clip.mp4">');
      expect(videoPage).not.toContain('og:image');

      const audioPage = (await anonymous().get(audio.page)).text;
      expect(audioPage).toContain(`<audio src="${audio.links.rawUrl}" controls`);
      expect(audioPage).toContain('<meta name="twitter:card" content="summary">');
      expect(audioPage).not.toContain('og:image');

      const pdfPage = await anonymous().get(pdf.page);
      expect(pdfPage.status).toBe(200);
      expect(pdfPage.text).toContain(`<iframe src="${pdf.links.rawUrl}" title="report.pdf">`);
      expect(pdfPage.text).toContain(`<meta property="og:url" content="${pdf.links.pageUrl}">`);
      expect(pdfPage.text).not.toContain('og:image');
    });

    it('shows the HTML-escaped beginning of a text file', async () => {
      const payload = '<script>alert("owned")</script> & <b>bold</b>\n';
      const file = await upload('payload.txt', payload + 'x'.repeat(70 * 1024) + 'TAIL-MARKER');
      const page = await anonymous().get(file.page);
      expect(page.status).toBe(200);
      // A focusable region, so that a long text scrolls with the keyboard too.
      expect(page.text).toContain('<pre tabindex="0" role="region" aria-label="Text of payload.txt">&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;\n');
      expect(page.text).not.toContain('<script>alert');
      expect(page.text).not.toContain('<b>bold');
      // Only the beginning: the preview stops well before the end of a long file.
      expect(page.text).not.toContain('TAIL-MARKER');
      expect(page.text).toContain('<meta name="twitter:card" content="summary">');
      // Cut short between characters, never in one, and said to be cut.
      const accents = await upload('accents.txt', `a${'é'.repeat(40 * 1024)}`);
      const accentPage = await anonymous().get(accents.page);
      const preview = /<pre[^>]*>([^<]*)<\/pre>/.exec(accentPage.text)![1]!;
      expect(preview).not.toContain('\ufffd');
      expect(preview.endsWith('é\n…')).toBe(true);

      // UTF-16 with its byte-order mark, as Windows writes text, is read as UTF-16, both byte orders.
      const hello = 'Grüße aus Köln\r\n';
      const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(hello, 'utf16le')]);
      const utf16be = Buffer.from(utf16le.subarray(2)).swap16();
      for (const [name, bytes] of [['windows.txt', utf16le], ['big-endian.txt', Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be])]] as const) {
        const page = (await anonymous().get((await upload(name, bytes, { type: 'text/plain' })).page)).text;
        expect(/<pre[^>]*>([^<]*)<\/pre>/.exec(page)?.[1], name).toBe(hello);
      }
      // UTF-32, which no browser decodes, gets no preview rather than letters between NUL bytes.
      const utf32 = Buffer.alloc(4 + hello.length * 4);
      utf32.set([0xff, 0xfe, 0, 0]);
      [...hello].forEach((letter, i) => utf32.writeUInt32LE(letter.codePointAt(0)!, 4 + i * 4));
      const wide = (await anonymous().get((await upload('thirty-two.txt', utf32, { type: 'text/plain' })).page)).text;
      expect(wide).not.toContain('<pre');
    });

    it('escapes the file name everywhere it appears', async () => {
      // Names are sanitised at upload; a name set directly in the database still cannot inject markup.
      const file = await upload('innocent.png', PNG_1X1, { type: 'image/png' });
      const hostile = 'a"b<i>.png';
      await server.ctx.db.updateTable('files').set({ name: hostile }).where('id', '=', file.id).execute();
      const page = await anonymous().get(`/${urlId}/${encodeURIComponent(hostile)}`);
      expect(page.status).toBe(200);
      expect(page.text).not.toContain(hostile);
      expect(page.text).toContain('a&quot;b&lt;i&gt;.png');
    });

    it('shows only a password form for a protected file', async () => {
      const file = await upload('secret.txt', 'the secret text', { fields: { password: 'open sesame' } });
      const page = await anonymous().get(file.page);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      // The form posts the password without the page's script too: never a GET that puts it in the URL.
      expect(page.text).toContain(`<form id="unlock" method="post" action="${server.baseUrl}/api/files/${file.id}/unlock" data-unlock-url="${server.baseUrl}/api/files/${file.id}/unlock" data-page-url="${server.baseUrl}${file.page}">`);
      expect(page.text).toContain('type="password"');
      expect(page.text).not.toContain('the secret text');
      expect(page.text).not.toContain('og:');
      expect(page.text).not.toContain(file.links.rawUrl);
      expect(page.headers.get('cache-control')).toBe('private, no-store');
    });

    it('carries a Content-Security-Policy that forbids framing and allows only its own preview, style and unlock script', async () => {
      const image = await upload('csp.png', PNG_1X1, { type: 'image/png' });
      const locked = await upload('csp-locked.txt', 'locked', { fields: { password: 'open sesame' } });
      const origin = new URL(server.baseUrl).origin;
      // With the share page's 404, the other pages of a visitor's mistyped address: a path of no route, a short link that is not.
      const pages = [await anonymous().get(image.page), await anonymous().get(locked.page), await anonymous().get(`/${urlId}/no-such-file.png`), await anonymous().get('/nope/x/y'), await anonymous().get('/u/zzzzzz')];
      for (const page of pages) {
        const csp = page.headers.get('content-security-policy') ?? '';
        const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
        expect(directives.get('default-src'), csp).toEqual(["'none'"]);
        expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
        expect(directives.get('base-uri')).toEqual(["'none'"]);
        expect(directives.get('object-src')).toEqual(["'none'"]);
        for (const source of ['img-src', 'media-src', 'frame-src', 'connect-src']) expect(directives.get(source), source).toEqual(["'self'", origin]);
        // The page's one style element, and on a locked page its one script, are allowed by their hashes.
        const style = /<style>([\s\S]*?)<\/style>/.exec(page.text)![1]!;
        expect(directives.get('style-src')).toEqual([`'sha256-${createHash('sha256').update(style).digest('base64')}'`]);
        const script = /<script>([\s\S]*?)<\/script>/.exec(page.text)?.[1];
        if (script !== undefined) expect(directives.get('script-src')).toEqual([`'sha256-${createHash('sha256').update(script).digest('base64')}'`]);
        expect(page.headers.get('x-frame-options')).toBe('DENY');
      }
      expect(pages.map((p) => p.status)).toEqual([200, 200, 404, 404, 404]);
      for (const page of pages) expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(pages[1]!.text).toContain('<script>');
      // The raw URL is what chat apps embed (og:image, twitter:player): it keeps its own policy, without frame-ancestors.
      expect((await anonymous().get(image.raw)).headers.get('content-security-policy')).not.toContain('frame-ancestors');
    });

    it('gives a size as the web app does: whole units from 100 up, one decimal below', async () => {
      const large = await upload('sized.txt', 'x'.repeat(125_800));
      const small = await upload('small.txt', 'y'.repeat(1_536));
      const largePage = (await anonymous().get(large.page)).text;
      expect(largePage).toContain('text/plain · 123 KiB');
      expect(largePage).toContain('content="text/plain, 123 KiB"');
      expect((await anonymous().get(small.page)).text).toContain('text/plain · 1.5 KiB');
    });

    it('lets caches keep a public file no longer than until it expires', async () => {
      const soon = await upload('soon.txt', 'for a little while', { fields: { expiresAt: new Date(Date.now() + 40_000).toISOString() } });
      const lasting = await upload('lasting.txt', 'for ever');
      const maxAge = (answer: { headers: Headers }) => Number(/max-age=(\d+)/.exec(answer.headers.get('cache-control') ?? '')?.[1]);
      for (const path of [soon.raw, soon.download, soon.page]) {
        const answer = await anonymous().get(path);
        expect(answer.status, path).toBe(200);
        expect(answer.headers.get('cache-control'), path).toMatch(/^public, max-age=\d+$/);
        expect(maxAge(answer), path).toBeLessThanOrEqual(40);
        expect(maxAge(answer), path).toBeGreaterThan(25);
      }
      expect((await anonymous().get(lasting.raw)).headers.get('cache-control')).toBe('public, max-age=300');
      expect((await anonymous().get(lasting.page)).headers.get('cache-control')).toBe('public, max-age=60');
    });

    it('says until when a file that expires can be had, in UTC with the exact instant, and nothing of the kind for one that does not', async () => {
      const soon = await upload('until.txt', 'for a while', { fields: { expiresAt: '2099-03-04T05:06:07.890Z' } });
      const lasting = await upload('always.txt', 'for ever');
      const page = (await anonymous().get(soon.page)).text;
      expect(page).toContain('<p class="meta">text/plain · 11 bytes · Available until <time datetime="2099-03-04T05:06:07.890Z">4 Mar 2099, 05:06 UTC</time></p>');
      expect((await anonymous().get(lasting.page)).text).not.toContain('Available until');
      // A locked page says it too, before the password.
      const locked = await upload('locked-until.txt', 'behind a password', { fields: { expiresAt: '2099-03-04T05:06:07.890Z', password: 'open sesame' } });
      expect((await anonymous().get(locked.page)).text).toContain('<p class="meta">This file is protected by a password. Available until <time datetime="2099-03-04T05:06:07.890Z">4 Mar 2099, 05:06 UTC</time></p>');
    });

    it('is a 404 HTML page for private, expired and missing files, but the owner sees their own', async () => {
      const hidden = await upload('hidden.png', PNG_1X1, { type: 'image/png', fields: { visibility: 'PRIVATE' } });
      const expired = await upload('expired.txt', 'old news', { fields: { expiresAt: new Date(Date.now() + 3_600_000).toISOString() } });
      // Time passes: the expiry is reached, and the expiry job has not run yet.
      await server.ctx.db.updateTable('files').set({ expiresAt: Date.now() - 1000 }).where('id', '=', expired.id).execute();
      const stranger = await signUp(server.baseUrl, uniqueEmail('stranger'));

      for (const visitor of [anonymous(), stranger]) {
        // A link cut back to its account part (`/<urlId>/`) is a page not found too, not a JSON 400.
        for (const path of [hidden.page, expired.page, `/${urlId}/no-such-file.txt`, `/nosuchurlid/hidden.png`, `/${urlId}/`]) {
          const page = await visitor.get(path);
          expect(page.status, path).toBe(404);
          expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
          expect(page.text).toContain('Not found');
          expect(page.text).not.toContain('hidden.png');
          expect(page.text).not.toContain('expired.txt');
        }
      }

      const own = await owner.get(hidden.page);
      expect(own.status).toBe(200);
      expect(own.text).toContain(`<img src="${hidden.links.rawUrl}"`);
      expect(own.headers.get('cache-control')).toBe('private, no-store');
      expect((await owner.get(expired.page)).status).toBe(200);
    });
  });

  describe('raw bytes', () => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';

    it('serves the stored bytes with the stored Content-Type and nosniff', async () => {
      const png = await upload('pixel.png', PNG_1X1, { type: 'image/png' });
      const response = await fetch(server.baseUrl + png.raw);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('content-length')).toBe(String(PNG_1X1.length));
      expect(response.headers.get('accept-ranges')).toBe('bytes');
      expect(response.headers.get('content-disposition')).toMatch(/^inline; filename="pixel.png"/);
      expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(PNG_1X1))).toBe(true);

      const text = await upload('letters.txt', alphabet);
      const raw = await anonymous().get(text.raw);
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-type')).toMatch(/^text\/plain(;|$)/);
      expect(raw.text).toBe(alphabet);

      // Text is sent as UTF-8: without a charset a browser reads `Grüße` as windows-1252.
      const words = 'Grüße — 日本語 “quotes” café\n';
      const unicode = await upload('unicode.txt', words, { type: 'text/plain; charset=utf-8' });
      for (const path of [unicode.raw, `/api/files/${unicode.id}/download`]) {
        const served = await fetch(server.baseUrl + path);
        expect(served.headers.get('content-type'), path).toBe('text/plain; charset=utf-8');
        expect(new TextDecoder().decode(await served.arrayBuffer())).toBe(words);
      }
    });

    it('serves a file named "download" from its raw URL, counting a view, not a download', async () => {
      // Its raw URL /api/files/<urlId>/download has the shape of the download route's.
      const file = await upload('download', 'named like a route');
      expect(file.raw).toBe(`/api/files/${urlId}/download`);
      const raw = await anonymous().get(file.raw);
      expect(raw.status).toBe(200);
      expect(raw.text).toBe('named like a route');
      expect(raw.headers.get('content-disposition')).toMatch(/^inline; filename="download"/);
      expect(await countsOf(file.id)).toEqual({ views: 1, downloads: 0 });
      // The download route still answers for the file's ID, and HEAD on both.
      expect((await anonymous().get(file.download)).headers.get('content-disposition')).toMatch(/^attachment; filename="download"/);
      expect((await anonymous().request('HEAD', file.raw)).status).toBe(200);
      expect(await countsOf(file.id)).toEqual({ views: 1, downloads: 1 });
    });

    it("serves the owner's previews to the owner's browser only, counting no view", async () => {
      const file = await upload('previewed.png', PNG_1X1, { type: 'image/png' });
      const secret = await upload('previewed-private.png', PNG_1X1, { type: 'image/png', fields: { visibility: 'PRIVATE' } });
      for (const { id } of [file, secret]) {
        const preview = await owner.get(`/api/files/${id}/preview`);
        expect(preview.status).toBe(200);
        expect(preview.headers.get('content-type')).toBe('image/png');
        expect(preview.headers.get('x-content-type-options')).toBe('nosniff');
        expect(preview.headers.get('content-disposition')).toMatch(/^inline; filename="previewed/);
        expect(await countsOf(id)).toEqual({ views: 0, downloads: 0 });
      }
      // Anyone else: not found, even for a public file; a token gets the generic 401, as on the owner's
      // other session-only file routes (contract §10).
      const stranger = await signUp(server.baseUrl, uniqueEmail('stranger'));
      const token = await createToken(owner, ['files:read']);
      for (const answer of [await anonymous().get(`/api/files/${file.id}/preview`), await stranger.get(`/api/files/${file.id}/preview`)]) {
        expect(answer.status).toBe(404);
      }
      expect((await anonymous().get(`/api/files/${file.id}/preview`, { token })).status).toBe(401);
      expect((await anonymous().get(`/api/files/nosuchfileid0000000000/preview`)).status).toBe(404);
      expect(await countsOf(file.id)).toEqual({ views: 0, downloads: 0 });

      // A file named "preview" is still served from its raw URL.
      const named = await upload('preview', 'named like a route');
      expect((await anonymous().get(named.raw)).text).toBe('named like a route');
      expect(await countsOf(named.id)).toEqual({ views: 1, downloads: 0 });
    });

    it('answers byte ranges with 206 and the exact bytes, and 416 outside the file', async () => {
      const file = await upload('ranges.txt', alphabet);
      const range = (value: string) => anonymous().get(file.raw, { headers: { range: value } });

      const first = await range('bytes=0-3');
      expect(first.status).toBe(206);
      expect(first.headers.get('content-range')).toBe(`bytes 0-3/${alphabet.length}`);
      expect(first.headers.get('content-length')).toBe('4');
      expect(first.text).toBe('abcd');

      const middle = await range('bytes=10-19');
      expect(middle.status).toBe(206);
      expect(middle.headers.get('content-range')).toBe(`bytes 10-19/${alphabet.length}`);
      expect(middle.text).toBe('klmnopqrst');

      const suffix = await range('bytes=-5');
      expect(suffix.status).toBe(206);
      expect(suffix.headers.get('content-range')).toBe(`bytes 31-35/${alphabet.length}`);
      expect(suffix.text).toBe('56789');

      const openEnded = await range('bytes=30-');
      expect(openEnded.status).toBe(206);
      expect(openEnded.text).toBe('456789');

      const clamped = await range('bytes=34-1000');
      expect(clamped.status).toBe(206);
      expect(clamped.headers.get('content-range')).toBe(`bytes 34-35/${alphabet.length}`);
      expect(clamped.text).toBe('89');

      for (const value of ['bytes=36-40', 'bytes=100-', 'bytes=-0']) {
        const unsatisfiable = await range(value);
        expect(unsatisfiable.status, value).toBe(416);
        expect(unsatisfiable.headers.get('content-range')).toBe(`bytes */${alphabet.length}`);
      }
      // A range ending before it begins is no range: the header is ignored (RFC 9110 §14.1.1).
      const backwards = await range('bytes=5-2');
      expect([backwards.status, backwards.text]).toEqual([200, alphabet]);
      // The unit in any case, spaces around the "=".
      for (const value of ['BYTES=0-3', 'Bytes = 0-3']) {
        const spelled = await range(value);
        expect([spelled.status, spelled.text], value).toEqual([206, alphabet.slice(0, 4)]);
      }
    });

    it('reads the Range header as a list: empty items skipped, touching ranges joined, unsatisfiable ones passed over', async () => {
      const file = await upload('range-lists.txt', alphabet);
      const range = (value: string) => anonymous().get(file.raw, { headers: { range: value } });
      const ranged = async (value: string, start: number, end: number) => {
        const response = await range(value);
        expect([response.status, response.headers.get('content-range'), response.text], value).toEqual([206, `bytes ${start}-${end}/${alphabet.length}`, alphabet.slice(start, end + 1)]);
      };
      // A list may hold empty items, which a recipient skips (RFC 9110 §5.6.1.2).
      await ranged('bytes=0-3,', 0, 3);
      await ranged('bytes= , 0-3 ,,', 0, 3);
      // Ranges that overlap or touch are one range (§14.2 lets a server join them).
      await ranged('bytes=0-3,4-7', 0, 7);
      await ranged('bytes=10-19, 12-14, 15-25', 10, 25);
      await ranged('bytes=4-7,0-3', 0, 7);
      // A list is satisfiable when one of its ranges is (§14.1.1): the others are passed over.
      await ranged('bytes=100-200, 30-', 30, 35);
      await ranged('bytes=-0, 0-1', 0, 1);

      // Ranges with a gap between them would be a multipart answer; this server sends the whole file.
      const apart = await range('bytes=0-3, 10-12');
      expect([apart.status, apart.headers.get('content-range'), apart.text]).toEqual([200, null, alphabet]);
      // None of them satisfiable: 416.
      const none = await range('bytes=36-40, 100-,');
      expect([none.status, none.headers.get('content-range')]).toEqual([416, `bytes */${alphabet.length}`]);
      // One item that is no range makes the header one this server ignores: the whole file.
      for (const value of ['bytes=0-3, x', 'bytes=0-3, 5-2', 'bytes=,', 'bytes=0-3;4-5']) {
        const ignored = await range(value);
        expect([ignored.status, ignored.text], value).toEqual([200, alphabet]);
      }
    });

    it('serves an empty file, and no range of it is satisfiable', async () => {
      const file = await upload('empty.txt', '');
      const raw = await anonymous().get(file.raw);
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-length')).toBe('0');
      expect(raw.text).toBe('');
      for (const value of ['bytes=0-', 'bytes=-5', 'bytes=0-0']) {
        const response = await anonymous().get(file.raw, { headers: { range: value } });
        expect(response.status, value).toBe(416);
        expect(response.headers.get('content-range')).toBe('bytes */0');
      }
      expect((await anonymous().get(file.page)).status).toBe(200);
    });

    it('answers 304 to a matching If-None-Match', async () => {
      const file = await upload('cached.txt', 'cache me');
      const first = await anonymous().get(file.raw);
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
      const again = await anonymous().get(file.raw, { headers: { 'if-none-match': etag! } });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(etag);
      const other = await anonymous().get(file.raw, { headers: { 'if-none-match': '"something-else"' } });
      expect(other.status).toBe(200);
      expect(other.text).toBe('cache me');
      // If-None-Match compares weakly (RFC 9110 §13.1.2): a cache that weakened the tag still matches.
      const weak = await anonymous().get(file.raw, { headers: { 'if-none-match': `"other", W/${etag}` } });
      expect(weak.status).toBe(304);
      // Without a body, and with no Content-Length but that of the bytes (RFC 9110 §8.6), for HEAD too.
      expect(again.headers.get('content-length')).toBeNull();
      const head = await anonymous().request('HEAD', file.raw, { headers: { 'if-none-match': etag! } });
      expect([head.status, head.headers.get('content-length')]).toEqual([304, null]);
    });

    it('sends the upload time as Last-Modified and answers If-Modified-Since with 304 unless If-None-Match is sent', async () => {
      const file = await upload('dated.txt', 'dated');
      const first = await anonymous().get(file.raw);
      const lastModified = first.headers.get('last-modified');
      const { createdAt } = await server.ctx.db.selectFrom('files').select('createdAt').where('id', '=', file.id).executeTakeFirstOrThrow();
      expect(lastModified).toBe(new Date(createdAt).toUTCString());
      const since = (value: string, headers: Record<string, string> = {}) => anonymous().get(file.raw, { headers: { 'if-modified-since': value, ...headers } });
      const later = new Date(createdAt + 60_000).toUTCString();
      const earlier = new Date(createdAt - 60_000).toUTCString();

      for (const value of [lastModified!, later]) {
        const held = await since(value);
        expect([held.status, held.text, held.headers.get('last-modified')], value).toEqual([304, '', lastModified]);
      }
      for (const value of [earlier, 'not a date', '']) {
        const changed = await since(value);
        expect([changed.status, changed.text], value).toEqual([200, 'dated']);
      }
      // If-None-Match decides when both are sent (RFC 9110 §13.1.3): another tag is another copy.
      const otherCopy = await since(later, { 'if-none-match': '"other"' });
      expect([otherCopy.status, otherCopy.text]).toEqual([200, 'dated']);
      const head = await anonymous().request('HEAD', file.raw, { headers: { 'if-modified-since': later } });
      expect([head.status, head.headers.get('content-length')]).toEqual([304, null]);
      // The download and the owner's preview carry it too.
      expect((await anonymous().get(file.download)).headers.get('last-modified')).toBe(lastModified);
      expect((await owner.get(`/api/files/${file.id}/preview`)).headers.get('last-modified')).toBe(lastModified);
    });

    it('answers 412, without the bytes or their headers, when If-Match or If-Unmodified-Since does not hold', async () => {
      const file = await upload('guarded.txt', alphabet);
      const etag = (await anonymous().get(file.raw)).headers.get('etag')!;
      const { createdAt } = await server.ctx.db.selectFrom('files').select('createdAt').where('id', '=', file.id).executeTakeFirstOrThrow();
      const get = (headers: Record<string, string>) => anonymous().get(file.download, { headers });
      const failed = async (headers: Record<string, string>) => {
        const response = await get(headers);
        expect(response.status, JSON.stringify(headers)).toBe(412);
        expect(response.body.error, JSON.stringify(headers)).toMatch(/If-Match|If-Unmodified-Since/);
        expect([response.headers.get('etag'), response.headers.get('content-disposition'), response.headers.get('last-modified')]).toEqual([null, null, null]);
      };
      const served = async (headers: Record<string, string>, status = 200) => {
        const response = await get(headers);
        expect([response.status, response.headers.get('etag')], JSON.stringify(headers)).toEqual([status, etag]);
      };

      await served({ 'if-match': etag });
      await served({ 'if-match': `"other", ${etag}` });
      await served({ 'if-match': '*' });
      await failed({ 'if-match': '"other"' });
      // If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches.
      await failed({ 'if-match': `W/${etag}` });
      await served({ 'if-unmodified-since': new Date(createdAt).toUTCString() });
      await served({ 'if-unmodified-since': 'not a date' });
      await failed({ 'if-unmodified-since': new Date(createdAt - 60_000).toUTCString() });
      // If-Match decides when both are sent (§13.1.4).
      await served({ 'if-match': etag, 'if-unmodified-since': new Date(createdAt - 60_000).toUTCString() });
      // A failed precondition comes before a range or a revalidation.
      await failed({ 'if-match': '"other"', range: 'bytes=0-3' });
      await failed({ 'if-match': '"other"', 'if-none-match': etag });
      await served({ 'if-match': etag, range: 'bytes=0-3' }, 206);
      // The refused requests counted nothing: one download for each of the six 200s and the 206 from the first byte.
      expect((await countsOf(file.id)).downloads).toBe(7);
    });

    it('answers a resumed download (If-Range) with the range only while the tag still names these bytes', async () => {
      const file = await upload('resumed.txt', alphabet);
      const etag = (await anonymous().get(file.raw)).headers.get('etag')!;
      const resume = (ifRange: string) => anonymous().get(file.download, { headers: { range: 'bytes=30-', 'if-range': ifRange } });

      const same = await resume(etag);
      expect(same.status).toBe(206);
      expect(same.headers.get('content-range')).toBe(`bytes 30-35/${alphabet.length}`);
      expect(same.text).toBe('456789');

      // Other bytes, a weak tag or a date (no Last-Modified is sent) never match (RFC 9110 §13.1.5):
      // the whole file is sent, so a client never splices a range of other bytes onto its copy.
      for (const other of ['"0000"', `W/${etag}`, 'Fri, 27 Nov 2026 00:00:00 GMT']) {
        const whole = await resume(other);
        expect(whole.status, other).toBe(200);
        expect(whole.headers.get('content-range'), other).toBeNull();
        expect(whole.text, other).toBe(alphabet);
      }
    });
    it('serves a file stored as application/json as its bytes: whole, a range, a 304 and a download', async () => {
      // Its Content-Type is the API's, but its body is the file, not an answer of the API.
      const content = '{"stored":"as json"}';
      const file = await upload('data.json', content, { type: 'application/json' });
      // Read with fetch: a range of JSON is not JSON.
      const get = async (path: string, headers: Record<string, string> = {}) => {
        const response = await fetch(server.baseUrl + path, { headers });
        return { status: response.status, type: response.headers.get('content-type'), etag: response.headers.get('etag'), text: await response.text() };
      };
      const whole = await get(file.raw);
      expect(whole.status, whole.text).toBe(200);
      expect(whole.type).toMatch(/^application\/json(;|$)/);
      expect(whole.text).toBe(content);
      const part = await get(file.raw, { range: 'bytes=0-9' });
      expect(part.status, part.text).toBe(206);
      expect(part.text).toBe(content.slice(0, 10));
      const again = await get(file.raw, { 'if-none-match': whole.etag! });
      expect(again.status, again.text).toBe(304);
      const download = await get(file.download);
      expect(download.status, download.text).toBe(200);
      expect(download.text).toBe(content);
    });


    it('serves every type a browser would run (scripts, HTML, XHTML, SVG, XML, XSL) only as attachments', async () => {
      const script = 'alert(document.cookie)';
      const types = [
        'text/javascript',
        'application/javascript',
        'application/x-javascript',
        'text/x-javascript',
        'application/ecmascript',
        'application/x-ecmascript',
        'text/ecmascript',
        'text/x-ecmascript',
        'text/jscript',
        'text/livescript',
        'text/javascript1.5',
        'text/html',
        'application/xhtml+xml',
        'image/svg+xml',
        'text/xml',
        'application/xml',
        'application/rss+xml',
        'text/xsl',
        'application/xslt+xml',
        'multipart/x-mixed-replace',
      ];
      for (const [index, type] of types.entries()) {
        const file = await upload(`active-${index}.bin`, script, { type });
        const raw = await anonymous().get(file.raw);
        expect(raw.status, type).toBe(200);
        expect(raw.headers.get('content-disposition'), type).toMatch(/^attachment; /);
        expect(raw.headers.get('x-content-type-options')).toBe('nosniff');
        expect(raw.text).toBe(script);
      }
      // Types a browser only shows stay inline, JSON included (it is never run).
      for (const [index, type] of ['text/plain', 'application/json', 'image/png', 'text/css', 'application/pdf'].entries()) {
        const file = await upload(`passive-${index}.bin`, '{}', { type });
        expect((await anonymous().get(file.raw)).headers.get('content-disposition'), type).toMatch(/^inline; /);
      }
    });

    it('serves HTML, SVG and XML only as attachments', async () => {
      const cases = [
        ['page.html', '<!doctype html><html><body><script>alert(1)</script></body></html>', 'text/html'],
        ['drawing.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'image/svg+xml'],
        ['data.xml', '<?xml version="1.0"?><root><x>1</x></root>', 'application/xml'],
      ] as const;
      for (const [name, content, type] of cases) {
        const file = await upload(name, content, { type });
        const raw = await anonymous().get(file.raw);
        expect(raw.status, name).toBe(200);
        expect(raw.headers.get('content-type')).toMatch(new RegExp(`^${type.replace('+', '\\+')}(;|$)`));
        expect(raw.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="${name}"`));
        expect(raw.headers.get('x-content-type-options')).toBe('nosniff');
        expect(raw.headers.get('content-security-policy')).toContain('sandbox');
        expect(raw.text).toBe(content);
      }
    });

    it('sandboxes what it serves but a sound or a video, whose player Chromium would refuse its own bytes under a sandbox', async () => {
      // A type under audio/ or video/ that a browser reads as XML is active content all the same.
      for (const [name, type, sandboxed] of [['clip.mp4', 'video/mp4', false], ['tone.mp3', 'audio/mpeg', false], ['list.xml', 'audio/foo+xml', true], ['dot.png', 'image/png', true], ['notes.txt', 'text/plain', true], ['doc.pdf', 'application/pdf', true]] as const) {
        const file = await upload(name, 'not really media', { type });
        for (const path of [file.raw, file.download]) {
          const answer = await anonymous().get(path);
          expect(answer.status, `${name} ${path}`).toBe(200);
          const policy = answer.headers.get('content-security-policy')!;
          expect(policy, name).toMatch(/^default-src 'none'; /);
          expect(policy.includes('sandbox'), name).toBe(sandboxed);
          expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
        }
      }
    });

    it("refuses an uploaded file to this site's own pages as a script, a style or a worker: the app's CSP allows its own origin's", async () => {
      const script = await upload('evil.js', 'window.pwned = document.cookie', { type: 'text/javascript' });
      const style = await upload('evil.css', 'body { display: none }', { type: 'text/css' });
      for (const file of [script, style]) {
        for (const dest of ['script', 'style', 'worker', 'sharedworker', 'serviceworker', 'audioworklet', 'paintworklet', 'xslt']) {
          for (const path of [file.raw, file.download]) {
            const refused = await anonymous().get(path, { headers: { 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': dest } });
            expect([refused.status, refused.text], `${path} as ${dest}`).toEqual([403, JSON.stringify(path === file.raw ? { error: "A file is not served to this site's own pages as a script, a style or a worker" } : { success: false, error: "A file is not served to this site's own pages as a script, a style or a worker" })]);
          }
        }
        // Another site may use it as it likes, and this site may show it, fetch it or download it.
        for (const [site, dest] of [['cross-site', 'script'], ['same-site', 'style'], ['same-origin', 'document'], ['same-origin', 'empty'], ['same-origin', 'image'], ['none', 'document']]) {
          expect((await anonymous().get(file.raw, { headers: { 'sec-fetch-site': site!, 'sec-fetch-dest': dest! } })).status, `${site} ${dest}`).toBe(200);
        }
        expect((await anonymous().get(file.raw)).status).toBe(200);
      }
    });

    it('counts a view for each GET from the first byte, not for later ranges, a 416 or HEAD, and not as a download', async () => {
      const file = await upload('counted.txt', 'count me');
      for (let i = 0; i < 3; i++) expect((await anonymous().get(file.raw)).status).toBe(200);
      expect((await anonymous().get(file.raw, { headers: { range: 'bytes=0-2' } })).status).toBe(206);
      // A player's further ranges of the same viewing, and ranges outside the file, count nothing.
      expect((await anonymous().get(file.raw, { headers: { range: 'bytes=2-' } })).status).toBe(206);
      expect((await anonymous().get(file.raw, { headers: { range: 'bytes=-3' } })).status).toBe(206);
      expect((await anonymous().get(file.raw, { headers: { range: 'bytes=50-' } })).status).toBe(416);
      const head = await fetch(server.baseUrl + file.raw, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await countsOf(file.id)).toEqual({ views: 4, downloads: 0 });
      const record = await owner.patch(`/api/files/${file.id}`, {});
      expect(record.status).toBe(200);
      expect(record.body.data.file).toMatchObject({ id: file.id, views: 4, downloads: 0 });
    });

    it("counts no view or download for a chat app's or a crawler's fetch, nor for a player's two-byte probe before it plays", async () => {
      const file = await upload('unfurled.txt', 'a file pasted into chats');
      for (const agent of UNFURLERS) {
        for (const path of [file.raw, file.download]) {
          const answer = await anonymous().get(path, { headers: { 'user-agent': agent } });
          expect([answer.status, answer.text], agent).toEqual([200, 'a file pasted into chats']);
        }
        expect((await anonymous().get(file.raw, { headers: { 'user-agent': agent, range: 'bytes=0-1023' } })).status).toBe(206);
      }
      expect(await countsOf(file.id)).toEqual({ views: 0, downloads: 0 });
      // Apple's players (Safari, iMessage) ask for two bytes first, then for the file from its start: one view.
      const apple = 'AppleCoreMedia/1.0.0.23B85 (iPhone; U; CPU OS 26_1 like Mac OS X; en_us)';
      for (const range of ['bytes=0-1', 'bytes=0-23']) expect((await anonymous().get(file.raw, { headers: { 'user-agent': apple, range } })).status).toBe(206);
      // Two bytes of a file that is two bytes long are all of it.
      const tiny = await upload('tiny.txt', 'ok');
      expect((await anonymous().get(tiny.raw, { headers: { range: 'bytes=0-1' } })).status).toBe(206);
      expect(await countsOf(file.id)).toEqual({ views: 1, downloads: 0 });
      expect(await countsOf(tiny.id)).toEqual({ views: 1, downloads: 0 });
      // A person's phone whose name holds a bot's letters counts.
      for (const agent of PEOPLE) expect((await anonymous().get(tiny.raw, { headers: { 'user-agent': agent } })).status).toBe(200);
      expect(await countsOf(tiny.id)).toEqual({ views: 1 + PEOPLE.length, downloads: 0 });
    });

    it('never opens a private file for a named token, even one with files:read', async () => {
      const file = await upload('private.txt', 'private bytes', { fields: { visibility: 'PRIVATE' } });
      const token = await createToken(owner, ['files:read', 'files:upload']);
      const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
      for (const credential of [token, legacy]) {
        expect((await anonymous().get(file.raw, { token: credential })).status).toBe(404);
        // Private downloads are outside named-token access: the generic 401 (contract §10).
        const download = await anonymous().get(file.download, { token: credential });
        expect(download.status).toBe(401);
        expect(download.body).toEqual({ success: false, error: 'Unauthorized' });
      }
      // A token acts with its own authority even when the owner's cookies accompany it (spec, Authentication 2).
      const withCookies = new Client(server.baseUrl);
      withCookies.cookies = new Map(owner.cookies);
      expect((await withCookies.get(file.raw, { token })).status).toBe(404);
      expect((await withCookies.get(file.download, { token })).status).toBe(401);
      expect((await withCookies.get(file.page, { token })).status).toBe(404);
      // The same browser without the token is the owner.
      expect((await withCookies.get(file.raw)).text).toBe('private bytes');
      expect(await countsOf(file.id)).toEqual({ views: 1, downloads: 0 });
    });

    it('is a 404 for private, expired and missing files except to the owner', async () => {
      const hidden = await upload('mine.txt', 'mine', { fields: { visibility: 'PRIVATE' } });
      const expired = await upload('gone.txt', 'gone', { fields: { expiresAt: new Date(Date.now() + 3_600_000).toISOString() } });
      await server.ctx.db.updateTable('files').set({ expiresAt: Date.now() - 1 }).where('id', '=', expired.id).execute();
      const stranger = await signUp(server.baseUrl, uniqueEmail('stranger'));
      for (const visitor of [anonymous(), stranger]) {
        // A raw link cut back to `/api/files/<urlId>/`, or `/api/files/types/`, is a file not found.
        for (const path of [hidden.raw, expired.raw, `/api/files/${urlId}/missing.txt`, `/api/files/${urlId}/`]) {
          const response = await visitor.get(path);
          expect(response.status, path).toBe(404);
          expect(response.body).toEqual({ error: 'File not found' });
        }
      }
      expect((await owner.get(hidden.raw)).text).toBe('mine');
      expect((await owner.get(expired.raw)).text).toBe('gone');
      expect(await countsOf(hidden.id)).toEqual({ views: 1, downloads: 0 });
    });
  });

  describe('GET /api/files/{id}/download', () => {
    it('sends an attachment, supports Range and counts a download', async () => {
      const file = await upload('report.txt', 'downloadable content');
      const response = await anonymous().get(file.download);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="report.txt"; filename*=UTF-8''report.txt`);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain(;|$)/);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.text).toBe('downloadable content');

      const partial = await anonymous().get(file.download, { headers: { range: 'bytes=13-19' } });
      expect(partial.status).toBe(206);
      expect(partial.headers.get('content-range')).toBe('bytes 13-19/20');
      expect(partial.text).toBe('content');
      expect((await anonymous().get(file.download, { headers: { range: 'bytes=20-' } })).status).toBe(416);
      // A download resumed from its start counts again; the pieces after it do not.
      expect((await anonymous().get(file.download, { headers: { range: 'bytes=0-12' } })).status).toBe(206);

      expect(await countsOf(file.id)).toEqual({ views: 0, downloads: 2 });
      expect((await owner.patch(`/api/files/${file.id}`, {})).body.data.file).toMatchObject({ views: 0, downloads: 2 });
    });

    it('names a non-ASCII file safely in both filename parameters', async () => {
      const file = await upload('café menu.txt', 'menu');
      const response = await anonymous().get(file.download);
      expect(response.status).toBe(200);
      // The ASCII fallback (what `curl -OJ` saves) keeps the letter without its accent.
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename="cafe_menu.txt"; filename*=UTF-8''caf%C3%A9_menu.txt`);
      const city = await upload('Łódź Ærø.txt', 'city');
      expect((await anonymous().get(city.download)).headers.get('content-disposition')).toMatch(/^attachment; filename="Lodz_AEro.txt"; /);
      // A character beyond the BMP (an emoji) is one stand-in, not one for each half of its UTF-16 pair.
      const clip = await upload('🎬 שלום.txt', 'clip');
      expect((await anonymous().get(clip.download)).headers.get('content-disposition')).toBe(`attachment; filename="______.txt"; filename*=UTF-8''%F0%9F%8E%AC_%D7%A9%D7%9C%D7%95%D7%9D.txt`);
      // A Hangul syllable is one character, not the two or three letters it is made of; a fullwidth
      // or ligature letter is its plain letter.
      const korean = await upload('사진 Ｆｉｌｅ ﬁnal.txt', 'photo');
      expect((await anonymous().get(korean.download)).headers.get('content-disposition')).toMatch(/^attachment; filename="___File_final\.txt"; /);
      // RFC 5987 leaves only letters, digits and !#$&+-.^_`|~ unencoded in filename*.
      const shot = await upload('shot (1).txt', 'shot');
      expect((await anonymous().get(shot.download)).headers.get('content-disposition')).toBe(`attachment; filename="shot_(1).txt"; filename*=UTF-8''shot_%281%29.txt`);
      // Names are stored composed (NFC); a link typed or pasted decomposed (as macOS writes é) finds them.
      const decomposed = file.raw.replace(encodeURIComponent('é'), encodeURIComponent('e\u0301'));
      expect(decomposed).not.toBe(file.raw);
      expect((await anonymous().get(decomposed)).status).toBe(200);
    });

    it('never gives the ASCII fallback a hidden name, a path or a character a file system or client reads', async () => {
      // Stored names keep fullwidth look-alikes of `.`, `/`, `%` and `:` (they are other characters),
      // but NFKD gives them back their ASCII forms: `curl -OJ` would have saved a hidden `.bash_aliases`.
      const cases: Array<[string, string]> = [
        ['．bash_aliases', 'bash_aliases'],
        ['．．／．．／etc／passwd', '_.._etc_passwd'],
        ['notes．', 'notes'],
        ['a：b＊c？d＜e＞f｜g％41.txt', 'a_b_c_d_e_f_g_41.txt'],
        ['‥hidden.txt', 'hidden.txt'],
        ['．．．', 'file'],
        ['ｒｅｐｏｒｔ＼ｑ1.txt', 'report_q1.txt'],
      ];
      for (const [name, fallback] of cases) {
        const file = await upload(name, 'x');
        const header = (await anonymous().get(file.download)).headers.get('content-disposition')!;
        expect(header.split('; ').slice(0, 2), name).toEqual(['attachment', `filename="${fallback}"`]);
        // The UTF-8 name is the stored one, look-alikes and all.
        expect(header, name).toContain(`filename*=UTF-8''${encodeURIComponent(name)}`);
      }
    });

    it('is a 404 for a private file to anyone but the owner’s session', async () => {
      const file = await upload('private-download.txt', 'owner only', { fields: { visibility: 'PRIVATE' } });
      const stranger = await signUp(server.baseUrl, uniqueEmail('stranger'));
      expect((await anonymous().get(file.download)).status).toBe(404);
      expect((await stranger.get(file.download)).status).toBe(404);
      expect((await anonymous().get('/api/files/nosuchfileid/download')).status).toBe(404);
      const own = await owner.get(file.download);
      expect(own.status).toBe(200);
      expect(own.text).toBe('owner only');
      expect(own.headers.get('cache-control')).toBe('private, no-store');
      expect(await countsOf(file.id)).toEqual({ views: 0, downloads: 1 });
    });
  });

  describe('a file whose bytes are missing from storage', () => {
    it('is a 404 on the share page, the raw route, the download and the preview, never a 500', async () => {
      const text = await upload('vanished.txt', 'gone from storage');
      const image = await upload('vanished.png', PNG_1X1, { type: 'image/png' });
      const locked = await upload('vanished-locked.txt', 'locked', { fields: { password: 'open sesame' } });
      for (const { id } of [text, image, locked]) {
        const { storageKey } = await server.ctx.db.selectFrom('files').select('storageKey').where('id', '=', id).executeTakeFirstOrThrow();
        // Behind the server's back: the object goes, the record stays.
        await server.ctx.storage.delete(storageKey);
        expect(await server.ctx.storage.stat(storageKey)).toBeNull();
      }
      for (const file of [text, image, locked]) {
        for (const visitor of [anonymous(), owner]) {
          const page = await visitor.get(file.page);
          expect(page.status, file.page).toBe(404);
          expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
          expect(page.text).toContain('Not found');
        }
      }
      for (const file of [text, image]) {
        for (const [path, options] of [
          [file.raw, {}],
          [file.raw, { headers: { range: 'bytes=0-3' } }],
          [file.download, {}],
          [`/api/files/${file.id}/preview`, {}],
        ] as const) {
          const response = await owner.get(path, options);
          expect(response.status, path).toBe(404);
          // The raw route's errors are `Error`; the file-ID routes' are contract §3's `ApiError`.
          expect(response.body).toEqual(path === file.raw ? { error: 'File not found' } : { success: false, error: 'File not found' });
        }
      }
      expect((await fetch(server.baseUrl + text.raw, { method: 'HEAD' })).status).toBe(404);
    });
  });

  describe('bearer credentials on the file-ID routes (contract §10, "Private file bytes and named tokens")', () => {
    it('answers the generic 401 to a named token or the legacy credential for a file that is not public', async () => {
      const token = await createToken(owner, ['files:read', 'files:upload']);
      const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
      const privateFile = await upload('bearer-private.txt', 'private', { fields: { visibility: 'PRIVATE' } });
      const protectedFile = await upload('bearer-protected.txt', 'protected', { fields: { password: 'open sesame' } });
      const expired = await upload('bearer-expired.txt', 'expired', { fields: { expiresAt: new Date(Date.now() + 3_600_000).toISOString() } });
      await server.ctx.db.updateTable('files').set({ expiresAt: Date.now() - 1000 }).where('id', '=', expired.id).execute();
      for (const credential of [token, legacy, 'not-a-credential']) {
        for (const file of [privateFile, protectedFile, expired]) {
          for (const path of [file.download, `/api/files/${file.id}/preview`]) {
            const response = await anonymous().get(path, { token: credential });
            expect(response.status, path).toBe(401);
            expect(response.body).toEqual({ success: false, error: 'Unauthorized' });
          }
        }
      }
      expect(await countsOf(privateFile.id)).toEqual({ views: 0, downloads: 0 });
      // A file ID that does not exist, or another account's private file, reads the same: the answer
      // must not tell a token which IDs exist.
      const other = await signUp(server.baseUrl, uniqueEmail('bearer-other'));
      const othersFile = await uploadFile(other, 'bearer-others.txt', 'theirs', { fields: { visibility: 'PRIVATE' } });
      const othersId = othersFile.body.data.downloadUrl.split('/').at(-2);
      for (const id of [othersId, privateFile.id.replace(/.$/, (c: string) => (c === 'a' ? 'b' : 'a')), 'nosuchfileidatall']) {
        for (const word of ['download', 'preview', 'thumbnail', 'ocr']) {
          const response = await anonymous().get(`/api/files/${id}/${word}`, { token });
          expect([response.status, response.body.error], `${id} ${word}`).toEqual([401, 'Unauthorized']);
        }
      }
    });

    it("serves a public file's download to a bearer request as to anyone; its owner preview stays the owner's session's", async () => {
      const token = await createToken(owner, ['files:read']);
      const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
      const file = await upload('bearer-public.txt', 'for everyone');
      for (const credential of [token, legacy]) {
        const response = await anonymous().get(file.download, { token: credential });
        expect(response.status).toBe(200);
        expect(response.text).toBe('for everyone');
        // The preview is the owner's browser session's alone; a bearer credential is never that.
        const preview = await anonymous().get(`/api/files/${file.id}/preview`, { token: credential });
        expect(preview.status).toBe(401);
        expect(preview.body).toEqual({ success: false, error: 'Unauthorized' });
      }
      expect(await countsOf(file.id)).toEqual({ views: 0, downloads: 2 });
      // Without a credential nothing changed: anyone downloads, the preview is the owner's.
      expect((await anonymous().get(file.download)).status).toBe(200);
      expect((await anonymous().get(`/api/files/${file.id}/preview`)).status).toBe(404);
      expect((await owner.get(`/api/files/${file.id}/preview`)).text).toBe('for everyone');
    });
  });

  describe('unlocking a password-protected file', () => {
    it('takes the password however its accents were typed (composed or decomposed)', async () => {
      const file = await upload('accented.txt', 'behind an accented password', { fields: { password: 'caf\u00e9 cr\u00e8me' } });
      const visitor = anonymous();
      expect((await visitor.post(`/api/files/${file.id}/unlock`, { password: 'cafe\u0301 cre\u0300me' })).status).toBe(204);
      expect((await visitor.get(file.raw)).status).toBe(200);
      expect((await anonymous().post(`/api/files/${file.id}/unlock`, { password: 'cafe creme' })).status).toBe(403);
    });

    it('names both of the body types it takes when sent another (it reads the share page form too)', async () => {
      const file = await upload('typed.txt', 'behind a password', { fields: { password: 'open sesame' } });
      const asText = await anonymous().request('POST', `/api/files/${file.id}/unlock`, { body: 'password=open sesame', headers: { 'content-type': 'text/plain' } });
      expect([asText.status, asText.body]).toEqual([400, { success: false, error: 'body: must be a JSON object or a form, sent with Content-Type: application/json or application/x-www-form-urlencoded' }]);
      const asForm = await anonymous().request('POST', `/api/files/${file.id}/unlock`, { body: 'password=open%20sesame', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(asForm.status).toBe(303);
    });

    it('opens raw, download and share page for that file only, and only in that browser', async () => {
      const file = await upload('locked.txt', 'behind a password', { fields: { password: 'open sesame' } });
      const sibling = await upload('locked-too.txt', 'also locked', { fields: { password: 'open sesame' } });
      const visitor = anonymous();

      const locked = await visitor.get(file.raw);
      expect(locked.status).toBe(403);
      expect(locked.body.error).toMatch(/password/);
      expect((await visitor.get(file.download)).status).toBe(403);

      const wrong = await visitor.post(`/api/files/${file.id}/unlock`, { password: 'wrong guess' });
      expect(wrong.status).toBe(403);
      // Contract §3: `{"success":false,"error":…}`.
      expect(wrong.body).toEqual({ success: false, error: 'Wrong password' });
      // Nor does it take API credentials (contract §3: the generic 401).
      const token = await createToken(owner, ['files:read']);
      const bearer = await anonymous().post(`/api/files/${file.id}/unlock`, { password: 'open sesame' }, { token });
      expect([bearer.status, bearer.body]).toEqual([401, { success: false, error: 'Unauthorized' }]);
      expect(visitor.cookies.size).toBe(0);

      const right = await visitor.post(`/api/files/${file.id}/unlock`, { password: 'open sesame' });
      expect(right.status).toBe(204);
      const setCookie = right.headers.getSetCookie()[0]!;
      expect(setCookie).toMatch(new RegExp(`^hoard_unlock_${file.id}=`));
      expect(setCookie).toMatch(/HttpOnly/i);
      expect(setCookie).toMatch(/SameSite=Lax/i);
      expect(setCookie).toMatch(/Path=\//);

      const raw = await visitor.get(file.raw);
      expect(raw.status).toBe(200);
      expect(raw.text).toBe('behind a password');
      expect(raw.headers.get('cache-control')).toBe('private, no-store');
      expect((await visitor.get(file.download)).text).toBe('behind a password');
      const page = await visitor.get(file.page);
      expect(page.status).toBe(200);
      expect(page.text).toMatch(/<pre tabindex="0" role="region" aria-label="Text of [^"]+">behind a password<\/pre>/);
      expect(page.text).not.toContain('<form id="unlock"');

      // The cookie opens that one file: not its sibling with the same password, and not for others.
      expect((await visitor.get(sibling.raw)).status).toBe(403);
      expect((await visitor.get(sibling.page)).text).toContain('<form id="unlock"');
      expect((await anonymous().get(file.raw)).status).toBe(403);
      // A cookie copied onto the sibling's name does not open it either.
      const forger = anonymous();
      forger.cookies.set(`hoard_unlock_${sibling.id}`, visitor.cookies.get(`hoard_unlock_${file.id}`)!);
      expect((await forger.get(sibling.raw)).status).toBe(403);

      // A new password closes the file again.
      expect((await owner.patch(`/api/files/${file.id}`, { password: 'new password' })).status).toBe(200);
      expect((await visitor.get(file.raw)).status).toBe(403);
      expect(await countsOf(file.id)).toEqual({ views: 1, downloads: 1 });
    });

    it("takes the share page's form without its script: back to the page, saying why it stays locked, or opened", async () => {
      const file = await upload('formed.txt', 'opened by a form', { fields: { password: 'open sesame' } });
      const visitor = anonymous();
      const sendForm = (client: Client, body: string) =>
        client.request('POST', `/api/files/${file.id}/unlock`, { body, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.baseUrl } });
      const page = server.baseUrl + file.page;
      // Post, then redirect: the address bar shows the page, Back and reload post nothing again.
      const wrong = await sendForm(visitor, new URLSearchParams({ password: 'wrong guess' }).toString());
      expect([wrong.status, wrong.headers.get('location')]).toEqual([303, `${page}?unlock=wrong`]);
      expect(visitor.cookies.size).toBe(0);
      const told = await visitor.get(`${file.page}?unlock=wrong`);
      expect(told.status).toBe(200);
      expect(told.text).toContain('<p class="error" id="error" role="alert">Wrong password.</p>');
      expect(told.text).not.toContain('opened by a form');
      // An empty password (text browsers send the form whatever `required` says).
      const empty = await sendForm(visitor, 'password=');
      expect([empty.status, empty.headers.get('location')]).toEqual([303, `${page}?unlock=empty`]);
      expect((await visitor.get(`${file.page}?unlock=empty`)).text).toContain('>Enter the password.</p>');
      // A word the page does not know says nothing.
      expect((await visitor.get(`${file.page}?unlock=<b>`)).text).toContain('<p class="error" id="error" role="alert"></p>');

      const right = await sendForm(visitor, new URLSearchParams({ password: 'open sesame' }).toString());
      expect([right.status, right.headers.get('location')]).toEqual([303, page]);
      expect(right.headers.getSetCookie()[0]).toMatch(new RegExp(`^hoard_unlock_${file.id}=`));
      expect((await visitor.get(file.page)).text).toContain('opened by a form');

      // Throttled as the script's requests are.
      const other = anonymous();
      for (let i = 0; i < 10; i++) expect((await sendForm(other, `password=guess+${i}`)).headers.get('location')).toBe(`${page}?unlock=wrong`);
      expect((await sendForm(other, 'password=open+sesame')).headers.get('location')).toBe(`${page}?unlock=throttled`);
      expect((await other.get(`${file.page}?unlock=throttled`)).text).toContain('Too many attempts; wait up to 15 minutes and try again.');
      // A field given twice is refused rather than guessed at; the script's empty password is a 400.
      expect((await sendForm(anonymous(), 'password=a&password=b')).status).toBe(400);
      const script = await anonymous().post(`/api/files/${file.id}/unlock`, { password: '' });
      expect([script.status, script.body.error]).toEqual([400, 'body.password: is required']);
      // A file gone since the page was loaded: the page a browser would now see.
      expect((await owner.delete(`/api/files/${file.id}`)).status).toBe(204);
      const gone = await sendForm(anonymous(), 'password=open+sesame');
      expect([gone.status, gone.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    });

    it('is a 404 for files that are private or have no password', async () => {
      const open = await upload('open.txt', 'open');
      const hidden = await upload('hidden.txt', 'hidden', { fields: { visibility: 'PRIVATE', password: 'open sesame' } });
      // The route's errors are all of one shape (contract §3), its 404 too.
      for (const [id, password] of [[open.id, 'anything'], [hidden.id, 'open sesame'], ['nosuchfileid', 'x']]) {
        const refused = await anonymous().post(`/api/files/${id}/unlock`, { password });
        expect([refused.status, refused.body]).toEqual([404, { success: false, error: 'File not found' }]);
      }
      expect((await anonymous().post(`/api/files/${open.id}/unlock`, {})).status).toBe(400);
    });

    it('answers 429 after too many wrong passwords, even to the right one', async () => {
      const file = await upload('guarded.txt', 'guarded', { fields: { password: 'open sesame' } });
      const attacker = anonymous();
      for (let i = 0; i < 10; i++) expect((await attacker.post(`/api/files/${file.id}/unlock`, { password: `guess ${i}` })).status).toBe(403);
      const blocked = await attacker.post(`/api/files/${file.id}/unlock`, { password: 'guess 10' });
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      const right = await attacker.post(`/api/files/${file.id}/unlock`, { password: 'open sesame' });
      expect(right.status).toBe(429);
      expect(attacker.cookies.size).toBe(0);
    });
  });
});
