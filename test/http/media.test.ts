/**
 * Thumbnails and text recognition (contract §10), through HTTP on both databases and both storage
 * providers: what the thumbnail is (WebP, ≤ 512 px, upright, no metadata), who may fetch it and the
 * text, search over the text, the share page's embed tags, deletion, the settings and their
 * backfill, and a decompression bomb refused without harm.
 */
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { expectStoredAsRecorded, providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';
import { serverProcess } from '../support/server-process.ts';
import { jpegWithGps, mediaSettled, mp4, onePagePdf, pngBomb, pngWithWords, redThenBlueMp4, solidPng } from '../support/media.ts';

const idOf = (links: { downloadUrl: string }) => links.downloadUrl.split('/').at(-2)!;
const metaTag = (html: string, attribute: 'property' | 'name', key: string) => new RegExp(`<meta ${attribute}="${key.replace(/[:.]/g, '\\$&')}" content="([^"]*)">`).exec(html)?.[1] ?? null;

describe.each(providers)('thumbnails and text recognition on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let admin: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', THUMBNAIL_CONCURRENCY: '1', OCR_CONCURRENCY: '1' });
    admin = await signUp(server.baseUrl);
    await admin.patch('/api/settings', { registration: 'open' });
    // The records are read with an `ids` filter, which SQLite reads through a reader thread; the
    // first such read starts one (40–80 ms), long enough for a small thumbnail to be finished before
    // a test reads the record its upload left "pending" (docs/decisions.md, "Reads that may scan").
    expect((await admin.get('/api/files?ids=none')).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  async function upload(client: Client, name: string, bytes: Uint8Array, type: string, fields: Record<string, string> = {}) {
    const answer = await uploadFile(client, name, bytes, { type, fields });
    expect(answer.status, answer.text).toBe(200);
    return { id: idOf(answer.body.data), links: answer.body.data as { url: string; rawUrl: string; downloadUrl: string; name: string } };
  }

  async function recordOf(client: Client, id: string) {
    const listed = await client.get(`/api/files?ids=${id}`);
    expect(listed.status, listed.text).toBe(200);
    return (listed.body.data as Array<Record<string, unknown>>).find((f) => f.id === id)!;
  }

  it('makes an upright WebP thumbnail of at most 512 px without the EXIF and GPS data of the photo', async () => {
    const user = await signUp(server.baseUrl);
    const photo = await jpegWithGps(1600, 1200);
    const { id } = await upload(user, 'holiday.jpg', photo, 'image/jpeg', { visibility: 'PRIVATE' });
    // The upload answers before the work is done: the record says so.
    expect(await recordOf(user, id)).toMatchObject({ thumbnailUrl: null, thumbnailStatus: 'pending', ocrStatus: 'pending' });

    const row = await mediaSettled(server, id);
    expect(row).toMatchObject({ thumbnailStatus: 'done', mediaWidth: 1200, mediaHeight: 1600, thumbnailWidth: 384, thumbnailHeight: 512 });
    const record = await recordOf(user, id);
    expect(record.thumbnailStatus).toBe('done');
    expect(record.thumbnailUrl).toMatch(new RegExp(`^${server.baseUrl}/api/files/${id}/thumbnail\\?v=[a-z0-9]+$`));

    const answer = await user.get(String(record.thumbnailUrl).slice(server.baseUrl.length));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('image/webp');
    expect(answer.headers.get('cache-control')).toMatch(/^private, max-age=\d{6,}/);
    const bytes = Buffer.from(await (await fetch(`${server.baseUrl}/api/files/${id}/thumbnail`, { headers: { cookie: user.cookieHeader() } })).arrayBuffer());
    const meta = await sharp(bytes).metadata();
    // The photo's orientation is applied (1600×1200 on its side is 1200×1600 upright), then scaled.
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 384, 512]);
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect(bytes.includes('HoardCam')).toBe(false);
    expect(bytes.includes('Exif')).toBe(false);

    // Revalidation: the ETag answers 304.
    const etag = answer.headers.get('etag')!;
    expect(etag).toMatch(/^"[a-z0-9]+"$/);
    expect((await user.get(`/api/files/${id}/thumbnail`, { headers: { 'if-none-match': etag } })).status).toBe(304);

    // Stored beside the bytes, through the storage provider.
    await expectStoredAsRecorded(server, storage, user.userId);
    expect(row.thumbnailKey).toMatch(/\.thumb-[a-z0-9]+\.webp$/);
  });

  it('never enlarges a small image, takes the first frame of a GIF, and reads WebP, AVIF and TIFF', async () => {
    const user = await signUp(server.baseUrl);
    const small = await upload(user, 'small.png', await solidPng(100, 80), 'image/png');
    const gif = await upload(
      user,
      'anim.gif',
      await sharp(Buffer.concat([await sharp({ create: { width: 64, height: 64, channels: 3, background: '#ff0000' } }).raw().toBuffer(), await sharp({ create: { width: 64, height: 64, channels: 3, background: '#0000ff' } }).raw().toBuffer()]), { raw: { width: 64, height: 128, channels: 3, pageHeight: 64 } })
        .gif()
        .toBuffer(),
      'image/gif',
    );
    const others = [
      await upload(user, 'a.webp', await sharp({ create: { width: 1000, height: 500, channels: 3, background: '#0a0' } }).webp().toBuffer(), 'image/webp'),
      await upload(user, 'a.avif', await sharp({ create: { width: 1000, height: 500, channels: 3, background: '#0a0' } }).avif().toBuffer(), 'image/avif'),
      await upload(user, 'a.tiff', await sharp({ create: { width: 1000, height: 500, channels: 3, background: '#0a0' } }).tiff().toBuffer(), 'image/tiff'),
    ];
    expect(await mediaSettled(server, small.id)).toMatchObject({ thumbnailStatus: 'done', thumbnailWidth: 100, thumbnailHeight: 80 });
    expect(await mediaSettled(server, gif.id)).toMatchObject({ thumbnailStatus: 'done', thumbnailWidth: 64, thumbnailHeight: 64 });
    const frame = await fetch(`${server.baseUrl}/api/files/${gif.id}/thumbnail`, { headers: { cookie: user.cookieHeader() } });
    expect(frame.status).toBe(200);
    const gifThumb = Buffer.from(await frame.arrayBuffer());
    const { pages } = await sharp(gifThumb).metadata();
    expect(pages ?? 1).toBe(1);
    const { dominant } = await sharp(gifThumb).stats();
    expect(dominant.r).toBeGreaterThan(200);
    expect(dominant.b).toBeLessThan(50);
    for (const other of others) expect(await mediaSettled(server, other.id)).toMatchObject({ thumbnailStatus: 'done', thumbnailWidth: 512, thumbnailHeight: 256 });
  });

  it('takes the first frame of a video (contract §10)', async () => {
    const user = await signUp(server.baseUrl);
    const video = await upload(user, 'red-then-blue.mp4', redThenBlueMp4(), 'video/mp4');
    expect(await mediaSettled(server, video.id)).toMatchObject({ thumbnailStatus: 'done', thumbnailWidth: 320, thumbnailHeight: 240 });
    const thumbnail = await fetch(`${server.baseUrl}/api/files/${video.id}/thumbnail`, { headers: { cookie: user.cookieHeader() } });
    expect(thumbnail.status).toBe(200);
    const { dominant } = await sharp(Buffer.from(await thumbnail.arrayBuffer())).stats();
    expect(dominant.r).toBeGreaterThan(200);
    expect(dominant.b).toBeLessThan(50);
  });

  it('gives thumbnails of public files to anyone, of others only to the owner, and 401 to tokens on files that are not public', async () => {
    const owner = await signUp(server.baseUrl);
    const other = await signUp(server.baseUrl);
    const token = await createToken(owner, ['files:read', 'files:upload']);
    const image = await solidPng(600, 300);
    const privateFile = await upload(owner, 'private.png', image, 'image/png', { visibility: 'PRIVATE' });
    const publicFile = await upload(owner, 'public.png', image, 'image/png', { visibility: 'PUBLIC' });
    const lockedFile = await upload(owner, 'locked.png', image, 'image/png', { visibility: 'PUBLIC', password: 'open sesame' });
    for (const file of [privateFile, publicFile, lockedFile]) expect((await mediaSettled(server, file.id)).thumbnailStatus).toBe('done');
    const anonymous = new Client(server.baseUrl);
    const thumb = (id: string) => `/api/files/${id}/thumbnail`;

    // Public (no password): anyone, a token too, cacheable by anyone.
    const open = await anonymous.get(thumb(publicFile.id));
    expect(open.status).toBe(200);
    expect(open.headers.get('cache-control')).toMatch(/^public, max-age=\d+/);
    expect((await anonymous.get(thumb(publicFile.id), { token })).status).toBe(200);

    // Private and password-protected: the owner's session; 404 to others; the generic 401 to bearer credentials.
    const legacy = (await owner.post('/api/profile/upload-token')).body.data.uploadToken as string;
    expect(legacy).toBeTruthy();
    for (const file of [privateFile, lockedFile]) {
      expect((await owner.get(thumb(file.id))).status).toBe(200);
      expect((await other.get(thumb(file.id))).status).toBe(404);
      expect((await anonymous.get(thumb(file.id))).status).toBe(404);
      const withToken = await anonymous.get(thumb(file.id), { token });
      expect(withToken.status).toBe(401);
      expect(withToken.body).toEqual({ error: 'Unauthorized' });
      // Even the owner's own session does not lift a bearer credential's refusal.
      expect((await owner.get(thumb(file.id), { token })).status).toBe(401);
      expect((await anonymous.get(`/api/files/${file.id}/download`, { token })).status).toBe(401);
      expect((await anonymous.get(`/api/files/${file.id}/ocr`, { token })).status).toBe(401);
      expect((await anonymous.get(thumb(file.id), { headers: { authorization: legacy } })).status).toBe(401);
      expect((await anonymous.get(`/api/files/${file.id}/ocr`, { headers: { authorization: legacy } })).status).toBe(401);
    }
    // The text: the owner's session only.
    expect((await owner.get(`/api/files/${publicFile.id}/ocr`)).status).toBe(200);
    expect((await other.get(`/api/files/${publicFile.id}/ocr`)).status).toBe(404);
    expect((await anonymous.get(`/api/files/${publicFile.id}/ocr`)).status).toBe(404);
    expect((await anonymous.get(`/api/files/${publicFile.id}/ocr`, { token })).status).toBe(401);

    // No thumbnail for a type without one, and for an unknown ID.
    const text = await uploadFile(owner, 'notes.txt', 'hello');
    const textId = idOf(text.body.data);
    expect((await mediaSettled(server, textId)).thumbnailStatus).toBe('unsupported');
    expect((await owner.get(thumb(textId))).status).toBe(404);
    expect(await recordOf(owner, textId)).toMatchObject({ thumbnailUrl: null, thumbnailStatus: 'unsupported', ocrStatus: 'unsupported' });
    expect((await owner.get(thumb('0000000000000000000000000'))).status).toBe(404);
  });

  it('recognises the words in an image, and search on the list and the timeline finds them in any case', async () => {
    const user = await signUp(server.baseUrl);
    const light = await upload(user, 'screenshot-1.png', await pngWithWords('Invoice lighthouse QUARTZ 4217'), 'image/png');
    const dark = await upload(user, 'screenshot-2.png', await pngWithWords('Meeting harbour zebra', { dark: true }), 'image/png');
    await upload(user, 'unrelated.txt', new TextEncoder().encode('nothing to see'), 'text/plain');
    expect(await mediaSettled(server, light.id)).toMatchObject({ ocrStatus: 'done' });
    expect(await mediaSettled(server, dark.id)).toMatchObject({ ocrStatus: 'done' });

    const ocr = await user.get(`/api/files/${light.id}/ocr`);
    expect(ocr.status).toBe(200);
    expect(ocr.body.data.status).toBe('done');
    expect(ocr.body.data.text.toLowerCase()).toContain('lighthouse');
    expect(ocr.body.data.text).toContain('4217');

    const search = async (term: string) => ((await user.get(`/api/files?search=${encodeURIComponent(term)}`)).body.data as Array<{ id: string }>).map((f) => f.id);
    expect(await search('LIGHTHOUSE')).toEqual([light.id]);
    expect(await search('quartz')).toEqual([light.id]);
    expect(await search('harbour')).toEqual([dark.id]);
    expect(await search('screenshot')).toHaveLength(2);
    const timeline = await user.get('/api/files/timeline?search=Lighthouse');
    expect(timeline.status, timeline.text).toBe(200);
    expect(timeline.body.data.total).toBe(1);
    expect((await user.get(`/api/files/${light.id}/ocr`)).body.data.text).not.toBeNull();
  });

  it('embeds images, videos and PDFs in chat apps with their type, size and thumbnail', async () => {
    const user = await signUp(server.baseUrl);
    const image = await upload(user, 'wide.png', await solidPng(1280, 720), 'image/png', { visibility: 'PUBLIC' });
    const video = await upload(user, 'clip.mp4', mp4(320, 240), 'video/mp4', { visibility: 'PUBLIC' });
    const pdf = await upload(user, 'paper.pdf', onePagePdf(), 'application/pdf', { visibility: 'PUBLIC' });
    for (const file of [image, video, pdf]) expect((await mediaSettled(server, file.id)).thumbnailStatus).toBe('done');
    const page = async (url: string) => (await fetch(url)).text();

    const imagePage = await page(image.links.url);
    expect(metaTag(imagePage, 'property', 'og:image')).toBe(image.links.rawUrl);
    expect(metaTag(imagePage, 'property', 'og:image:type')).toBe('image/png');
    expect([metaTag(imagePage, 'property', 'og:image:width'), metaTag(imagePage, 'property', 'og:image:height')]).toEqual(['1280', '720']);
    expect(metaTag(imagePage, 'name', 'twitter:card')).toBe('summary_large_image');

    const videoPage = await page(video.links.url);
    expect(metaTag(videoPage, 'property', 'og:type')).toBe('video.other');
    expect(metaTag(videoPage, 'property', 'og:video')).toBe(video.links.rawUrl);
    expect(metaTag(videoPage, 'property', 'og:video:type')).toBe('video/mp4');
    expect([metaTag(videoPage, 'property', 'og:video:width'), metaTag(videoPage, 'property', 'og:video:height')]).toEqual(['320', '240']);
    expect(metaTag(videoPage, 'name', 'twitter:card')).toBe('player');
    expect(metaTag(videoPage, 'name', 'twitter:player')).toBe(video.links.rawUrl);
    expect([metaTag(videoPage, 'name', 'twitter:player:width'), metaTag(videoPage, 'name', 'twitter:player:height')]).toEqual(['320', '240']);
    const poster = metaTag(videoPage, 'property', 'og:image')!;
    expect(poster).toMatch(new RegExp(`/api/files/${video.id}/thumbnail\\?v=`));
    const frame = await fetch(poster);
    expect(frame.status).toBe(200);
    const frameMeta = await sharp(Buffer.from(await frame.arrayBuffer())).metadata();
    expect([frameMeta.format, frameMeta.width, frameMeta.height]).toEqual(['webp', 320, 240]);

    const pdfPage = await page(pdf.links.url);
    const first = metaTag(pdfPage, 'property', 'og:image')!;
    expect(first).toMatch(new RegExp(`/api/files/${pdf.id}/thumbnail\\?v=`));
    const pdfThumb = await sharp(Buffer.from(await (await fetch(first)).arrayBuffer())).metadata();
    expect(pdfThumb.format).toBe('webp');
    expect(Math.max(pdfThumb.width!, pdfThumb.height!)).toBeLessThanOrEqual(512);
    expect(metaTag(pdfPage, 'property', 'og:image:width')).toBe(String(pdfThumb.width));
  });

  it('embeds an image of more than 5 MiB by its thumbnail, which X and WhatsApp show where they refuse the file', async () => {
    const user = await signUp(server.baseUrl);
    // Noise does not compress: 1,400 × 1,400 pixels are 5.9 MB as a PNG.
    const noise = await sharp(randomBytes(1400 * 1400 * 3), { raw: { width: 1400, height: 1400, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
    expect(noise.length).toBeGreaterThan(5 * 1024 * 1024);
    const big = await upload(user, 'big.png', noise, 'image/png', { visibility: 'PUBLIC' });
    expect((await mediaSettled(server, big.id)).thumbnailStatus).toBe('done');
    const page = await (await fetch(big.links.url)).text();
    const image = metaTag(page, 'property', 'og:image')!;
    expect(image).toMatch(new RegExp(`/api/files/${big.id}/thumbnail\\?v=`));
    expect(metaTag(page, 'name', 'twitter:image')).toBe(image);
    expect(metaTag(page, 'property', 'og:image:type')).toBe('image/webp');
    expect([metaTag(page, 'property', 'og:image:width'), metaTag(page, 'property', 'og:image:height')]).toEqual(['512', '512']);
    expect(metaTag(page, 'name', 'twitter:card')).toBe('summary_large_image');
    const thumbnail = await fetch(image);
    expect(thumbnail.status).toBe(200);
    expect((await thumbnail.arrayBuffer()).byteLength).toBeLessThan(5 * 1024 * 1024);
  });

  it('removes the thumbnail and the text with the file, when it is deleted or its expiry deletes it', async () => {
    const user = await signUp(server.baseUrl);
    const deleted = await upload(user, 'gone.png', await pngWithWords('Ephemeral words'), 'image/png');
    const expiring = await upload(user, 'expiring.png', await solidPng(700, 700), 'image/png');
    for (const file of [deleted, expiring]) expect((await mediaSettled(server, file.id)).thumbnailStatus).toBe('done');
    const keysBefore = await storage.keys(server.dataDir, `files/${user.userId}/`);
    expect(keysBefore.filter((k) => k.includes('.thumb-'))).toHaveLength(2);

    expect((await user.delete(`/api/files/${deleted.id}`)).status).toBe(204);
    expect((await user.get(`/api/files/${deleted.id}/thumbnail`)).status).toBe(404);
    expect((await user.get(`/api/files/${deleted.id}/ocr`)).status).toBe(404);
    expect((await user.get('/api/files?search=ephemeral')).body.data).toEqual([]);

    const expiresAt = new Date(Date.now() + 1500).toISOString();
    expect((await user.patch(`/api/files/${expiring.id}`, { expiresAt, expiryAction: 'DELETE' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await server.jobs.runDueJobs();
    expect((await user.get(`/api/files/${expiring.id}/thumbnail`)).status).toBe(404);
    expect(await storage.keys(server.dataDir, `files/${user.userId}/`)).toEqual([]);
    await expectStoredAsRecorded(server, storage, user.userId);
  });

  it('turning the settings off marks new files disabled; turning them on backfills them, with progress', async () => {
    expect((await admin.get('/api/settings')).body.data).toMatchObject({ thumbnailsEnabled: true, ocrEnabled: true });
    const off = await admin.patch('/api/settings', { thumbnailsEnabled: false, ocrEnabled: false });
    expect(off.status, off.text).toBe(200);
    expect(off.body.data).toMatchObject({ thumbnailsEnabled: false, ocrEnabled: false });
    const user = await signUp(server.baseUrl);
    try {
      const files = [
        await upload(user, 'later-1.png', await pngWithWords('Backfilled marigold'), 'image/png'),
        await upload(user, 'later-2.jpg', await jpegWithGps(800, 600), 'image/jpeg'),
      ];
      for (const file of files) expect(await mediaSettled(server, file.id)).toMatchObject({ thumbnailStatus: 'disabled', ocrStatus: 'disabled' });
      expect((await user.get(`/api/files/${files[0]!.id}/ocr`)).body.data).toEqual({ status: 'disabled', text: null });
      expect((await user.get('/api/files?search=marigold')).body.data).toEqual([]);
      const progress = await admin.get('/api/settings/media');
      expect(progress.status, progress.text).toBe(200);
      expect(progress.body.data.thumbnails.disabled).toBeGreaterThanOrEqual(2);
      expect(progress.body.data.backfilling).toBe(false);
      // Members cannot read it.
      expect((await user.get('/api/settings/media')).status).toBe(403);

      const on = await admin.patch('/api/settings', { thumbnailsEnabled: true, ocrEnabled: true });
      expect(on.body.data).toMatchObject({ thumbnailsEnabled: true, ocrEnabled: true });
      // The backfill turns them pending, then their jobs run.
      const deadline = Date.now() + 60_000;
      for (;;) {
        await server.jobs.runDueJobs();
        const rows = await server.ctx.db.selectFrom('files').select(['thumbnailStatus', 'ocrStatus']).where('userId', '=', user.userId).execute();
        if (rows.every((r) => r.thumbnailStatus === 'done' && r.ocrStatus === 'done')) break;
        if (Date.now() > deadline) throw new Error(`backfill did not finish: ${JSON.stringify(rows)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(((await user.get('/api/files?search=marigold')).body.data as unknown[]).length).toBe(1);
      const after = (await admin.get('/api/settings/media')).body.data;
      expect(after.thumbnails.disabled).toBe(0);
      expect(after.ocr.disabled).toBe(0);
    } finally {
      await admin.patch('/api/settings', { thumbnailsEnabled: true, ocrEnabled: true });
    }
  });

  /**
   * A process that does no media work runs `before` (what it commits stays in the queue); once it
   * is closed, one that does runs `after`, on the same database and files.
   */
  async function uploadsThenMedia<T>(before: (uploads: TestServer) => Promise<T>, after: (media: TestServer, uploads: TestServer, state: T) => Promise<void>): Promise<void> {
    const uploads = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', THUMBNAIL_CONCURRENCY: '0', OCR_CONCURRENCY: '0' });
    let state: T;
    try {
      state = await before(uploads);
    } finally {
      await uploads.close();
    }
    const media = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', THUMBNAIL_CONCURRENCY: '1', OCR_CONCURRENCY: '1' }, { databaseUrl: uploads.databaseUrl, dataDir: uploads.dataDir });
    try {
      await after(media, uploads, state);
    } finally {
      await media.close();
    }
  }

  it('commits one media job with the file; the text job is added when the thumbnail job starts', async () => {
    const jobsOf = async (db: TestServer['ctx']['db'], id: string) =>
      (await db.selectFrom('jobs').select('type').where('payload', '=', JSON.stringify({ fileId: id })).execute()).map((j) => j.type).sort();
    await uploadsThenMedia(
      async (uploads) => {
        const user = await signUp(uploads.baseUrl);
        const image = await upload(user, 'chained.png', await pngWithWords('Chained lychee'), 'image/png');
        const text = await upload(user, 'notes.txt', new TextEncoder().encode('no thumbnail, no text'), 'text/plain');
        expect(await jobsOf(uploads.ctx.db, image.id)).toEqual(['media.thumbnail']);
        expect(await jobsOf(uploads.ctx.db, text.id)).toEqual([]);
        return { image, text };
      },
      async (media, _uploads, { image, text }) => {
        expect(await mediaSettled(media, image.id)).toMatchObject({ thumbnailStatus: 'done', ocrStatus: 'done' });
        expect(await mediaSettled(media, text.id)).toMatchObject({ thumbnailStatus: 'unsupported', ocrStatus: 'unsupported' });
        expect(await jobsOf(media.ctx.db, image.id)).toEqual([]);
      },
    );
  });

  it('keeps a share page out of caches until its thumbnail and size are known, so the first unfurl is not kept', async () => {
    await uploadsThenMedia(
      async (uploads) => {
        // The thumbnail stays pending until the second process runs it.
        const user = await signUp(uploads.baseUrl);
        const video = await upload(user, 'fresh.mp4', mp4(320, 240), 'video/mp4', { visibility: 'PUBLIC' });
        const text = await upload(user, 'plain.txt', new TextEncoder().encode('nothing to wait for'), 'text/plain', { visibility: 'PUBLIC' });
        const early = await fetch(video.links.url);
        expect(early.status).toBe(200);
        const earlyPage = await early.text();
        expect(metaTag(earlyPage, 'property', 'og:image')).toBeNull();
        // X's player card needs the player's size: without it, a plain card (an invalid player card is dropped).
        expect([metaTag(earlyPage, 'name', 'twitter:card'), metaTag(earlyPage, 'name', 'twitter:player')]).toEqual(['summary', null]);
        expect(metaTag(earlyPage, 'property', 'og:video')).toBe(video.links.rawUrl);
        expect(early.headers.get('cache-control')).toBe('private, no-store');
        // A file without a thumbnail to come is cacheable at once.
        expect((await fetch(text.links.url)).headers.get('cache-control')).toBe('public, max-age=60');
        return video;
      },
      async (media, uploads, video) => {
        expect((await mediaSettled(media, video.id)).thumbnailStatus).toBe('done');
        const later = await fetch(video.links.url.replace(uploads.baseUrl, media.baseUrl));
        expect(metaTag(await later.text(), 'property', 'og:image')).toMatch(new RegExp(`/api/files/${video.id}/thumbnail\\?v=`));
        expect(later.headers.get('cache-control')).toBe('public, max-age=60');
      },
    );
  });

  it('makes the thumbnail and the text after a restart between the upload and the job', async () => {
    // A process that takes uploads but does no media work (THUMBNAIL_CONCURRENCY=0, as a machine
    // dedicated to uploads would run), killed right after the upload: the jobs are in the database.
    const dying = await serverProcess({ UPLOAD_RATE_LIMIT: '0', THUMBNAIL_CONCURRENCY: '0', OCR_CONCURRENCY: '0', ...storage.env }, 'hoard-media-restart-');
    let next: TestServer | null = null;
    try {
      await dying.start();
      const user = await signUp(dying.baseUrl);
      const { id } = await upload(user, 'before-restart.png', await pngWithWords('Restart survives kiwi'), 'image/png');
      await dying.kill();

      next = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', THUMBNAIL_CONCURRENCY: '1', OCR_CONCURRENCY: '1' }, { databaseUrl: dying.databaseUrl, dataDir: dying.dataDir });
      expect(await mediaSettled(next, id)).toMatchObject({ thumbnailStatus: 'done', ocrStatus: 'done' });
      const browser = new Client(next.baseUrl);
      browser.cookies = new Map(user.cookies);
      expect((await browser.get(`/api/files/${id}/thumbnail`)).status).toBe(200);
      expect(((await browser.get('/api/files?search=kiwi')).body.data as Array<{ id: string }>).map((f) => f.id)).toEqual([id]);
    } finally {
      dying.stop();
      await next?.close();
    }
  });

  it('counts an image by the memory its decoding holds, not by its pixels alone', async () => {
    // A limit of a million pixels is 4 MiB of 8-bit RGBA. 800×800 is within it in pixels; 16-bit
    // RGBA is 8 bytes a pixel (4.9 MiB), and an interlaced one twice that: refused. The same image
    // not interlaced, at 600×600 (2.7 MiB), is decoded.
    const small = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0', THUMBNAIL_CONCURRENCY: '1', OCR_CONCURRENCY: '1', MEDIA_MAX_PIXELS: '1000000' });
    try {
      const user = await signUp(small.baseUrl);
      const wide = (side: number, interlaced: boolean) =>
        sharp({ create: { width: side, height: side, channels: 4, background: { r: 10, g: 20, b: 30, alpha: 1 } } }).toColourspace('rgb16').png({ progressive: interlaced }).toBuffer();
      const upTo = async (name: string, bytes: Uint8Array) => {
        const answer = await uploadFile(user, name, bytes, { type: 'image/png' });
        expect(answer.status, answer.text).toBe(200);
        return answer.body.data.downloadUrl.split('/').at(-2) as string;
      };
      const refused = await upTo('deep-interlaced.png', await wide(800, true));
      expect(await mediaSettled(small, refused)).toMatchObject({ thumbnailStatus: 'failed', ocrStatus: 'failed', thumbnailKey: null });
      const decoded = await upTo('deep.png', await wide(600, false));
      expect((await mediaSettled(small, decoded)).thumbnailStatus).toBe('done');
    } finally {
      await small.close();
    }
  });

  it('refuses a decompression bomb without crashing, and goes on working', async () => {
    const user = await signUp(server.baseUrl);
    const bomb = await upload(user, 'bomb.png', pngBomb(), 'image/png', { visibility: 'PUBLIC' });
    const started = Date.now();
    expect(await mediaSettled(server, bomb.id)).toMatchObject({ thumbnailStatus: 'failed', ocrStatus: 'failed', thumbnailKey: null });
    expect(Date.now() - started).toBeLessThan(20_000);
    // Its share page neither shows it nor offers it to chat apps, whose browsers would decode it.
    const page = await (await fetch(bomb.links.url)).text();
    expect(metaTag(page, 'property', 'og:image')).toBeNull();
    expect(page).not.toContain(`<img src="${bomb.links.rawUrl}"`);
    expect(page).toContain('This image could not be read for a preview (too large, or damaged). Download it to open it.');
    expect((await user.get(`/api/files/${bomb.id}/thumbnail`)).status).toBe(404);
    expect((await user.get(`/api/files/${bomb.id}/ocr`)).body.data).toEqual({ status: 'failed', text: null });
    expect((await user.get('/api/health')).status).toBe(200);
    const fine = await upload(user, 'fine.png', await solidPng(300, 300), 'image/png');
    expect((await mediaSettled(server, fine.id)).thumbnailStatus).toBe('done');
  });
});
