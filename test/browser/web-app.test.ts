import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page, Request } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { chromiumPath, launchBrowser, screenshotDir, watchPage, type BrowserSession } from '../support/browser.ts';

/** A solid-colour PNG (RGB), so the grid and the gallery have real images to show. */
function png(width: number, height: number, [r, g, b]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const row = Buffer.alloc(1 + width * 3);
  for (let x = 0; x < width; x++) row.set([r, g, b], 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const PASSWORD = 'correct horse battery';

describe('the web app in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let page: Page;
  const pageErrors: string[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-browser-files-'));

  const shot = async (name: string, target: Page = page) => {
    // Full-page screenshots from the top, so the sticky header sits where it belongs.
    await target.evaluate('window.scrollTo(0, 0)');
    await target.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true, animations: 'disabled' });
  };
  const watch = (target: Page) => watchPage(target, pageErrors);

  beforeAll(async () => {
    fs.mkdirSync(screenshotDir, { recursive: true });
    server = await startTestServer();
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    watch(page);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the server serves the app: pages with a strict CSP, hashed assets cached for a year', async () => {
    for (const pathname of ['/', '/app', '/app/files', '/app/no/such/page']) {
      const response = await fetch(server.baseUrl + pathname);
      expect(response.status, pathname).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    const html = await (await fetch(server.baseUrl + '/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(server.baseUrl + script);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // `/assets/<file>` is two segments like a share page, but it is never taken for one.
    const missing = await fetch(server.baseUrl + '/assets/missing.js');
    expect(missing.status).toBe(404);
    expect(await fetch(server.baseUrl + '/assets/..%2f..%2fpackage.json').then((r) => r.status)).toBe(404);
    expect(await fetch(server.baseUrl + '/assets/%2e%2e/index.html').then((r) => r.status)).toBe(404);
    // Share pages and short links are untouched.
    expect((await fetch(server.baseUrl + '/abcdefgh/photo.png')).status).toBe(404);
    expect((await fetch(server.baseUrl + '/u/abcdef', { redirect: 'manual' })).status).toBe(404);
  });

  test('assets are sent compressed as the browser accepts them (Brotli, gzip), with Vary, and the icon is served', async () => {
    const html = await (await fetch(server.baseUrl + '/')).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const raw = (acceptEncoding: string) =>
      new Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }>((resolve, reject) => {
        http
          .get(server.baseUrl + script, { headers: { 'accept-encoding': acceptEncoding } }, (response) => {
            const parts: Buffer[] = [];
            response.on('data', (part: Buffer) => parts.push(part));
            response.on('end', () => resolve({ encoding: response.headers['content-encoding'], vary: response.headers.vary, body: Buffer.concat(parts) }));
          })
          .on('error', reject);
      });
    const plain = await raw('identity');
    expect(plain.encoding).toBeUndefined();
    expect(plain.vary).toMatch(/accept-encoding/i);
    const brotli = await raw('gzip, deflate, br');
    expect(brotli.encoding).toBe('br');
    expect(brotli.vary).toMatch(/accept-encoding/i);
    expect(zlib.brotliDecompressSync(brotli.body).equals(plain.body)).toBe(true);
    expect(brotli.body.length).toBeLessThan(plain.body.length / 2);
    const gzip = await raw('gzip');
    expect(gzip.encoding).toBe('gzip');
    expect(zlib.gunzipSync(gzip.body).equals(plain.body)).toBe(true);

    const icon = await fetch(server.baseUrl + '/favicon.ico');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await icon.arrayBuffer());
    // An ICO directory of one 32 × 32 image, stored as PNG.
    expect([...bytes.subarray(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 32, 32]);
    expect(bytes.subarray(22, 26).toString('latin1')).toBe('\x89PNG');
  });

  test('first run: the sign-in page offers to create the administrator account', async () => {
    await page.goto(server.baseUrl + '/');
    await page.getByRole('heading', { name: 'Create the administrator account' }).waitFor();
    expect(page.url()).toBe(`${server.baseUrl}/app/signin`);
    await shot('01-setup-administrator');

    await page.getByRole('textbox', { name: /^Name\b/ }).fill('Ada Admin');
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create administrator account' }).click();

    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    expect(page.url()).toBe(`${server.baseUrl}/app/files`);
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const label of ['Files', 'Upload', 'Short links', 'Integrations', 'Organisation', 'Account', 'Administration']) {
      await expect(nav.getByRole('link', { name: label }).isVisible()).resolves.toBe(true);
    }
    await page.getByText('No files yet.').waitFor();
    await shot('02-files-empty');

    // The session survives a reload; signing out comes back to a plain sign-in form.
    await page.reload();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot('03-sign-in');
    await page.getByLabel('Email').fill('ada@example.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  });

  test('uploading files shows them in the grid, the list and the gallery', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Upload' }).click();
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    // A file dropped beside the drop zone is not opened by the browser in place of the app.
    const droppedBeside = `(() => { const files = new DataTransfer(); files.items.add(new File(['x'], 'x.txt')); const drop = new DragEvent('drop', { dataTransfer: files, bubbles: true, cancelable: true }); document.querySelector('main').dispatchEvent(drop); return drop.defaultPrevented; })()`;
    expect(await page.evaluate(droppedBeside)).toBe(true);
    const colours: Array<[string, [number, number, number]]> = [
      ['sunrise.png', [249, 115, 22]],
      ['forest.png', [22, 163, 74]],
      ['ocean.png', [37, 99, 235]],
    ];
    await page.getByTestId('file-input').setInputFiles([
      ...colours.map(([name, rgb]) => ({ name, mimeType: 'image/png', buffer: png(160, 120, rgb) })),
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('Remember the milk.\n') },
    ]);
    const items = page.getByTestId('upload-item');
    await expect.poll(() => items.count()).toBe(4);
    await expect.poll(() => page.locator('[data-testid=upload-item][data-status=done]').count(), { timeout: 30_000 }).toBe(4);
    const link = await items.first().getByTestId('upload-link').textContent();
    expect(link).toMatch(new RegExp(`^${server.baseUrl}/[a-z0-9]+/sunrise\\.png$`));
    await shot('04-upload-done');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click();
    const cards = page.getByTestId('file-card');
    await expect.poll(() => cards.count()).toBe(4);
    await expect(cards.filter({ hasText: 'notes.txt' }).count()).resolves.toBe(1);
    // This server makes no thumbnails (background media work is off): the images wait for theirs
    // behind a placeholder instead of loading their originals (test/browser/thumbnails.test.ts shows them arriving).
    await expect.poll(() => page.getByTestId('thumbnail-pending').count()).toBe(3);
    await expect(page.locator('.file-card img').count()).resolves.toBe(0);
    await page.getByRole('region', { name: 'Timeline' }).waitFor();
    await shot('05-files-grid');

    // Gallery: the images in the grid's order (newest first); the text file is not part of it.
    const order = (await page.getByRole('button', { name: /^View / }).evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label')!.slice(5)))) as string[];
    expect([...order].sort()).toEqual(['forest.png', 'ocean.png', 'sunrise.png']);
    await page.getByRole('button', { name: `View ${order[0]}` }).click();
    const gallery = page.getByTestId('gallery');
    await gallery.getByText('Image 1 of 3').waitFor();
    await expect(gallery.getByRole('button', { name: 'Previous image' }).getAttribute('aria-disabled')).resolves.toBe('true');
    await page.keyboard.press('ArrowRight');
    await page.getByRole('heading', { name: order[1] }).waitFor();
    await gallery.getByText('Image 2 of 3').waitFor();
    // With the keyboard on Next, to the last image: Next is marked unusable there, and keeps the focus.
    await gallery.getByRole('button', { name: 'Next image' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: order[2] }).waitFor();
    await gallery.getByText('Image 3 of 3').waitFor();
    await expect.poll(() => gallery.getByRole('button', { name: 'Next image' }).getAttribute('aria-disabled')).toBe('true');
    await expect(page.evaluate("document.activeElement?.getAttribute('aria-label')")).resolves.toBe('Next image');
    await page.keyboard.press('Enter');
    await gallery.getByText('Image 3 of 3').waitFor();
    // On a touch screen, a swipe to the right steps back; an upward drag does not step.
    const swipe = (fromX: number, toX: number, toY = 100) =>
      page.evaluate(`(() => {
        const frame = document.querySelector('.gallery-frame');
        const at = (x, y) => new Touch({ identifier: 1, target: frame, clientX: x, clientY: y });
        frame.dispatchEvent(new TouchEvent('touchstart', { bubbles: true, touches: [at(${fromX}, 100)], changedTouches: [at(${fromX}, 100)] }));
        frame.dispatchEvent(new TouchEvent('touchend', { bubbles: true, touches: [], changedTouches: [at(${toX}, ${toY})] }));
      })()`);
    await swipe(100, 130, 300);
    await gallery.getByText('Image 3 of 3').waitFor();
    await swipe(100, 300);
    await gallery.getByText('Image 2 of 3').waitFor();
    await swipe(300, 100);
    await gallery.getByText('Image 3 of 3').waitFor();
    await shot('06-gallery');
    await page.keyboard.press('Escape');
    await gallery.waitFor({ state: 'detached' });
    // The owner looking through previews and the gallery is not counted as views.
    const viewed = (await (await browser.context.request.get(`${server.baseUrl}/api/files?types=image/png`)).json()) as { data: Array<{ views: number }> };
    expect(viewed.data.map((f) => f.views)).toEqual([0, 0, 0]);

    // Edit: make a file private with a password.
    await page.getByRole('button', { name: 'Edit forest.png' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit forest.png' });
    await dialog.getByLabel('Private: only you').check();
    await dialog.getByLabel('Protect with a password').check();
    await dialog.getByLabel('New password').fill('open sesame');
    await shot('07-file-edit');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const forest = cards.filter({ hasText: 'forest.png' });
    await forest.getByText('Private').waitFor();
    await forest.getByText('Password').waitFor();

    // An expiry that makes the file private, then only its date changed: the action stays.
    const recordOf = async (name: string) =>
      ((await (await browser.context.request.get(`${server.baseUrl}/api/files?search=${name}`)).json()) as { data: Array<{ name: string; expiresAt: string | null; expiryAction: string | null }> }).data.find((f) => f.name === name)!;
    await page.getByRole('button', { name: 'Edit forest.png' }).click();
    await dialog.getByLabel(/Expires at/).fill('2030-01-02T03:04');
    await dialog.getByLabel('Then').selectOption('SET_PRIVATE');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(async () => (await recordOf('forest.png')).expiryAction).toBe('SET_PRIVATE');
    await page.getByRole('button', { name: 'Edit forest.png' }).click();
    expect(await dialog.getByLabel('Then').inputValue()).toBe('SET_PRIVATE');
    await dialog.getByLabel(/Expires at/).fill('2031-01-02T03:04');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(async () => (await recordOf('forest.png')).expiresAt?.slice(0, 4)).toBe('2031');
    expect((await recordOf('forest.png')).expiryAction).toBe('SET_PRIVATE');

    // Filters: visibility private leaves one file; the list view shows it as a table row.
    // A user clicks the option's word, not only its box.
    await page.getByText('Any visibility').click();
    await page.getByRole('group', { name: 'Filters' }).locator('label.checkbox', { hasText: 'Private' }).click();
    expect(await page.getByRole('checkbox', { name: 'Private' }).isChecked()).toBe(true);
    await expect.poll(() => cards.count()).toBe(1);
    await page.getByRole('button', { name: 'List' }).click();
    await expect.poll(() => page.getByTestId('file-row').count()).toBe(1);
    expect(page.url()).toContain('visibility=private');
    expect(page.url()).toContain('view=list');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => page.getByTestId('file-row').count()).toBe(4);
    await page.getByText('Any visibility').click(); // close the dropdown
    await shot('08-files-list');

    // Search.
    await page.getByRole('searchbox', { name: 'Search files' }).fill('sun');
    await expect.poll(() => page.getByTestId('file-row').count()).toBe(1);
    await page.getByRole('searchbox', { name: 'Search files' }).fill('');
    await expect.poll(() => page.getByTestId('file-row').count()).toBe(4);

    // Bulk selection: select the page, make everything private, then delete the text file alone.
    await page.getByLabel('Select all on this page').check();
    await page.getByRole('region', { name: 'Selected files' }).getByText('4 files selected').waitFor();
    await shot('09-files-bulk-selection');
    await page.getByRole('button', { name: 'Make private' }).click();
    await expect.poll(() => page.locator('[data-testid=file-row] .badge-neutral', { hasText: 'Private' }).count()).toBe(4);
    await page.getByRole('button', { name: 'Clear selection' }).click();
    await page.getByRole('button', { name: 'Delete notes.txt' }).click();
    await page.getByRole('dialog', { name: 'Delete file' }).getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByTestId('file-row').count()).toBe(3);

    // Timeline window: the single month bucket, named under its bar, reads the same three files with the snapshot.
    await expect.poll(() => page.getByTestId('timeline-period').textContent()).toMatch(/^\w+ \d{4} · 3 files$/);
    const windowRead = page.waitForRequest((request) => request.url().includes('/api/files?') && request.url().includes('snapshot='));
    await page.getByRole('region', { name: 'Timeline' }).getByRole('button', { name: /: 3 files$/ }).click();
    const read = new URL((await windowRead).url());
    expect(read.searchParams.get('dateFrom')).toBeTruthy();
    expect(read.searchParams.get('dateTo')).toBeTruthy();
    await page.getByText('3 files in this period').waitFor();
    await page.getByRole('button', { name: 'Show all periods' }).click();
    await page.getByRole('button', { name: 'Grid' }).click();
  });

  test('a 50 MiB file goes up in parallel parts with a progress bar', async () => {
    const big = path.join(tmp, 'big-archive.bin');
    const block = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < block.length; i++) block[i] = (i * 31 + 7) & 0xff;
    const fd = fs.openSync(big, 'w');
    for (let i = 0; i < 50; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);

    await page.goto(`${server.baseUrl}/app/upload`);
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Clear finished' }).isVisible(); // a fresh page: the list is empty

    const partPuts: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const onRequest = (request: { url(): string; method(): string }) => {
      if (request.method() === 'PUT' && /\/api\/files\/chunks\/[a-z0-9]+\/part\/\d+$/.test(request.url())) {
        partPuts.push(request.url());
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
      }
    };
    const onDone = (request: { url(): string; method(): string }) => {
      if (request.method() === 'PUT' && /\/part\/\d+$/.test(request.url())) inFlight -= 1;
    };
    page.on('request', onRequest);
    page.on('requestfinished', onDone);
    page.on('requestfailed', onDone);
    // Slow the upload down (about 25 MiB/s) so the progress bar is seen moving.
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 25 * 1024 * 1024 });

    await page.getByTestId('file-input').setInputFiles(big);
    const item = page.getByTestId('upload-item').filter({ hasText: 'big-archive.bin' });
    await item.getByText(/Uploading 7 parts/).waitFor({ timeout: 30_000 });
    // The bar moves, with a speed shown, before the upload is done.
    const midway = await page.waitForFunction(
      // A function, not a string: the app's CSP forbids eval. (The root tsconfig has no DOM types.)
      () => {
        const bar = (globalThis as any).document.querySelector('[data-status=uploading] progress') as { value: number } | null;
        return bar && bar.value >= 20 && bar.value < 100 ? bar.value : null;
      },
      undefined,
      { timeout: 60_000, polling: 50 },
    );
    expect(await midway.jsonValue()).toBeGreaterThanOrEqual(20);
    await expect(item.textContent()).resolves.toMatch(/\d+% · [\d.]+ (B|KiB|MiB|GiB)\/s/);
    await shot('10-upload-chunked-progress');

    await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'big-archive.bin' }).waitFor({ timeout: 120_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await cdp.detach();
    page.off('request', onRequest);
    page.off('requestfinished', onDone);
    page.off('requestfailed', onDone);

    expect(partPuts).toHaveLength(7); // 6 × 8 MiB + 2 MiB
    expect(maxInFlight).toBeGreaterThan(1);
    await expect(item.getByTestId('upload-progress').getAttribute('value')).resolves.toBe('100');
    const link = (await item.getByTestId('upload-link').textContent())!;
    expect(link).toMatch(/\/big-archive\.bin$/);
    await shot('11-upload-chunked-done');

    // The stored file is the whole 50 MiB.
    const listing = await browser.context.request.get(`${server.baseUrl}/api/files?search=big-archive`);
    const body = (await listing.json()) as { data: Array<{ name: string; size: number }> };
    expect(body.data).toHaveLength(1);
    expect(body.data[0]!.size).toBe(50);
  });

  test('upload errors are explained (413, 429) and a failed part is sent again', async () => {
    await page.goto(`${server.baseUrl}/app/upload`);
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    const failed = (name: string) => page.locator('[data-testid=upload-item][data-status=failed]', { hasText: name });

    // 413: the instance's file-size limit, from the real server.
    const asAdmin = { headers: { origin: server.baseUrl } };
    expect((await browser.context.request.patch(`${server.baseUrl}/api/settings`, { ...asAdmin, data: { maxUploadSizeBytes: 1024 } })).status()).toBe(200);
    await page.getByTestId('file-input').setInputFiles({ name: 'too-big.txt', mimeType: 'text/plain', buffer: Buffer.alloc(4096, 'a') });
    await failed('too-big.txt').getByRole('alert').getByText(/^Too large: /).waitFor();
    expect((await browser.context.request.patch(`${server.baseUrl}/api/settings`, { ...asAdmin, data: { maxUploadSizeBytes: 1024 ** 3 } })).status()).toBe(200);

    // 429: the upload-start rate limit (simulated: 30 real uploads a minute would slow the suite).
    // Nothing was stored, so the upload waits the Retry-After it was given and starts again by itself.
    // While it waits, its row says so alone: no "0% · 0 B/s" of a transfer that is not happening.
    let limited = 0;
    await page.route(`${server.baseUrl}/api/files`, (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      limited += 1;
      return limited <= 2
        ? route.fulfill({ status: 429, headers: { 'Retry-After': '1' }, contentType: 'application/json', body: JSON.stringify({ error: 'Too many requests' }) })
        : route.continue();
    });
    await page.getByTestId('file-input').setInputFiles({ name: 'patient.txt', mimeType: 'text/plain', buffer: Buffer.from('patient') });
    await page.locator('[data-testid=upload-item]', { hasText: 'patient.txt' }).getByText(/^Too many uploads at once: starting again in 1 s$/).waitFor();
    await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'patient.txt' }).waitFor();
    expect(limited).toBe(3);
    await page.unroute(`${server.baseUrl}/api/files`);

    // A wait longer than two minutes is not sat out unasked: the upload fails, saying how long.
    await page.route(`${server.baseUrl}/api/files`, (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({ status: 429, headers: { 'Retry-After': '600' }, contentType: 'application/json', body: JSON.stringify({ error: 'Too many requests' }) })
        : route.continue(),
    );
    await page.getByTestId('file-input').setInputFiles({ name: 'later.txt', mimeType: 'text/plain', buffer: Buffer.from('later') });
    await failed('later.txt').getByText('Too many requests: wait 10 minutes and try again').waitFor();
    await shot('12-upload-errors');
    // "Clear finished" takes the uploaded files away, and the failures no retry can mend (the size
    // limit's 413); it keeps those that may pass later, with their Retry.
    await page.getByRole('button', { name: 'Clear finished' }).click();
    await page.locator('[data-testid=upload-item]', { hasText: 'patient.txt' }).waitFor({ state: 'detached' });
    await page.locator('[data-testid=upload-item]', { hasText: 'too-big.txt' }).waitFor({ state: 'detached' });
    await failed('later.txt').waitFor();
    await page.unroute(`${server.baseUrl}/api/files`);
    // The failures that may pass are retried together.
    await page.getByRole('button', { name: 'Retry the failed upload' }).click();
    await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'later.txt' }).waitFor();
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe('file-input');
    // A failure can be taken off the list by itself.
    await page.route(`${server.baseUrl}/api/files`, (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({ status: 429, headers: { 'Retry-After': '600' }, contentType: 'application/json', body: JSON.stringify({ error: 'Too many requests' }) })
        : route.continue(),
    );
    await page.getByTestId('file-input').setInputFiles({ name: 'doomed.txt', mimeType: 'text/plain', buffer: Buffer.from('never') });
    await failed('doomed.txt').getByRole('button', { name: 'Remove doomed.txt from the list' }).click();
    await page.locator('[data-testid=upload-item]', { hasText: 'doomed.txt' }).waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe('file-input');
    await page.unroute(`${server.baseUrl}/api/files`);

    // A part that fails with a 503 is sent again; so is one refused with a 409 that says when to come
    // back (an earlier copy still arriving, as after a lost connection); and the upload completes.
    // Before that, asking where part 2 goes fails on the network once (a blip, a restarting server):
    // that part is asked for again, not the whole upload given up. The completion, answered once
    // with such a 409 (another completion of the upload still under way), is repeated.
    let attempts = 0;
    let addressAsked = 0;
    let completions = 0;
    const completion = /\/api\/files\/chunks\/[a-z0-9]+\/complete$/;
    await page.route(completion, (route) => {
      completions += 1;
      if (completions === 1) return route.fulfill({ status: 409, headers: { 'Retry-After': '1' }, contentType: 'application/json', body: JSON.stringify({ error: 'Another request is still completing this upload; repeat the completion later to get its file' }) });
      return route.continue();
    });
    const secondPart = /\/api\/files\/chunks\/[a-z0-9]+\/part\/2$/;
    await page.route(secondPart, (route) => {
      if (route.request().method() === 'GET') {
        addressAsked += 1;
        return addressAsked === 1 ? route.abort('connectionreset') : route.continue();
      }
      if (route.request().method() !== 'PUT') return route.continue();
      attempts += 1;
      if (attempts === 1) return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'Service unavailable' }) });
      if (attempts === 2) return route.fulfill({ status: 409, headers: { 'Retry-After': '1' }, contentType: 'application/json', body: JSON.stringify({ error: 'Part 2 is still arriving in an earlier request' }) });
      return route.continue();
    });
    const file = path.join(tmp, 'retried.bin');
    fs.writeFileSync(file, Buffer.alloc(33 * 1024 * 1024, 7));
    await page.getByTestId('file-input').setInputFiles(file);
    await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'retried.bin' }).waitFor({ timeout: 150_000 });
    expect(attempts).toBe(3);
    expect(addressAsked).toBe(4);
    expect(completions).toBe(2);
    await page.unroute(secondPart);
    await page.unroute(completion);

    // A part refused with 507 (the server's disk is full) is not sent again: sending it again cannot
    // make room, so the upload stops at once with the server's words.
    let refusals = 0;
    const firstPart = /\/api\/files\/chunks\/[a-z0-9]+\/part\/1$/;
    await page.route(firstPart, (route) => {
      if (route.request().method() !== 'PUT') return route.continue();
      refusals += 1;
      return route.fulfill({ status: 507, contentType: 'application/json', body: JSON.stringify({ error: 'The server is out of storage space; nothing was stored. Ask its administrator to free some.' }) });
    });
    const noRoom = path.join(tmp, 'no-room.bin');
    fs.writeFileSync(noRoom, Buffer.alloc(33 * 1024 * 1024, 9));
    await page.getByTestId('file-input').setInputFiles(noRoom);
    await failed('no-room.bin').getByText('The server is out of storage space').waitFor();
    expect(refusals).toBe(1);

    // Retry goes on with the same session, sending only the parts it lacks: a second session would
    // hold the file's size against the quota again for an hour.
    let sessionStarts = 0;
    const sessionsUsed = new Set<string>();
    const watch = (request: Request) => {
      if (request.method() === 'POST' && request.url() === `${server.baseUrl}/api/files/chunks`) sessionStarts += 1;
      const session = /\/api\/files\/chunks\/([a-z0-9]+)\/part\//.exec(request.url())?.[1];
      if (session) sessionsUsed.add(session);
    };
    page.on('request', watch);
    await failed('no-room.bin').getByRole('button', { name: 'Retry' }).click();
    await page.locator('[data-testid=upload-item][data-status=failed]', { hasText: 'no-room.bin' }).getByText('The server is out of storage space').waitFor();
    expect(refusals).toBe(2);
    expect(sessionStarts).toBe(0);
    expect(sessionsUsed.size).toBe(1);
    const [firstSession] = sessionsUsed;
    // Only a pattern equal to the one routed removes the route.
    await page.unroute(firstPart);

    // A session that is gone (expired after an hour, say) is started anew once, and the upload completes.
    let gone = 0;
    const oldSession = new RegExp(`/api/files/chunks/${firstSession}/part/\\d+$`);
    await page.route(oldSession, (route) => {
      gone += 1;
      return route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ error: 'Upload session not found (it expired after an hour without activity)' }) });
    });
    await failed('no-room.bin').getByRole('button', { name: 'Retry' }).click();
    await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'no-room.bin' }).waitFor({ timeout: 120_000 });
    page.off('request', watch);
    await page.unroute(oldSession);
    expect(gone).toBeGreaterThanOrEqual(1);
    expect(sessionStarts).toBe(1);
    expect(sessionsUsed.size).toBe(2);

    // A file changed on disk after it was chosen cannot be sent: said so, not blamed on the network,
    // and cleared with the finished ones, since no retry can mend it.
    const changing = path.join(tmp, 'changing.bin');
    fs.writeFileSync(changing, Buffer.alloc(33 * 1024 * 1024, 3));
    const secondOfChanging = /\/api\/files\/chunks\/[a-z0-9]+\/part\/2$/;
    await page.route(secondOfChanging, (route) => {
      if (route.request().method() !== 'PUT') return route.continue();
      const fd = fs.openSync(changing, 'r+');
      fs.writeSync(fd, Buffer.from('changed'), 0, 7, 1024);
      fs.closeSync(fd);
      const later = new Date(Date.now() + 5000);
      fs.utimesSync(changing, later, later);
      return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'Service unavailable' }) });
    });
    await page.getByTestId('file-input').setInputFiles(changing);
    await failed('changing.bin').getByText('changing.bin changed on disk since it was chosen: choose it again to upload it').waitFor({ timeout: 60_000 });
    await page.unroute(secondOfChanging);

    await page.getByRole('button', { name: 'Clear finished' }).click();
    await page.locator('[data-testid=upload-item]', { hasText: 'changing.bin' }).waitFor({ state: 'detached' });
    // The button is disabled now: the keyboard's focus goes to choosing more files, not to the body.
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("data-testid")')).toBe('file-input');
    for (const name of ['patient.txt', 'later.txt', 'retried.bin', 'no-room.bin']) {
      const listing = (await (await browser.context.request.get(`${server.baseUrl}/api/files?search=${name}`)).json()) as { data: Array<{ id: string }> };
      expect(listing.data).toHaveLength(1);
      expect((await browser.context.request.delete(`${server.baseUrl}/api/files/${listing.data[0]!.id}`, asAdmin)).status()).toBe(204);
    }
  });

  test('a new token’s secret is shown exactly once', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Integrations' }).click();
    await page.getByRole('heading', { name: 'Create a token' }).waitFor();
    await page.getByRole('textbox', { name: /^Name\b/ }).fill('backup script');
    await page.getByRole('checkbox', { name: /files:read/ }).check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const reveal = page.getByTestId('secret-reveal');
    await reveal.waitFor();
    const secret = (await reveal.getByTestId('secret-value').textContent())!;
    expect(secret).toMatch(/^svc_/);
    // The focus went to the secret shown above the form, not to the page's body.
    await expect.poll(() => page.evaluate("document.activeElement?.closest('[data-testid=secret-reveal]') !== null")).toBe(true);
    // The command it suggests is one this token may run: it can read, so a listing.
    expect(await reveal.getByText(/^Try it:/).textContent()).toBe(`Try it: curl -H "Authorization: Bearer ${secret.slice(0, 8)}…" ${server.baseUrl}/api/files`);
    await page.getByTestId('token-row').filter({ hasText: 'backup script' }).getByText('Active').waitFor();
    await shot('13-integrations-token-secret');

    // The secret works for the API…
    const response = await fetch(`${server.baseUrl}/api/files`, { headers: { authorization: `Bearer ${secret}` } });
    expect(response.status).toBe(200);

    // …and is gone once dismissed, and after a reload.
    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    await reveal.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(secret);
    await page.reload();
    await page.getByTestId('token-row').first().waitFor();
    expect(await page.content()).not.toContain(secret);
    await expect(page.getByTestId('secret-reveal').count()).resolves.toBe(0);
    await shot('14-integrations-tokens');

    // Revoking keeps the record, marked revoked; the secret stops working.
    await page.getByRole('button', { name: 'Revoke backup script' }).click();
    await page.getByRole('dialog', { name: 'Revoke token' }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByTestId('token-row').filter({ hasText: 'backup script' }).getByText('Revoked', { exact: true }).waitFor();
    expect((await fetch(`${server.baseUrl}/api/files`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);

    // A token for uploads only is shown an upload, not a listing it would get 401 for.
    await page.getByRole('textbox', { name: /^Name\b/ }).fill('uploader');
    await page.getByRole('button', { name: 'Create token' }).click();
    const uploaderReveal = page.getByTestId('secret-reveal');
    const uploaderSecret = (await uploaderReveal.getByTestId('secret-value').textContent())!;
    expect(await uploaderReveal.getByText(/^Try it:/).textContent()).toBe(`Try it: curl -H "Authorization: Bearer ${uploaderSecret.slice(0, 8)}…" -F file=@photo.png ${server.baseUrl}/api/files`);
    await uploaderReveal.getByRole('button', { name: 'I have stored it' }).click();
    await uploaderReveal.waitFor({ state: 'detached' });

    // Webhooks and the uploader apps tab.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('textbox', { name: /^Name\b/ }).fill('Chat notifier');
    await page.getByLabel('Receiver URL').fill('https://relay:pass-w0rd@hooks.example.test/hoard');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const hookSecret = (await page.getByTestId('secret-value').textContent())!;
    expect(hookSecret).toMatch(/^whsec_/);
    const hookRow = page.getByTestId('webhook-row').filter({ hasText: 'Chat notifier' });
    await hookRow.waitFor();
    // The receiver's password is not shown on screen, not even in the cell's tooltip.
    const receiver = hookRow.getByRole('cell').nth(1);
    expect([await receiver.textContent(), await receiver.getAttribute('title')]).toEqual(['https://relay:••••@hooks.example.test/hoard', 'https://relay:••••@hooks.example.test/hoard']);
    await shot('15-integrations-webhooks');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('Delivery log (latest 100)').waitFor();
    await page.locator('.deliveries tbody tr').first().waitFor();
    await page.getByRole('switch', { name: /Enabled: Chat notifier/ }).uncheck();
    await page.getByText('Webhook disabled').waitFor();

    await page.getByRole('link', { name: 'Uploader apps' }).click();
    await page.getByTestId('upload-token').waitFor();
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'ShareX uploader (.sxcu)' }).click();
    expect((await download).suggestedFilename()).toMatch(/\.sxcu$/);
    const shortener = page.waitForEvent('download');
    await page.getByRole('link', { name: 'ShareX URL shortener (.sxcu)' }).click();
    expect((await shortener).suggestedFilename()).toMatch(/-links\.sxcu$/);
    await shot('16-integrations-uploaders');

    // What the token did is in the administration's activity log (records are written in batches).
    await expect
      .poll(async () => {
        await page.goto(`${server.baseUrl}/app/admin?tab=activity`);
        await page.getByRole('heading', { name: 'Administration', level: 1 }).waitFor();
        return page.getByTestId('audit-row').filter({ hasText: 'backup script' }).count();
      }, { timeout: 10_000 })
      .toBeGreaterThan(0);
    await page.getByTestId('audit-row').filter({ hasText: 'backup script' }).filter({ hasText: 'GET /api/files' }).first().waitFor();
    await shot('31-admin-activity');
  });

  test('creating a short link, copying and following it', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Short links' }).click();
    const target = `${server.baseUrl}/api/health`;
    await page.getByLabel('Long URL').fill(target);
    await page.getByRole('button', { name: 'Shorten' }).click();
    const created = page.getByTestId('created-short-link');
    await created.waitFor();
    const short = (await created.textContent())!;
    expect(short).toMatch(new RegExp(`^${server.baseUrl}/u/[A-Za-z0-9_]{6}$`));
    const row = page.getByTestId('short-link-row').first();
    await expect(row.getByTestId('clicks').textContent()).resolves.toBe('0');
    await shot('17-links');

    // Copy puts the short URL on the clipboard.
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    await created.locator('..').getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(short);

    // Following it redirects to the target and counts one click.
    const visitor = await browser.context.newPage();
    watch(visitor);
    const response = await visitor.goto(short);
    expect(visitor.url()).toBe(target);
    expect(await response!.json()).toEqual({ status: 'ok' });
    await visitor.close();
    await page.getByRole('button', { name: 'Refresh click counts' }).click();
    await expect.poll(() => row.getByTestId('clicks').textContent()).toBe('1');
  });

  test('organisation and account pages', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organisation' }).click();
    await page.getByRole('link', { name: 'Tags' }).click();
    for (const tag of ['holiday', 'work']) {
      await page.getByRole('textbox', { name: /^Name\b/ }).fill(tag);
      await page.getByRole('button', { name: 'Create tag' }).click();
      await page.getByRole('list', { name: 'Tags' }).getByText(`#${tag}`).waitFor();
      // Said, not only shown: the toasts are a live region.
      await page.getByRole('status').getByText(`Tag ${tag} created`).waitFor();
    }
    await shot('18-organisation-tags');

    await page.getByRole('link', { name: 'Folders' }).click();
    await page.getByRole('textbox', { name: /^Name\b/ }).fill('Photos');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('list', { name: 'Folders' }).getByText('Photos').waitFor();
    await page.getByRole('status').getByText('Folder Photos created').waitFor();
    await page.getByRole('textbox', { name: /^Name\b/ }).fill('2024');
    await page.getByLabel('Inside').selectOption({ label: 'Photos' });
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('list', { name: 'Folders' }).getByText('2024').waitFor();
    await shot('19-organisation-folders');

    await page.getByRole('link', { name: 'Upload profiles' }).click();
    await page.getByRole('button', { name: 'New profile' }).click();
    const dialog = page.getByRole('dialog', { name: 'New upload profile' });
    await dialog.getByRole('textbox', { name: /^Name\b/ }).fill('Screenshots');
    await dialog.getByLabel('Visibility').selectOption('PRIVATE');
    await dialog.getByLabel('Expiration').selectOption('WEEK');
    await dialog.getByRole('checkbox', { name: 'work' }).check();
    await shot('20-organisation-profile-dialog');
    await dialog.getByRole('button', { name: 'Save' }).click();
    const profile = page.getByTestId('profile-item').filter({ hasText: 'Screenshots' });
    await profile.getByText('private · expires after a week · tags: work').waitFor();
    await profile.getByRole('button', { name: 'Make default' }).click();
    await profile.getByText('Default', { exact: true }).waitFor();
    await shot('21-organisation-profiles');

    // Files can be moved into a folder from the editor.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click();
    await page.getByRole('button', { name: 'Edit ocean.png' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit ocean.png' });
    await editor.getByLabel('Folder').selectOption({ label: 'Photos' });
    await editor.getByRole('checkbox', { name: 'holiday' }).check();
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('file-card').filter({ hasText: 'ocean.png' }).getByText('#holiday').waitFor();
    await page.getByRole('group', { name: 'Filters' }).getByLabel('Folder').selectOption({ label: 'Photos' });
    await expect.poll(() => page.getByTestId('file-card').count()).toBe(1);
    await page.getByRole('button', { name: 'Clear filters' }).click();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
    await page.getByText('ada@example.test').waitFor();
    await page.getByLabel('Default upload profile').selectOption({ label: 'Screenshots' });
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Account saved').waitFor();
    await shot('22-account');
  });

  test('an administrator edits a role, and a member sees only what it allows', async () => {
    // Open registration and create a member account.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('link', { name: 'Instance settings' }).click();
    await page.getByLabel('Registration').selectOption('invite');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved').waitFor();
    await shot('23-admin-settings');

    // An administrator creates an account, and is told so.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('button', { name: 'Create account' }).click();
    const created = page.getByRole('dialog', { name: 'Create account' });
    await created.getByLabel('Email', { exact: true }).fill('carol@example.test');
    await created.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await created.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').getByText('Account created').waitFor();
    await page.getByText('carol@example.test').waitFor();

    await page.getByRole('link', { name: 'Invites' }).click();
    await page.getByRole('button', { name: 'Create invite' }).click();
    const code = (await page.locator('tbody code').first().textContent())!;
    await shot('24-admin-invites');

    await page.getByRole('link', { name: 'Roles' }).click();
    const everyone = page.getByTestId('role-editor').filter({ has: page.getByRole('heading', { name: /^Everyone/ }) });
    await everyone.waitFor();
    // Members may no longer delete short links or manage webhooks.
    await everyone.getByRole('checkbox', { name: 'links.delete' }).uncheck();
    await everyone.getByRole('checkbox', { name: 'webhooks.manage' }).uncheck();
    await shot('25-admin-roles');
    await everyone.getByRole('button', { name: 'Save Everyone' }).click();
    await page.getByText('Saved role Everyone').waitFor();
    const roles = (await (await browser.context.request.get(`${server.baseUrl}/api/roles`)).json()) as { data: { roles: Array<{ systemKey: string | null; permissions: string[] }> } };
    const saved = roles.data.roles.find((r) => r.systemKey === 'everyone')!;
    expect(saved.permissions).not.toContain('links.delete');
    expect(saved.permissions).not.toContain('webhooks.manage');
    expect(saved.permissions).toContain('links.create');

    // A member signs up with the invite link, in a browser of their own.
    const member = await launchBrowser();
    try {
      const memberPage = member.context.pages()[0] ?? (await member.context.newPage());
      watch(memberPage);
      await memberPage.goto(`${server.baseUrl}/app/signin?invite=${encodeURIComponent(code)}`);
      await memberPage.getByRole('heading', { name: 'Create an account' }).waitFor();
      await expect(memberPage.getByLabel('Invite code').inputValue()).resolves.toBe(code);
      await shot('26-register-with-invite', memberPage);
      await memberPage.getByLabel('Email').fill('bob@example.test');
      await memberPage.getByLabel('Password').fill(PASSWORD);
      await memberPage.getByRole('button', { name: 'Create account' }).click();
      await memberPage.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      const nav = memberPage.getByRole('navigation', { name: 'Main' });
      await expect(nav.getByRole('link', { name: 'Administration' }).count()).resolves.toBe(0);

      // Short links: can create, but no delete button.
      await nav.getByRole('link', { name: 'Short links' }).click();
      await memberPage.getByLabel('Long URL').fill('https://example.test/member');
      await memberPage.getByRole('button', { name: 'Shorten' }).click();
      await memberPage.getByTestId('short-link-row').first().waitFor();
      await expect(memberPage.getByRole('button', { name: /^Delete \/u\// }).count()).resolves.toBe(0);
      await shot('27-member-links', memberPage);

      // Integrations: tokens but no webhooks tab.
      await nav.getByRole('link', { name: 'Integrations' }).click();
      await memberPage.getByRole('link', { name: 'API tokens' }).waitFor();
      await expect(memberPage.getByRole('link', { name: 'Webhooks' }).count()).resolves.toBe(0);

      // An administrator page by URL is refused politely.
      await memberPage.goto(`${server.baseUrl}/app/admin`);
      await memberPage.getByRole('heading', { name: 'Not available' }).waitFor();
    } finally {
      await member.close();
    }

    // The administrator sees the new account.
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByTestId('user-row').filter({ hasText: 'bob@example.test' }).waitFor();
    // What each account stores is in its row.
    await expect(page.getByTestId('user-row').filter({ hasText: 'bob@example.test' }).textContent()).resolves.toMatch(/\(\d+ files?\)/);
    await page.getByRole('button', { name: 'Edit bob@example.test' }).click();
    await shot('28-admin-user-edit');
    // Bob forgot his password: the administrator sets a new one, with which he signs in.
    await page.getByLabel(/^New password/).fill('bob has a new password');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // Signed in apart from this browser, whose cookies stay the administrator's.
    const signIn = await fetch(`${server.baseUrl}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: server.baseUrl }, body: JSON.stringify({ email: 'bob@example.test', password: 'bob has a new password' }) });
    expect(signIn.status).toBe(200);
    // Its own password an administrator changes under Account, not here.
    await page.getByRole('button', { name: 'Edit ada@example.test' }).click();
    await expect(page.getByLabel(/^New password/).count()).resolves.toBe(0);
    await page.keyboard.press('Escape');
    await shot('29-admin-users');
  });

  test('dark theme, keyboard focus and a narrow screen', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click();
    await page.getByTestId('file-card').first().waitFor();
    // The toggle cycles system → light → dark and is remembered.
    await page.getByRole('button', { name: /^Theme: System theme/ }).click();
    await page.getByRole('button', { name: /^Theme: Light theme/ }).click();
    await expect(page.evaluate('document.documentElement.dataset.theme')).resolves.toBe('dark');
    await page.reload();
    await expect(page.evaluate('document.documentElement.dataset.theme')).resolves.toBe('dark');
    await expect.poll(() => page.evaluate("[...document.querySelectorAll('.file-card img')].every((img) => img.complete)")).toBe(true);
    await shot('30-files-dark');

    // Keyboard: the skip link comes first and shows a focus outline.
    await page.keyboard.press('Tab');
    const focused = (await page.evaluate('({ text: document.activeElement.textContent, outline: getComputedStyle(document.activeElement).outlineStyle })')) as { text: string; outline: string };
    expect(focused.text).toBe('Skip to content');
    expect(focused.outline).not.toBe('none');

    await page.getByRole('button', { name: /^Theme: Dark theme/ }).click(); // back to the system theme

    const phone = await launchBrowser({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      const small = phone.context.pages()[0] ?? (await phone.context.newPage());
      watch(small);
      await small.goto(`${server.baseUrl}/app/signin`);
      await small.getByLabel('Email').fill('ada@example.test');
      await small.getByLabel('Password').fill(PASSWORD);
      await small.getByRole('button', { name: 'Sign in', exact: true }).click();
      await small.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await small.getByTestId('file-card').first().waitFor();
      await expect(small.getByRole('navigation', { name: 'Main' }).isVisible()).resolves.toBe(false);
      await shot('31-phone-files', small);
      await small.getByRole('button', { name: 'Menu' }).click();
      // Chosen with the keyboard: the menu folds away with the link, and the focus goes to the new page's heading.
      await small.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Upload' }).focus();
      await small.keyboard.press('Enter');
      await small.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
      await expect.poll(() => small.evaluate("(() => { const e = document.activeElement; return e ? `${e.tagName} ${e.textContent?.trim()}` : ''; })()")).toBe('H1 Upload');
      await shot('32-phone-upload', small);
      // Nothing is wider than the screen.
      await expect(small.evaluate('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
    } finally {
      await phone.close();
    }
    expect(pageErrors).toEqual([]);
  });
});
