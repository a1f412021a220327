import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { launchBrowser, screenshotDir, watchPage, type BrowserSession } from '../support/browser.ts';
import { uploadFile } from '../support/uploads.ts';

/**
 * Thumbnails and recognised text in the web app (contract §10), in a real Chromium against a real
 * server whose background media work is on: the grid loads the small thumbnails rather than the
 * originals, the gallery the original, the file editor shows the words read in an image with a Copy
 * button, and the instance settings offer both switches with their progress.
 */
const PASSWORD = 'correct horse battery';

/** Words drawn large on white, as a screenshot would show them. */
function pngWithWords(words: string): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="160"><rect width="100%" height="100%" fill="#ffffff"/><text x="30" y="100" font-family="DejaVu Sans, sans-serif" font-size="48" fill="#111111">${words}</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

interface Listed {
  id: string;
  name: string;
  thumbnailUrl: string | null;
  thumbnailStatus: string;
  ocrStatus: string;
}

describe('thumbnails and recognised text in the web app', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let page: Page;
  let owner: Awaited<ReturnType<typeof signUp>>;
  const problems: string[] = [];
  const requested: string[] = [];

  const shot = async (name: string) => {
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true, animations: 'disabled' });
  };

  /** Runs due jobs until no file of the owner waits for its thumbnail or text. */
  const mediaSettled = async (): Promise<Listed[]> => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      await server.jobs.runDueJobs();
      const files = (await owner.get('/api/files')).body.data as Listed[];
      if (files.every((file) => file.thumbnailStatus !== 'pending' && file.ocrStatus !== 'pending')) return files;
      if (Date.now() > deadline) throw new Error(`media work still pending: ${JSON.stringify(files)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  beforeAll(async () => {
    fs.mkdirSync(screenshotDir, { recursive: true });
    server = await startTestServer({ THUMBNAIL_CONCURRENCY: '1', OCR_CONCURRENCY: '1', UPLOAD_RATE_LIMIT: '0' });
    owner = await signUp(server.baseUrl, 'tove@example.test', PASSWORD);
    browser = await launchBrowser();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    watchPage(page, problems);
    page.on('request', (request) => requested.push(new URL(request.url()).pathname + new URL(request.url()).search));
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  test('the grid shows thumbnails, the gallery the original, the editor the words read in an image', async () => {
    const wide = await sharp({ create: { width: 1600, height: 900, channels: 3, background: '#2563eb' } }).png().toBuffer();
    for (const [name, bytes] of [
      ['wide-blue.png', wide],
      ['words.png', await pngWithWords('Invoice lighthouse QUARTZ 4217')],
    ] as const) {
      const answer = await uploadFile(owner, name, bytes, { type: 'image/png' });
      expect(answer.status, answer.text).toBe(200);
    }

    const files = await mediaSettled();
    expect(files.map((file) => [file.name, file.thumbnailStatus, file.ocrStatus]).sort()).toEqual([
      ['wide-blue.png', 'done', 'done'],
      ['words.png', 'done', 'done'],
    ]);

    // The first listing is answered as it was while the thumbnails were being made, so the grid shows
    // its placeholders and then asks again for those files alone.
    await page.route(
      (url) => url.pathname === '/api/files' && !url.searchParams.has('ids'),
      async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as { data: Listed[] };
        for (const file of body.data) Object.assign(file, { thumbnailUrl: null, thumbnailStatus: 'pending' });
        await route.fulfill({ response, json: body });
      },
      { times: 1 },
    );
    await page.goto(`${server.baseUrl}/app/signin`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    await expect.poll(() => page.getByTestId('file-card').count()).toBe(2);
    await expect.poll(() => page.getByTestId('thumbnail-pending').count()).toBe(2);
    const box = async () => (await page.locator('.file-card .thumb').first().boundingBox())!;
    const pendingBox = await box();
    await shot('thumbnails-00-pending');
    const images = () =>
      page.evaluate(
        "[...document.querySelectorAll('.file-card img')].map((img) => ({ src: img.getAttribute('src'), loaded: img.complete, width: img.naturalWidth, loading: img.loading, boxWidth: img.width, boxHeight: img.height }))",
      ) as Promise<Array<{ src: string; loaded: boolean; width: number; loading: string; boxWidth: number; boxHeight: number }>>;
    await expect.poll(async () => (await images()).filter((img) => img.loaded && img.width > 0).length, { timeout: 20_000 }).toBe(2);
    for (const img of await images()) {
      expect(img.src).toMatch(/^\/api\/files\/[^/]+\/thumbnail\?v=[a-z0-9]+$/);
      expect(img.width).toBeLessThanOrEqual(512);
      // The first row loads at once; every image has its box before it arrives.
      expect(img.loading).toBe('eager');
      expect(img.boxWidth).toBeGreaterThan(0);
      expect(img.boxHeight).toBeGreaterThan(0);
    }
    expect((await images()).map((img) => img.width).sort()).toEqual([512, 512]);
    await expect(page.getByTestId('thumbnail-pending').count()).resolves.toBe(0);
    // They came from one request for the pending files, and took the placeholder's place exactly.
    expect(requested.filter((url) => url.startsWith('/api/files?ids=')).length).toBeGreaterThan(0);
    expect(await box()).toEqual(pendingBox);
    // The grid never fetched an original.
    expect(requested.filter((url) => url.endsWith('/preview'))).toEqual([]);
    await shot('thumbnails-01-grid');

    // The gallery shows the original, at its own size.
    await page.getByRole('button', { name: 'View wide-blue.png' }).click();
    const gallery = page.getByTestId('gallery');
    const original = gallery.getByRole('img', { name: 'wide-blue.png' });
    await expect(original.getAttribute('src')).resolves.toMatch(/\/preview$/);
    await expect.poll(() => original.evaluate((img: any) => img.complete && img.naturalWidth)).toBe(1600);
    await page.keyboard.press('Escape');
    await gallery.waitFor({ state: 'detached' });

    // The editor of the image with words shows them, and copies them.
    await page.getByRole('button', { name: 'Edit words.png' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit words.png' });
    const text = editor.getByRole('region', { name: 'Recognised text' });
    await text.waitFor();
    await expect(text.textContent().then((t) => t!.toLowerCase())).resolves.toContain('lighthouse');
    await expect(text.getAttribute('tabindex')).resolves.toBe('0');
    await editor.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Copied to the clipboard').waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toContain('4217');
    await shot('thumbnails-02-recognised-text');
    await editor.getByRole('button', { name: 'Cancel' }).click();
    await editor.waitFor({ state: 'detached' });

    // An image without words says so.
    await page.getByRole('button', { name: 'Edit wide-blue.png' }).click();
    const plain = page.getByRole('dialog', { name: 'Edit wide-blue.png' });
    await plain.getByText('No text found').waitFor();
    await plain.getByRole('button', { name: 'Cancel' }).click();
    expect(problems).toEqual([]);
  });

  test('the instance settings turn thumbnails and text recognition on and off, with their progress', async () => {
    // The first progress is answered as in the middle of a backfill: a bar, read again until it ends.
    await page.route(
      (url) => url.pathname === '/api/settings/media',
      async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as { data: { thumbnails: Record<string, number>; backfilling: boolean } };
        Object.assign(body.data.thumbnails, { done: 1, pending: 1 });
        body.data.backfilling = true;
        await route.fulfill({ response, json: body });
      },
      { times: 1 },
    );
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('link', { name: 'Instance settings' }).click();
    const thumbnails = page.getByRole('switch', { name: 'Make thumbnails' });
    const ocr = page.getByRole('switch', { name: 'Recognise text in images (OCR)' });
    await expect(thumbnails.isChecked()).resolves.toBe(true);
    await expect(ocr.isChecked()).resolves.toBe(true);
    // Each hint is the switch's description.
    for (const [control, words] of [
      [thumbnails, 'existing files too'],
      [ocr, 'search finds them'],
    ] as const) {
      const hint = await control.getAttribute('aria-describedby');
      await expect(page.locator(`[id="${hint}"]`).textContent()).resolves.toContain(words);
    }
    const counts = page.getByTestId('media-counts');
    const bar = page.getByRole('progressbar', { name: 'Thumbnails' });
    await bar.waitFor();
    await expect(bar.evaluate((progress: any) => [progress.value, progress.max])).resolves.toEqual([1, 2]);
    await expect(counts.first().textContent()).resolves.toBe('1 done · 1 waiting · 0 failed');
    await shot('thumbnails-03-settings-backfill');
    await bar.waitFor({ state: 'detached', timeout: 10_000 });
    await expect(counts.allTextContents()).resolves.toEqual(['2 done · 0 waiting · 0 failed', '2 done · 0 waiting · 0 failed']);
    await shot('thumbnails-04-settings');

    await ocr.uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved').waitFor();
    expect((await owner.get('/api/settings')).body.data).toMatchObject({ thumbnailsEnabled: true, ocrEnabled: false });
    await ocr.check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => (await owner.get('/api/settings')).body.data.ocrEnabled).toBe(true);
    expect(problems).toEqual([]);
  });
});
