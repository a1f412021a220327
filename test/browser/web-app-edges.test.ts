import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { launchBrowser, screenshotDir, watchPage, type BrowserSession } from '../support/browser.ts';

/**
 * The web app where a tester found its edges (docs/web.md): the last page of the file list emptied,
 * a date in the address that is no date, a page whose code fails to load, and leaving the Upload
 * page while files are still going up.
 */
const PASSWORD = 'correct horse battery';

describe('the web app at its edges', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let page: Page;
  let owner: Awaited<ReturnType<typeof signUp>>;
  const problems: string[] = [];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-browser-edges-'));

  const shot = async (name: string) => {
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true, animations: 'disabled' });
  };
  const nav = () => page.getByRole('navigation', { name: 'Main' });
  const names = async (search: string) => ((await owner.get(`/api/files?search=${encodeURIComponent(search)}`)).body as { data: Array<{ name: string }> }).data.map((f) => f.name);

  beforeAll(async () => {
    fs.mkdirSync(screenshotDir, { recursive: true });
    // 25 files are made for a second page of the list: more than the upload-start limit's 30 a minute allows with the rest.
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '1000' });
    owner = await signUp(server.baseUrl, 'eve@example.test', PASSWORD);
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    watchPage(page, problems);
    await page.goto(`${server.baseUrl}/app/signin`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('emptying the last page of the list moves to the page before it, and never says there are no files', async () => {
    for (let i = 1; i <= 25; i++) {
      expect((await uploadFile(owner, `note-${String(i).padStart(2, '0')}.txt`, `note ${i}\n`)).status).toBe(200);
    }
    // Whether the empty state shows at any moment, while files remain.
    const watchEmpty = () =>
      page.evaluate(`(() => {
        window.__saidEmpty = false;
        new MutationObserver(() => {
          if (document.querySelector('.empty')) window.__saidEmpty = true;
        }).observe(document.body, { childList: true, subtree: true, characterData: true });
      })()`);
    const cards = page.getByTestId('file-card');
    const pages = page.getByRole('navigation', { name: 'Pages' });

    // Every file of the last page (one of 25), selected and deleted together.
    await page.goto(`${server.baseUrl}/app/files?page=2`);
    await watchEmpty();
    await pages.getByText('Page 2 of 2').waitFor();
    await expect.poll(() => cards.count()).toBe(1);
    await page.getByLabel('Select all on this page').check();
    await page.getByRole('region', { name: 'Selected files' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: 'Delete files' }).getByRole('button', { name: 'Delete 1' }).click();
    await page.getByText('24 files', { exact: true }).waitFor();
    await pages.getByText('Page 1 of 1').waitFor({ timeout: 5_000 });
    expect(new URL(page.url()).searchParams.get('page')).toBeNull();
    await expect.poll(() => cards.count()).toBe(24);
    expect(await page.evaluate('window.__saidEmpty')).toBe(false);

    // The only file of the last page, deleted from its card.
    expect((await uploadFile(owner, 'note-26.txt', 'note 26\n')).status).toBe(200);
    await page.goto(`${server.baseUrl}/app/files?page=2`);
    await watchEmpty();
    await pages.getByText('Page 2 of 2').waitFor();
    await expect.poll(() => cards.count()).toBe(1);
    await cards.getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('dialog', { name: 'Delete file' }).getByRole('button', { name: 'Delete' }).click();
    await pages.getByText('Page 1 of 1').waitFor({ timeout: 5_000 });
    expect(new URL(page.url()).searchParams.get('page')).toBeNull();
    await expect.poll(() => cards.count()).toBe(24);
    expect(await page.evaluate('window.__saidEmpty')).toBe(false);

    // A page far past the end, from a bookmark, lands on the last one.
    await page.goto(`${server.baseUrl}/app/files?page=9&limit=48`);
    await pages.getByText('Page 1 of 1').waitFor({ timeout: 5_000 });
    expect(new URL(page.url()).searchParams.get('page')).toBeNull();
    expect(new URL(page.url()).searchParams.get('limit')).toBe('48');
    await shot('edges-01-last-page-emptied');
  });

  test('a date in the address that is no real day is ignored, not a crash', async () => {
    const listRequest = () => page.waitForRequest((request) => new URL(request.url()).pathname === '/api/files');
    for (const bad of ['from=2026-13-45', 'from=yesterday', 'from=2026-1-1', 'to=2026-02-30']) {
      const read = listRequest();
      await page.goto(`${server.baseUrl}/app/files?${bad}`);
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor({ timeout: 5_000 });
      const sent = new URL((await read).url()).searchParams;
      // Not sent at all: 2026-02-30 is not rolled over to 2 March.
      expect(sent.get('dateFrom'), bad).toBeNull();
      expect(sent.get('dateTo'), bad).toBeNull();
      await expect.poll(() => page.getByTestId('file-card').count()).toBe(24);
      expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe('');
      expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe('');
    }
    // A real day still filters.
    const read = listRequest();
    await page.goto(`${server.baseUrl}/app/files?from=2024-02-29`);
    expect(new URL((await read).url()).searchParams.get('dateFrom')).toBe(new Date('2024-02-29T00:00:00').toISOString());
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe('2024-02-29');
    expect(problems).toEqual([]);
  });

  test('a page that cannot be loaded or shown keeps the app around it and offers to reload', async () => {
    await page.goto(`${server.baseUrl}/app/files`);
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();

    // After a redeploy, the old page chunk is gone: the app says it was updated.
    await page.route(/\/assets\/Links-[^/]+\.js$/, (route) => route.fulfill({ status: 404, contentType: 'text/plain', body: 'Not found' }));
    await nav().getByRole('link', { name: 'Short links' }).click();
    const fallback = page.getByRole('alert').filter({ hasText: 'Hoard has been updated' });
    await fallback.waitFor({ timeout: 5_000 });
    await expect(page.getByRole('button', { name: 'Reload' }).isVisible()).resolves.toBe(true);
    await expect(nav().isVisible()).resolves.toBe(true);
    await shot('edges-02-page-chunk-missing');

    // Another page still opens from the menu.
    await nav().getByRole('link', { name: 'Files' }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();

    // A page that fails while it is shown: a plain message, the same Reload.
    await page.route(/\/assets\/Account-[^/]+\.js$/, (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: 'throw new Error("Broken on purpose");' }));
    await nav().getByRole('link', { name: 'Account' }).click();
    await page.getByRole('alert').filter({ hasText: 'Something went wrong' }).waitFor({ timeout: 5_000 });
    await expect(nav().isVisible()).resolves.toBe(true);

    // Reload fetches the app afresh.
    await page.unroute(/\/assets\/Links-[^/]+\.js$/);
    await page.unroute(/\/assets\/Account-[^/]+\.js$/);
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await nav().getByRole('link', { name: 'Short links' }).click();
    await page.getByRole('heading', { name: 'Short links', level: 1 }).waitFor();
    expect(problems).toEqual([]);
  });

  test('leaving the Upload page while a file goes up asks first; staying lets it finish, leaving cancels it', async () => {
    await page.goto(`${server.baseUrl}/app/files`);
    await nav().getByRole('link', { name: 'Upload' }).click();
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    // About 1 MiB/s, so the 8 MiB file is still going up while the menu is used.
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    const throttle = (bytesPerSecond: number) => cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
    await throttle(1024 * 1024);
    const leave = page.getByRole('dialog', { name: 'Leave this page' });
    // Files on disk: the browser reads them itself, rather than being sent 8 MiB through the protocol.
    const onDisk = (name: string) => {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, name.length));
      return file;
    };
    try {
      await page.getByTestId('file-input').setInputFiles(onDisk('staying.bin'));
      await page.locator('[data-testid=upload-item][data-status=uploading]', { hasText: 'staying.bin' }).waitFor();

      // A menu link asks; Stay stays, and the upload goes on.
      await nav().getByRole('link', { name: 'Files' }).click();
      await leave.waitFor({ timeout: 5_000 });
      await expect(leave.textContent()).resolves.toContain('1 upload');
      await shot('edges-03-leave-upload');
      await leave.getByRole('button', { name: 'Stay' }).click();
      await leave.waitFor({ state: 'detached' });
      expect(new URL(page.url()).pathname).toBe('/app/upload');
      await page.locator('[data-testid=upload-item][data-status=uploading]', { hasText: 'staying.bin' }).waitFor();

      // So does Back.
      await page.goBack();
      await leave.waitFor({ timeout: 5_000 });
      expect(new URL(page.url()).pathname).toBe('/app/upload');
      await page.keyboard.press('Escape');
      await leave.waitFor({ state: 'detached' });
      expect(new URL(page.url()).pathname).toBe('/app/upload');
      await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();

      await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'staying.bin' }).waitFor({ timeout: 30_000 });
      expect(await names('staying')).toEqual(['staying.bin']);

      // Nothing running: the menu leaves without asking.
      await nav().getByRole('link', { name: 'Files' }).click();
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await expect(leave.count()).resolves.toBe(0);

      // Leaving confirmed: the upload is cancelled and no file is made.
      await nav().getByRole('link', { name: 'Upload' }).click();
      await page.getByTestId('file-input').setInputFiles(onDisk('leaving.bin'));
      await page.locator('[data-testid=upload-item][data-status=uploading]', { hasText: 'leaving.bin' }).waitFor();
      await nav().getByRole('link', { name: 'Files' }).click();
      await leave.getByRole('button', { name: 'Leave' }).click();
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    } finally {
      await throttle(-1);
      await cdp.detach();
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await names('leaving')).toEqual([]);
    expect(problems).toEqual([]);
  });
});
