import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { PNG_1X1, uploadFile } from '../support/uploads.ts';
import { launchBrowser, screenshotDir, watchPage, type BrowserSession } from '../support/browser.ts';

/**
 * The web app where a tester found its edges (docs/web.md): the last page of the file list emptied,
 * a date in the address that is no date, a page whose code fails to load, leaving the Upload
 * page while files are still going up, and the forms and lists of administration, short links,
 * account and security: what they send, what they say and where focus goes.
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

      // The questions are asked: the upload may now finish at full speed.
      await throttle(-1);
      await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'staying.bin' }).waitFor({ timeout: 30_000 });
      expect(await names('staying')).toEqual(['staying.bin']);

      // Cancel and Retry with the keyboard: one button whose word changes, so the focus stays on it;
      // once the upload is done, it is on the new link's Copy button.
      await throttle(1024 * 1024);
      await page.getByTestId('file-input').setInputFiles(onDisk('keyboard.bin'));
      const keyboardRow = (status: string) => page.locator(`[data-testid=upload-item][data-status=${status}]`, { hasText: 'keyboard.bin' });
      await keyboardRow('uploading').waitFor();
      await keyboardRow('uploading').getByRole('button', { name: 'Cancel the upload of keyboard.bin' }).focus();
      await page.keyboard.press('Enter');
      await keyboardRow('cancelled').waitFor();
      await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Retry the upload of keyboard.bin' });
      await throttle(-1);
      await page.keyboard.press('Enter');
      await keyboardRow('done').waitFor({ timeout: 30_000 });
      await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Copy link to keyboard.bin' });

      // Nothing running: the menu leaves without asking.
      await nav().getByRole('link', { name: 'Files' }).click();
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await expect(leave.count()).resolves.toBe(0);

      // Leaving confirmed: the upload is cancelled and no file is made.
      await nav().getByRole('link', { name: 'Upload' }).click();
      await throttle(1024 * 1024);
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

  test('a chunked upload given up frees its session: kept while Retry can use it, cancelled when removed or the page is left', async () => {
    await page.goto(`${server.baseUrl}/app/upload`);
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Network.enable');
    const throttle = (bytesPerSecond: number) => cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond });
    // Over 32 MiB, so it goes up in parts; at 4 MiB/s it is still going up when it is given up.
    const onDisk = (name: string) => {
      const file = path.join(tmp, name);
      fs.writeFileSync(file, Buffer.alloc(33 * 1024 * 1024, name.length));
      return file;
    };
    const openSessions = async (filename: string) =>
      (await server.ctx.db.selectFrom('chunkSessions').select('id').where('filename', '=', filename).where('state', '=', 'open').execute()).length;
    const row = (name: string, status: string) => page.locator(`[data-testid=upload-item][data-status=${status}]`, { hasText: name });
    /** Starts `name` going up in parts, and cancels it once its session is started. */
    const startThenCancel = async (name: string) => {
      await page.getByTestId('file-input').setInputFiles(onDisk(name));
      await row(name, 'uploading').getByText(/Uploading \d+ parts/).waitFor({ timeout: 30_000 });
      await row(name, 'uploading').getByRole('button', { name: `Cancel the upload of ${name}` }).click();
      await row(name, 'cancelled').waitFor();
      // Cancelled, the session stays for Retry, which sends only the parts missing.
      expect(await openSessions(name)).toBe(1);
    };
    try {
      await throttle(4 * 1024 * 1024);
      // Removed, no Retry can come: the session goes, and with it the room it held against the quota.
      await startThenCancel('given-up.bin');
      await page.getByRole('button', { name: 'Remove given-up.bin from the list' }).click();
      await expect.poll(() => openSessions('given-up.bin'), { timeout: 10_000 }).toBe(0);
      // So does Clear finished, which takes the cancelled rows away.
      await startThenCancel('cleared.bin');
      await page.getByRole('button', { name: 'Clear finished' }).click();
      await expect.poll(() => openSessions('cleared.bin'), { timeout: 10_000 }).toBe(0);

      // Leaving the page while one goes up cancels it, session and all.
      await page.getByTestId('file-input').setInputFiles(onDisk('left-behind.bin'));
      await row('left-behind.bin', 'uploading').getByText(/Uploading \d+ parts/).waitFor({ timeout: 30_000 });
      expect(await openSessions('left-behind.bin')).toBe(1);
      await nav().getByRole('link', { name: 'Files' }).click();
      await page.getByRole('dialog', { name: 'Leave this page' }).getByRole('button', { name: 'Leave' }).click();
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await expect.poll(() => openSessions('left-behind.bin'), { timeout: 10_000 }).toBe(0);
    } finally {
      await throttle(-1);
      await cdp.detach();
    }
    expect(problems).toEqual([]);
  });

  test('a large upload cut off by a reload goes on from its parts when the file is chosen again; a file changed since is sent whole', async () => {
    await page.goto(`${server.baseUrl}/app/upload`);
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    // What the page keeps in the browser's storage, per upload: the parts recorded with their digest.
    const keptParts = () =>
      page.evaluate(() =>
        Object.values(JSON.parse(globalThis.localStorage.getItem('hoard.chunkedUploads') ?? '{}') as Record<string, { parts: Array<[number, string, string]> }>).map(
          (kept) => kept.parts.filter(([, , digest]) => digest !== '').length,
        ),
      );
    // The parts sent, by number (a part sent again after a failure counts once).
    const partPuts = new Set<number>();
    const onRequest = (request: { url(): string; method(): string }) => {
      const part = /\/part\/(\d+)$/.exec(request.url());
      if (request.method() === 'PUT' && part) partPuts.add(Number(part[1]));
    };
    page.on('request', onRequest);
    // Closing or reloading a page with an upload running asks first: here, yes.
    const leaveAnyway = (dialog: { accept(): Promise<void> }) => void dialog.accept();
    page.on('dialog', leaveAnyway);
    const storedBytes = async (name: string) => {
      const row = await server.ctx.db.selectFrom('files').select('id').where('name', '=', name).executeTakeFirstOrThrow();
      const answer = await fetch(`${server.baseUrl}/api/files/${row.id}/download`, { headers: { cookie: owner.cookieHeader() } });
      expect(answer.status).toBe(200);
      return Buffer.from(await answer.arrayBuffer());
    };
    const openSessions = async (filename: string) =>
      (await server.ctx.db.selectFrom('chunkSessions').select('id').where('filename', '=', filename).where('state', '=', 'open').execute()).length;

    /** Starts uploading `file`, and reloads the page once its first four parts are recorded, the fifth held back. */
    const cutOff = async (file: string) => {
      const holdBack = () => {};
      await page.route(/\/part\/5$/, holdBack);
      await page.getByTestId('file-input').setInputFiles(file);
      // Slow beside the rest of the suite: four parts of 8 MiB sent and digested.
      await expect.poll(async () => (await keptParts())[0] ?? 0, { timeout: 90_000 }).toBe(4);
      await page.reload();
      await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
      await page.unroute(/\/part\/5$/, holdBack);
      const [kept] = await keptParts();
      expect(kept).toBe(4);
      return kept!;
    };
    try {
      // 33 MiB: five parts of at most 8 MiB, each different.
      const resumed = path.join(tmp, 'resumed.bin');
      const original = Buffer.alloc(33 * 1024 * 1024);
      for (let i = 0; i < original.length; i += 4) original.writeUInt32LE(i, i);
      fs.writeFileSync(resumed, original);
      const kept = await cutOff(resumed);
      const unfinished = page.getByTestId('interrupted-uploads');
      await expect(unfinished.getByRole('listitem').textContent()).resolves.toContain(`resumed.bin33 MiB · ${kept} of 5 parts sent`);
      expect(await openSessions('resumed.bin')).toBe(1);

      // The same file chosen again: only the parts not kept go up, and the file is whole.
      partPuts.clear();
      await page.getByTestId('file-input').setInputFiles(resumed);
      await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'resumed.bin' }).waitFor({ timeout: 60_000 });
      expect([...partPuts]).toEqual([5]);
      expect((await storedBytes('resumed.bin')).equals(original)).toBe(true);
      expect(await keptParts()).toEqual([]);
      await expect.poll(() => unfinished.count()).toBe(0);
      expect(await openSessions('resumed.bin')).toBe(0);

      // With a password: the browser keeps only that there was one. Typed again (another one here),
      // the upload goes on from its parts, and the file opens with the password typed last.
      const locked = path.join(tmp, 'locked.bin');
      fs.writeFileSync(locked, original);
      const password = async (value: string) => {
        const more = page.getByTestId('upload-more');
        if ((await more.getAttribute('open')) === null) await more.locator('summary').click();
        await more.getByLabel('Password').fill(value);
      };
      await password('first secret');
      await cutOff(locked);
      expect(JSON.stringify(await page.evaluate(() => globalThis.localStorage.getItem('hoard.chunkedUploads')))).not.toContain('first secret');
      await expect(unfinished.getByRole('listitem').textContent()).resolves.toContain('4 of 5 parts sent · with a password: type one again first');
      await password('second secret');
      partPuts.clear();
      await page.getByTestId('file-input').setInputFiles(locked);
      await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'locked.bin' }).waitFor({ timeout: 60_000 });
      expect([...partPuts]).toEqual([5]);
      expect((await storedBytes('locked.bin')).equals(original)).toBe(true);
      const lockedId = (await server.ctx.db.selectFrom('files').select('id').where('name', '=', 'locked.bin').executeTakeFirstOrThrow()).id;
      const unlock = (value: string) => fetch(`${server.baseUrl}/api/files/${lockedId}/unlock`, { method: 'POST', headers: { 'content-type': 'application/json', origin: server.baseUrl }, body: JSON.stringify({ password: value }) });
      expect((await unlock('first secret')).status).toBe(403);
      expect((await unlock('second secret')).status).toBe(204);
      await password('');

      // Rewritten since, with the same size and modification time: every part goes up again.
      const rewritten = path.join(tmp, 'rewritten.bin');
      fs.writeFileSync(rewritten, original);
      // A whole second: a time in milliseconds set back through utimes can come back a millisecond
      // off (seconds as a float), and the file would be another one to the page.
      const mtime = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
      fs.utimesSync(rewritten, mtime, mtime);
      await cutOff(rewritten);
      const changed = Buffer.from(original);
      for (let i = 0; i < changed.length; i += 4096) changed[i] = 0xff;
      fs.writeFileSync(rewritten, changed);
      fs.utimesSync(rewritten, mtime, mtime);
      partPuts.clear();
      await page.getByTestId('file-input').setInputFiles(rewritten);
      await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'rewritten.bin' }).waitFor({ timeout: 60_000 });
      expect([...partPuts].sort()).toEqual([1, 2, 3, 4, 5]);
      expect((await storedBytes('rewritten.bin')).equals(changed)).toBe(true);
      expect(await keptParts()).toEqual([]);

      // Two tabs: the one resuming a kept upload claims it, so the other neither lists it nor sends
      // into its session; the same file chosen there goes up whole, in a session of its own.
      const twice = path.join(tmp, 'twice.bin');
      fs.writeFileSync(twice, original);
      await cutOff(twice);
      const tab = await browser.context.newPage();
      watchPage(tab, problems);
      try {
        const holdBack = () => {};
        await tab.route(/\/part\/5$/, holdBack);
        await tab.goto(`${server.baseUrl}/app/upload`);
        await tab.getByTestId('interrupted-uploads').waitFor();
        await tab.getByTestId('file-input').setInputFiles(twice);
        await expect.poll(() => unfinished.count(), { timeout: 20_000 }).toBe(0);
        partPuts.clear();
        await page.getByTestId('file-input').setInputFiles(twice);
        await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'twice.bin' }).waitFor({ timeout: 60_000 });
        expect([...partPuts].sort()).toEqual([1, 2, 3, 4, 5]);
        expect(await openSessions('twice.bin')).toBe(1);
        await tab.unroute(/\/part\/5$/, holdBack);
        await tab.locator('[data-testid=upload-item][data-status=done]', { hasText: 'twice.bin' }).waitFor({ timeout: 60_000 });
      } finally {
        await tab.close();
      }
      const copies = await server.ctx.db.selectFrom('files').select(['id', 'name']).where('name', 'like', 'twice%').execute();
      expect(copies).toHaveLength(2);
      for (const copy of copies) expect((await storedBytes(copy.name)).equals(original), copy.name).toBe(true);
      expect(await openSessions('twice.bin')).toBe(0);
      expect(await keptParts()).toEqual([]);

      // Discarded: the session goes, and nothing is kept.
      const discarded = path.join(tmp, 'discarded.bin');
      fs.writeFileSync(discarded, original);
      await cutOff(discarded);
      expect(await openSessions('discarded.bin')).toBe(1);
      await page.getByRole('button', { name: 'Discard the unfinished upload of discarded.bin' }).click();
      await expect.poll(() => unfinished.count()).toBe(0);
      await expect.poll(() => openSessions('discarded.bin')).toBe(0);
      expect(await keptParts()).toEqual([]);
    } finally {
      page.off('request', onRequest);
      page.off('dialog', leaveAnyway);
    }
    expect(problems).toEqual([]);
  });

  /** A browser of its own, signed in as `email`, on `path`. */
  const signedIn = async (email: string, password: string, path: string) => {
    const session = await launchBrowser();
    const other = session.context.pages()[0] ?? (await session.context.newPage());
    watchPage(other, problems);
    await other.goto(`${server.baseUrl}/app/signin`);
    await other.getByLabel('Email').fill(email);
    await other.getByLabel('Password').fill(password);
    await other.getByRole('button', { name: 'Sign in', exact: true }).click();
    await other.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    await other.goto(`${server.baseUrl}${path}`);
    return { session, page: other };
  };
  const createAccount = async (email: string, extra: Record<string, unknown> = {}) => {
    const answer = await owner.post('/api/users', { email, password: PASSWORD, emailVerified: true, ...extra });
    expect(answer.status, answer.text).toBe(201);
    return answer.body.data.user.id as string;
  };
  const accountOf = async (id: string) => ((await owner.get('/api/users')).body.data.users as Array<{ id: string; name: string; quotaBytes: number | null }>).find((u) => u.id === id)!;
  /** What has focus: its accessible name or text, and its tag. */
  const focused = () =>
    page.evaluate(`(() => {
      const element = document.activeElement;
      return { tag: element?.tagName ?? '', name: element?.getAttribute('aria-label') ?? element?.textContent?.trim() ?? '' };
    })()`) as Promise<{ tag: string; name: string }>;
  /** Presses a row's button with the keyboard and confirms: Enter, Tab from Cancel to the action, Enter. */
  const remove = async (label: string, confirmLabel: string) => {
    await page.getByRole('button', { name: label, exact: true }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    // The confirmation opens on Cancel; its action is the next control.
    await expect.poll(async () => (await focused()).name).toBe('Cancel');
    await page.keyboard.press('Tab');
    await expect.poll(async () => (await focused()).name).toBe(confirmLabel);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
  };
  const hasFocus = (locator: Locator) => locator.evaluate((element: { ownerDocument: { activeElement: unknown } }) => element === element.ownerDocument.activeElement);

  test('an account manager without quotas.bypass renames accounts, their own too, and quotas keep their bytes', async () => {
    const role = await owner.post('/api/roles', { name: 'Account managers', permissions: ['users.manage'] });
    expect(role.status, role.text).toBe(201);
    const managerEmail = uniqueEmail('manager');
    const managerId = await createAccount(managerEmail, { roleIds: [role.body.data.role.id] });
    const unlimitedId = await createAccount(uniqueEmail('unlimited'));
    expect((await owner.patch(`/api/users/${unlimitedId}`, { quotaBytes: 0 })).status).toBe(200);
    const largeEmail = uniqueEmail('large');
    const largeId = await createAccount(largeEmail);
    expect((await owner.patch(`/api/users/${largeId}`, { quotaBytes: 2_000_000_000 })).status).toBe(200);

    const manager = await signedIn(managerEmail, PASSWORD, '/app/admin?tab=users');
    try {
      const other = manager.page;
      const rename = async (email: string, name: string) => {
        await other.getByRole('button', { name: `Edit ${email}` }).click();
        const dialog = other.getByRole('dialog', { name: `Edit ${email}` });
        // The first field has focus, not the dialog's Close button.
        await expect.poll(() => hasFocus(dialog.getByLabel('Name'))).toBe(true);
        await dialog.getByLabel('Name').fill(name);
        return dialog;
      };

      // Their own account: the quota is shown, not offered for a change that can only be refused.
      let dialog = await rename(managerEmail, 'Manager M');
      await expect(dialog.getByRole('spinbutton').count()).resolves.toBe(0);
      await expect(dialog.textContent()).resolves.toContain('quotas.bypass');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect((await accountOf(managerId)).name).toBe('Manager M');

      // An account with no quota: renaming it does not try to set that quota again.
      const unlimitedEmail = ((await owner.get('/api/users')).body.data.users as Array<{ id: string; email: string }>).find((u) => u.id === unlimitedId)!.email;
      dialog = await rename(unlimitedEmail, 'Unlimited U');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await accountOf(unlimitedId)).toMatchObject({ name: 'Unlimited U', quotaBytes: 0 });

      // A quota of 2,000,000,000 bytes, not a whole number of MiB, stays exactly that.
      dialog = await rename(largeEmail, 'Large L');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });
      expect(await accountOf(largeId)).toMatchObject({ name: 'Large L', quotaBytes: 2_000_000_000 });
    } finally {
      await manager.session.close();
    }
    expect(problems).toEqual([]);
  });

  test('instance settings send the sizes that were not edited unchanged, and a small limit can be saved', async () => {
    const before = (await owner.get('/api/settings')).body.data as Record<string, unknown>;
    try {
      expect((await owner.patch('/api/settings', { maxUploadSizeBytes: 1_000_000_000, defaultQuotaBytes: 5_000_000_000, ocrEnabled: false })).status).toBe(200);
      await page.goto(`${server.baseUrl}/app/admin?tab=settings`);
      const form = page.getByRole('form', { name: 'Instance settings' });
      await form.getByRole('switch', { name: 'Recognise text in images (OCR)' }).check();
      await form.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').getByText('Settings saved').waitFor();
      expect((await owner.get('/api/settings')).body.data).toMatchObject({ maxUploadSizeBytes: 1_000_000_000, defaultQuotaBytes: 5_000_000_000, ocrEnabled: true });

      // 4000 bytes is under 0.01 MiB: still shown as more than nothing, and other settings still save.
      expect((await owner.patch('/api/settings', { maxUploadSizeBytes: 4000 })).status).toBe(200);
      await page.reload();
      await form.getByRole('switch', { name: 'Recognise text in images (OCR)' }).uncheck();
      expect(Number(await form.getByLabel('Maximum file size (MiB)').inputValue())).toBeGreaterThan(0);
      await form.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').getByText('Settings saved').waitFor({ timeout: 5_000 });
      expect((await owner.get('/api/settings')).body.data).toMatchObject({ maxUploadSizeBytes: 4000, defaultQuotaBytes: 5_000_000_000, ocrEnabled: false });

      // A size that is edited is sent.
      await form.getByLabel('Maximum file size (MiB)').fill('2');
      await form.getByRole('button', { name: 'Save settings' }).click();
      await expect.poll(async () => (await owner.get('/api/settings')).body.data.maxUploadSizeBytes).toBe(2 * 1024 * 1024);
    } finally {
      await owner.patch('/api/settings', { maxUploadSizeBytes: before.maxUploadSizeBytes, defaultQuotaBytes: before.defaultQuotaBytes, ocrEnabled: before.ocrEnabled });
    }
    expect(problems).toEqual([]);
  });

  test('an account without profile.update can still change its password and its email', async () => {
    const roles = (await owner.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null; permissions: string[] }>;
    const everyone = roles.find((r) => r.systemKey === 'everyone')!;
    expect(everyone.permissions).toContain('profile.update');
    const memberEmail = uniqueEmail('member');
    await createAccount(memberEmail);
    expect((await owner.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== 'profile.update') })).status).toBe(200);
    try {
      const member = await signedIn(memberEmail, PASSWORD, '/app/account');
      try {
        const other = member.page;
        await other.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
        await expect(other.getByRole('form', { name: 'Account settings' }).count()).resolves.toBe(0);
        const form = other.getByRole('form', { name: 'Change password' });
        await form.getByLabel('Current password').fill(PASSWORD);
        await form.getByLabel('New password', { exact: true }).fill('a brand new password');
        await form.getByLabel('Repeat the new password').fill('a brand new password');
        await form.getByRole('button', { name: 'Change password' }).click();
        await other.getByRole('status').getByText(/Password changed/).waitFor();
        // And its address, mistyped at sign-up.
        const email = other.getByRole('form', { name: 'Change email' });
        await email.getByLabel('New email').fill(`fixed.${memberEmail}`);
        await email.getByLabel('Current password').fill('a brand new password');
        await email.getByRole('button', { name: 'Change email' }).click();
        await other.getByRole('status').getByText(/Email changed/).waitFor();
        await other.getByText(`fixed.${memberEmail}`).first().waitFor();
      } finally {
        await member.session.close();
      }
      const login = await new Client(server.baseUrl).post('/api/auth/login', { email: `fixed.${memberEmail}`, password: 'a brand new password' });
      expect(login.status, login.text).toBe(200);
    } finally {
      await owner.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
    expect(problems).toEqual([]);
  });

  test('removing a row with the keyboard leaves focus on the next row, else the previous one, else the heading', async () => {
    // Short links: the next row's Delete, then the previous one's, then the heading.
    const codes: string[] = [];
    for (const n of [1, 2, 3]) codes.unshift((await owner.post('/api/urls', { url: `https://example.com/${n}` })).body.data.shortCode as string);
    await page.goto(`${server.baseUrl}/app/links`);
    const rows = page.getByTestId('short-link-row');
    await expect.poll(() => rows.count()).toBe(3);
    await remove(`Delete /u/${codes[0]}`, 'Delete');
    await expect.poll(() => rows.count()).toBe(2);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: `Delete /u/${codes[1]}` });
    await remove(`Delete /u/${codes[2]}`, 'Delete');
    await expect.poll(() => rows.count()).toBe(1);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: `Delete /u/${codes[1]}` });
    // Repeated buttons name their item.
    await expect(page.getByRole('button', { name: `Copy /u/${codes[1]}` }).count()).resolves.toBe(1);
    await remove(`Delete /u/${codes[1]}`, 'Delete');
    await page.getByText('No short links yet.').waitFor();
    await expect.poll(focused).toEqual({ tag: 'H1', name: 'Short links' });

    // Invites, made in the form (which says so), then withdrawn.
    await page.goto(`${server.baseUrl}/app/admin?tab=invites`);
    for (let i = 0; i < 2; i++) {
      await page.getByRole('button', { name: 'Create invite' }).click();
      await page.getByRole('status').getByText('Invite created').first().waitFor();
      await expect.poll(() => page.locator('tbody tr').count()).toBe(i + 1);
    }
    const invites = (await owner.get('/api/invites')).body.data.invites as Array<{ code: string }>;
    await expect(page.getByRole('button', { name: `Copy invite link ${invites[0]!.code}` }).count()).resolves.toBe(1);
    await remove(`Withdraw invite ${invites[0]!.code}`, 'Withdraw');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: `Withdraw invite ${invites[1]!.code}` });

    // Tokens: a revoked token stays listed without its buttons; focus goes on to the next one's Revoke.
    for (const name of ['revoked first', 'revoked second']) expect((await owner.post('/api/tokens', { name, scopes: ['files:read'] })).status).toBe(201);
    await page.goto(`${server.baseUrl}/app/integrations`);
    const tokenRows = page.getByTestId('token-row');
    await tokenRows.filter({ hasText: 'revoked second' }).waitFor();
    // This file's server has no other token: the two are the list's active rows, in its order.
    const active = async () => (await tokenRows.allTextContents()).filter((text) => text.includes('Revoke')).map((text) => (text.includes('revoked first') ? 'revoked first' : text.includes('revoked second') ? 'revoked second' : 'other'));
    const [firstShown, secondShown, ...others] = await active();
    expect(others).toEqual([]);
    await remove(`Revoke ${firstShown}`, 'Revoke');
    await page.getByRole('status').getByText('Token revoked').waitFor();
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: `Revoke ${secondShown}` });
    // With the next row revoked already (no buttons), focus goes on to the first row after it that has one.
    const made: Record<string, string> = {};
    for (const name of ['skip one', 'skip two', 'skip three']) made[name] = (await owner.post('/api/tokens', { name, scopes: ['files:read'] })).body.data.token.id;
    await page.reload();
    await tokenRows.filter({ hasText: 'skip three' }).waitFor();
    const order = (await tokenRows.allTextContents()).map((text) => ['skip one', 'skip two', 'skip three'].find((name) => text.includes(name))).filter((name): name is string => name !== undefined);
    expect(order).toHaveLength(3);
    expect((await owner.delete(`/api/tokens/${made[order[1]!]}`)).status).toBe(204);
    await page.reload();
    await tokenRows.filter({ hasText: order[0]! }).getByRole('button', { name: `Revoke ${order[0]}` }).waitFor();
    await remove(`Revoke ${order[0]}`, 'Revoke');
    await page.getByRole('status').getByText('Token revoked').first().waitFor();
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: `Revoke ${order[2]}` });

    // Two tokens of one name (a ShareX token per machine): their buttons, and the question each asks,
    // say which one they act on.
    for (let i = 0; i < 2; i++) expect((await owner.post('/api/tokens', { name: 'ShareX', scopes: ['files:upload'] })).status).toBe(201);
    await page.reload();
    const revokeShareX = page.getByRole('button', { name: /^Revoke ShareX \(made .+\)$/ });
    await expect.poll(() => revokeShareX.count()).toBe(2);
    const shareXNames = await revokeShareX.evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label')));
    expect(new Set(shareXNames).size).toBe(2);
    await page.getByRole('button', { name: shareXNames[1]! }).click();
    const question = page.getByRole('dialog', { name: 'Revoke token' });
    await question.getByText(`Revoke “${shareXNames[1]!.slice('Revoke '.length)}”?`, { exact: false }).waitFor();
    await question.getByRole('button', { name: 'Cancel' }).click();

    // Accounts: the next account's Delete.
    const first = uniqueEmail('first');
    await createAccount(first);
    await createAccount(uniqueEmail('second'));
    await page.goto(`${server.baseUrl}/app/admin?tab=users`);
    // Listed oldest first: the administrator, who has no Delete of their own, is never next to these.
    const users = (await owner.get('/api/users')).body.data.users as Array<{ email: string }>;
    const index = users.findIndex((u) => u.email === first);
    const after = users[index + 1] ?? users[index - 1];
    await remove(`Delete ${first}`, 'Delete');
    await page.getByText(first).waitFor({ state: 'detached' });
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: `Delete ${after!.email}` });

    // A signed-in browser signed out from the Security page.
    const elsewhere = new Client(server.baseUrl);
    expect((await elsewhere.request('POST', '/api/auth/login', { json: { email: owner.email, password: PASSWORD }, headers: { 'user-agent': 'Elsewhere browser' } })).status).toBe(200);
    await page.goto(`${server.baseUrl}/app/security`);
    const button = page.getByRole('button', { name: /^Sign out Elsewhere browser/ });
    await button.focus();
    await page.keyboard.press('Enter');
    await button.waitFor({ state: 'detached' });
    await expect.poll(async () => (await focused()).tag).not.toBe('BODY');

    // "Sign out everywhere else" is disabled once no other browser is left: focus goes to the heading.
    const everywhere = page.getByRole('button', { name: 'Sign out everywhere else' });
    await everywhere.focus();
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await focused()).name).toBe('Cancel');
    await page.keyboard.press('Tab');
    await expect.poll(async () => (await focused()).name).toBe('Sign out');
    await page.keyboard.press('Enter');
    await expect.poll(() => everywhere.isDisabled()).toBe(true);
    await expect.poll(focused).toEqual({ tag: 'H1', name: 'Security' });
    // The test's own client was among the browsers signed out.
    expect((await owner.post('/api/auth/login', { email: owner.email, password: PASSWORD })).status).toBe(200);
    expect(problems).toEqual([]);
  });

  test("the bulk bar keeps the keyboard's focus: on Move after a move, on the heading once the bar goes", async () => {
    const folder = await owner.post('/api/folders', { name: 'Bulk target' });
    expect(folder.status, folder.text).toBe(201);
    for (const name of ['bulk-a.txt', 'bulk-b.txt']) expect((await uploadFile(owner, name, `${name}\n`)).status).toBe(200);
    await page.goto(`${server.baseUrl}/app/files?search=bulk-`);
    await expect.poll(() => page.getByTestId('file-card').count()).toBe(2);
    const bar = page.getByRole('region', { name: 'Selected files' });
    await page.getByLabel('Select bulk-a.txt').check();
    await page.getByLabel('Select bulk-b.txt').check();
    // A move empties the folder choice; the button stays focused, marked unusable until another is chosen.
    await bar.getByLabel('Move to folder').selectOption({ label: 'Bulk target' });
    await bar.getByRole('button', { name: 'Move', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Moved: 2 files').waitFor();
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Move' });
    await expect(bar.getByRole('button', { name: 'Move', exact: true }).getAttribute('aria-disabled')).resolves.toBe('true');
    await page.keyboard.press('Enter');
    // Clear selection takes the bar away: focus goes to the heading, not the page's body.
    await bar.getByRole('button', { name: 'Clear selection' }).focus();
    await page.keyboard.press('Enter');
    await bar.waitFor({ state: 'detached' });
    await expect.poll(focused).toEqual({ tag: 'H1', name: 'Files' });
    // A file deleted meanwhile in another tab, deleted from its card: what was asked for is done, and
    // said so, not "File not found" with the card left standing.
    const gone = await uploadFile(owner, 'bulk-gone.txt', 'gone\n');
    expect(gone.status).toBe(200);
    await page.goto(`${server.baseUrl}/app/files?search=bulk-gone`);
    const goneCard = page.getByTestId('file-card').filter({ hasText: 'bulk-gone.txt' });
    await goneCard.waitFor();
    expect((await owner.delete(`/api/files/${gone.body.data.downloadUrl.split('/').at(-2)}`)).status).toBe(204);
    await goneCard.getByRole('button', { name: /^Delete bulk-gone\.txt/ }).click();
    await page.getByRole('dialog', { name: 'Delete file' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').getByText('Deleted bulk-gone.txt').waitFor();
    await goneCard.waitFor({ state: 'detached' });
    await page.goto(`${server.baseUrl}/app/files?search=bulk-`);
    await bar.waitFor({ state: 'detached' });
    // So does deleting the selection. One of the files was deleted meanwhile in another tab: what
    // was asked for is done, and said so, not "1 of 2 failed (File not found)".
    await page.getByLabel('Select bulk-a.txt').check();
    await page.getByLabel('Select bulk-b.txt').check();
    const elsewhere = ((await owner.get('/api/files?search=bulk-a')).body.data as Array<{ id: string }>)[0]!.id;
    expect((await owner.delete(`/api/files/${elsewhere}`)).status).toBe(204);
    await bar.getByRole('button', { name: 'Delete', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await focused()).name).toBe('Cancel');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await bar.waitFor({ state: 'detached' });
    await page.getByRole('status').getByText('Deleted: 2 files').waitFor();
    await expect.poll(focused).toEqual({ tag: 'H1', name: 'Files' });
    await expect.poll(() => page.getByTestId('file-card').count()).toBe(0);
    expect((await owner.delete(`/api/folders/${folder.body.data.folder.id}`)).status).toBe(204);
    expect(problems).toEqual([]);
  });

  test('the bulk bar adds a tag to every selected file and takes it away again, keeping each file its other tags', async () => {
    const tagId = async (name: string) => {
      const made = await owner.post('/api/tags', { name });
      expect(made.status, made.text).toBe(201);
      return made.body.data.tag.id as string;
    };
    const [screens, kept] = [await tagId('Screens'), await tagId('Kept')];
    const tagged = await uploadFile(owner, 'tagbulk-a.txt', 'a\n', { fields: { tagIds: JSON.stringify([screens, kept]) } });
    expect(tagged.status, tagged.text).toBe(200);
    expect((await uploadFile(owner, 'tagbulk-b.txt', 'b\n')).status).toBe(200);
    const tagsOf = async () =>
      Object.fromEntries(((await owner.get('/api/files?search=tagbulk-')).body.data as Array<{ name: string; tags: Array<{ name: string }> }>).map((file) => [file.name, file.tags.map((tag) => tag.name)]));

    await page.goto(`${server.baseUrl}/app/files?search=tagbulk-`);
    await expect.poll(() => page.getByTestId('file-card').count()).toBe(2);
    const bar = page.getByRole('region', { name: 'Selected files' });
    await page.getByLabel('Select tagbulk-a.txt').check();
    await page.getByLabel('Select tagbulk-b.txt').check();
    // Without a tag chosen the buttons are marked unusable and do nothing.
    await expect(bar.getByRole('button', { name: 'Add tag' }).getAttribute('aria-disabled')).resolves.toBe('true');
    await bar.getByLabel('Tag to add or remove').selectOption({ label: 'Screens' });
    await bar.getByRole('button', { name: 'Add tag' }).click();
    await page.getByRole('status').getByText('Tagged Screens: 2 files').waitFor();
    await expect.poll(tagsOf).toEqual({ 'tagbulk-a.txt': ['Kept', 'Screens'], 'tagbulk-b.txt': ['Screens'] });
    await expect(bar.getByLabel('Tag to add or remove').inputValue()).resolves.toBe('');

    await bar.getByLabel('Tag to add or remove').selectOption({ label: 'Screens' });
    await bar.getByRole('button', { name: 'Remove tag' }).click();
    await page.getByRole('status').getByText('Untagged Screens: 2 files').waitFor();
    await expect.poll(tagsOf).toEqual({ 'tagbulk-a.txt': ['Kept'], 'tagbulk-b.txt': [] });

    await bar.getByRole('button', { name: 'Clear selection' }).click();
    for (const file of (await owner.get('/api/files?search=tagbulk-')).body.data as Array<{ id: string }>) expect((await owner.delete(`/api/files/${file.id}`)).status).toBe(204);
    for (const id of [screens, kept]) expect((await owner.delete(`/api/tags/${id}`)).status).toBe(204);
    expect(problems).toEqual([]);
  });

  test('Back undoes the filters chosen one at a time; what is typed makes no step of its own', async () => {
    await page.goto(`${server.baseUrl}/app/upload`);
    await page.goto(`${server.baseUrl}/app/files`);
    const sort = page.getByLabel('Sort by');
    const search = page.getByPlaceholder('Search names and text…');
    const at = () => new URL(page.url()).search;
    await sort.selectOption({ label: 'Largest first' });
    await expect.poll(at).toBe('?sortBy=largest');
    await sort.selectOption({ label: 'Name' });
    await expect.poll(at).toBe('?sortBy=name');
    await search.pressSequentially('back', { delay: 20 });
    await expect.poll(at).toBe('?sortBy=name&search=back');
    // Clear filters keeps the order, which is no filter.
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(at).toBe('?sortBy=name');

    await page.goBack();
    await expect.poll(at).toBe('?sortBy=name&search=back');
    await expect.poll(() => search.inputValue()).toBe('back');
    // The search, typed, replaced the step it was typed in: one Back goes to before the sort by name.
    await page.goBack();
    await expect.poll(at).toBe('?sortBy=largest');
    await expect.poll(() => sort.inputValue()).toBe('largest');
    await expect.poll(() => search.inputValue()).toBe('');
    await page.goBack();
    await expect.poll(at).toBe('');
    await expect.poll(() => sort.inputValue()).toBe('newest');
    await page.goBack();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/app/upload');
    expect(problems).toEqual([]);
  });

  test('deleting a tag or a folder with the keyboard leaves focus on the next one, else the previous one, else the heading', async () => {
    // Tags, listed by name: Home, Play, Work.
    expect((await owner.get('/api/tags')).body.data.tags).toEqual([]);
    for (const name of ['Work', 'Home', 'Play']) expect((await owner.post('/api/tags', { name })).status).toBe(201);
    await page.goto(`${server.baseUrl}/app/organisation?tab=tags`);
    const tags = page.getByRole('list', { name: 'Tags' }).getByRole('listitem');
    await expect.poll(() => tags.count()).toBe(3);
    await remove('Delete tag Play', 'Delete');
    await expect.poll(() => tags.count()).toBe(2);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Delete tag Work' });
    await remove('Delete tag Work', 'Delete');
    await expect.poll(() => tags.count()).toBe(1);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Delete tag Home' });
    await remove('Delete tag Home', 'Delete');
    await page.getByText('No tags yet.').waitFor();
    await expect.poll(focused).toEqual({ tag: 'H1', name: 'Organisation' });

    // Folders, drawn as a tree: Alpha, Inner (inside Alpha), Beta. Deleting Alpha moves Inner up a
    // level; Inner, next in the list, has focus.
    expect((await owner.get('/api/folders')).body.data.folders).toEqual([]);
    const alpha = (await owner.post('/api/folders', { name: 'Alpha', parentId: null })).body.data.folder.id as string;
    expect((await owner.post('/api/folders', { name: 'Inner', parentId: alpha })).status).toBe(201);
    expect((await owner.post('/api/folders', { name: 'Beta', parentId: null })).status).toBe(201);
    await page.goto(`${server.baseUrl}/app/organisation?tab=folders`);
    const folders = page.getByRole('list', { name: 'Folders' }).getByRole('listitem');
    await expect.poll(() => folders.count()).toBe(3);
    await remove('Delete folder Alpha', 'Delete');
    await expect.poll(() => folders.count()).toBe(2);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Delete folder Inner' });
    // Now Beta, Inner: the last one's previous.
    await remove('Delete folder Inner', 'Delete');
    await expect.poll(() => folders.count()).toBe(1);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Delete folder Beta' });
    await remove('Delete folder Beta', 'Delete');
    await page.getByText('No folders yet.').waitFor();
    await expect.poll(focused).toEqual({ tag: 'H1', name: 'Organisation' });
    expect(problems).toEqual([]);
  });

  test('a page is reached by its number; a number past the end goes to the last page', async () => {
    const made: string[] = [];
    for (let i = 1; i <= 49; i++) {
      const upload = await uploadFile(owner, `jump-${String(i).padStart(2, '0')}.txt`, `jump ${i}\n`);
      expect(upload.status).toBe(200);
      made.push(upload.body.data.downloadUrl.split('/').at(-2));
    }
    const pages = page.getByRole('navigation', { name: 'Pages' });
    await page.goto(`${server.baseUrl}/app/files?search=jump-&sortBy=name`);
    await pages.getByText('Page 1 of 3').waitFor();
    const field = pages.getByLabel('Go to page');
    await field.fill('2');
    await field.press('Enter');
    await pages.getByText('Page 2 of 3').waitFor();
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    await page.getByTestId('file-card').filter({ hasText: 'jump-25.txt' }).waitFor();
    await field.fill('999');
    await pages.getByRole('button', { name: 'Go' }).click();
    await pages.getByText('Page 3 of 3').waitFor();
    await expect(field.inputValue()).resolves.toBe('3');
    await page.getByTestId('file-card').filter({ hasText: 'jump-49.txt' }).waitFor();
    // Back returns to the page jumped from.
    await page.goBack();
    await pages.getByText('Page 2 of 3').waitFor();
    for (const id of made) expect((await owner.delete(`/api/files/${id}`)).status).toBe(204);
    expect(problems).toEqual([]);
  });

  test('controls that go or stop under the keyboard keep its focus; the bulk bar links a renamed file by its new name', async () => {
    for (let i = 1; i <= 25; i++) expect((await uploadFile(owner, `pager-${String(i).padStart(2, '0')}.txt`, `page ${i}\n`)).status).toBe(200);
    const pages = page.getByRole('navigation', { name: 'Pages' });
    await page.goto(`${server.baseUrl}/app/files?search=pager-`);
    await pages.getByText('Page 1 of 2').waitFor();
    // Next onto the last page: the button stays focused, marked unusable, instead of disabled under the focus.
    await pages.getByRole('button', { name: 'Next' }).focus();
    await page.keyboard.press('Enter');
    await pages.getByText('Page 2 of 2').waitFor();
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Next' });
    await expect(pages.getByRole('button', { name: 'Next' }).getAttribute('aria-disabled')).resolves.toBe('true');
    await page.keyboard.press('Enter');
    await pages.getByRole('button', { name: 'First' }).focus();
    await page.keyboard.press('Enter');
    await pages.getByText('Page 1 of 2').waitFor();
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'First' });

    // On a phone the list view fits its screen, actions included, without a sideways scroll; also
    // with a file whose badges say it expires, and one with a long name.
    expect((await uploadFile(owner, 'pager-00-expiring.txt', 'soon\n', { fields: { expiresAt: new Date(Date.now() + 86_400_000).toISOString() } })).status).toBe(200);
    expect((await uploadFile(owner, `pager-00-${'long-name-'.repeat(8)}.txt`, 'long\n')).status).toBe(200);
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      await page.goto(`${server.baseUrl}/app/files?search=pager-00&view=list`);
      await page.getByTestId('file-row').first().waitFor();
      const widths = (await page.evaluate(`(() => {
        const table = document.querySelector('.file-table');
        const main = document.querySelector('main');
        const style = getComputedStyle(main);
        return { table: table.getBoundingClientRect().width, room: main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) };
      })()`)) as { table: number; room: number };
      expect(widths.table).toBeLessThanOrEqual(widths.room + 1);
      await expect(page.getByTestId('file-row').first().getByRole('button', { name: /^Edit pager-/ }).isVisible()).resolves.toBe(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    await page.goto(`${server.baseUrl}/app/files?search=pager-`);
    await pages.getByText('Page 1 of 2').waitFor();

    // Clear filters goes with the filters: the focus goes to the search box.
    await page.getByRole('button', { name: 'Clear filters' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Clear filters' }).waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("type")')).toBe('search');

    // Show all periods goes once no period is chosen: the focus stays with the period's bar.
    const timeline = page.getByRole('region', { name: 'Timeline' });
    await timeline.getByRole('button', { name: /: \d+ files$/ }).first().click();
    await timeline.getByRole('button', { name: 'Show all periods' }).focus();
    await page.keyboard.press('Enter');
    await timeline.getByRole('button', { name: 'Show all periods' }).waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate('document.activeElement?.classList.contains("timeline-bar") ?? false')).toBe(true);

    // Remove the expiry goes with the expiry: the focus stays in the dialog, on the emptied field.
    expect((await uploadFile(owner, 'fleeting.txt', 'soon gone\n', { fields: { expiresAt: new Date(Date.now() + 86_400_000).toISOString() } })).status).toBe(200);
    await page.goto(`${server.baseUrl}/app/files?search=fleeting`);
    await page.getByRole('button', { name: 'Edit fleeting.txt' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit fleeting.txt' });
    await editor.getByRole('button', { name: 'Remove the expiry' }).focus();
    await page.keyboard.press('Enter');
    await editor.getByRole('button', { name: 'Remove the expiry' }).waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("type")')).toBe('datetime-local');

    // A file selected, then renamed: Copy links gives its new address, not the old one's 404.
    await editor.getByLabel('Name', { exact: true }).fill('renamed-fleeting.txt');
    await editor.getByRole('button', { name: 'Save' }).click();
    await editor.waitFor({ state: 'hidden' });
    await page.goto(`${server.baseUrl}/app/files?search=fleeting`);
    await page.getByLabel('Select renamed-fleeting.txt').check();
    await page.getByRole('button', { name: 'Edit renamed-fleeting.txt' }).click();
    const again = page.getByRole('dialog', { name: 'Edit renamed-fleeting.txt' });
    await again.getByLabel('Name', { exact: true }).fill('final-fleeting.txt');
    await again.getByRole('button', { name: 'Save' }).click();
    await page.getByLabel('Select final-fleeting.txt').waitFor();
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    await page.getByRole('region', { name: 'Selected files' }).getByRole('button', { name: 'Copy links' }).click();
    await page.getByRole('status').getByText('Copied 1 link').waitFor();
    const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(copied).toMatch(/\/final-fleeting\.txt$/);
    expect((await fetch(copied)).status).toBe(200);
    await page.getByRole('region', { name: 'Selected files' }).getByRole('button', { name: 'Clear selection' }).click();

    // A token's secret put away: the focus goes back to the button that made it.
    await page.goto(`${server.baseUrl}/app/integrations`);
    await page.getByRole('textbox', { name: /^Name\b/ }).fill('focus check');
    await page.getByRole('button', { name: 'Create token' }).focus();
    await page.keyboard.press('Enter');
    const reveal = page.getByTestId('secret-reveal');
    await reveal.waitFor();
    await reveal.getByRole('button', { name: 'I have stored it' }).focus();
    await page.keyboard.press('Enter');
    await reveal.waitFor({ state: 'detached' });
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: 'Create token' });

    // Deleting a webhook leaves the focus on the next one's Delete, then on the heading.
    for (const name of ['Hook one', 'Hook two']) expect((await owner.post('/api/webhooks', { name, url: 'https://hooks.example.com/hoard' })).status).toBe(201);
    await page.goto(`${server.baseUrl}/app/integrations?tab=webhooks`);
    const hooks = page.getByTestId('webhook-row');
    await expect.poll(() => hooks.count()).toBe(2);
    const [firstHook, secondHook] = (await hooks.allTextContents()).map((text) => (text.includes('Hook one') ? 'Hook one' : 'Hook two'));
    await remove(`Delete webhook ${firstHook}`, 'Delete');
    await expect.poll(() => hooks.count()).toBe(1);
    await expect.poll(focused).toEqual({ tag: 'BUTTON', name: `Delete webhook ${secondHook}` });

    // An upload that a profile made private and short-lived says so next to its link.
    const profile = await owner.post('/api/upload-profiles', { name: 'Private day', options: { visibility: 'PRIVATE', expiration: 'DAY', expiryAction: 'DELETE' } });
    expect(profile.status, profile.text).toBe(201);
    await page.goto(`${server.baseUrl}/app/upload`);
    await page.getByLabel('Upload profile').selectOption({ label: 'Private day' });
    await page.getByTestId('file-input').setInputFiles({ name: 'secret-plan.txt', mimeType: 'text/plain', buffer: Buffer.from('between us') });
    const row = page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'secret-plan.txt' });
    await row.getByTestId('upload-access').getByText('Private: only you can open the link').waitFor();
    await expect(row.getByTestId('upload-access').textContent()).resolves.toMatch(/Deleted at /);
    expect(problems).toEqual([]);
  });

  test('creations say so, stale messages go, and the phone menu closes on Escape', async () => {
    // A role: created with a toast; its name taken says so until that role is gone.
    await page.goto(`${server.baseUrl}/app/admin?tab=roles`);
    const newRole = page.getByRole('form', { name: 'New role' });
    await newRole.getByLabel('Name').fill('Reviewers');
    await newRole.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('status').getByText('Role Reviewers created').waitFor();
    await newRole.getByLabel('Name').fill('Reviewers');
    await newRole.getByRole('button', { name: 'Create role' }).click();
    const taken = newRole.getByRole('alert');
    await taken.waitFor();
    await page.getByRole('button', { name: 'Delete role Reviewers' }).click();
    await page.getByRole('dialog', { name: 'Delete role' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('form', { name: 'Role Reviewers' }).waitFor({ state: 'detached' });
    await taken.waitFor({ state: 'detached', timeout: 5_000 });

    // An upload profile.
    await page.goto(`${server.baseUrl}/app/organisation`);
    await page.getByRole('button', { name: 'New profile' }).click();
    const profile = page.getByRole('dialog', { name: 'New upload profile' });
    await profile.getByLabel('Name', { exact: true }).fill('Receipts');
    await profile.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Profile Receipts created').waitFor();

    // Short links: a refused address does not stand beside the last link made.
    await page.goto(`${server.baseUrl}/app/links`);
    await page.getByLabel('Long URL').fill('https://example.com/fine');
    await page.getByRole('button', { name: 'Shorten' }).click();
    await page.getByTestId('created-short-link').waitFor();
    await page.getByLabel('Long URL').fill('ftp://example.com/file');
    await page.getByRole('button', { name: 'Shorten' }).click();
    await page.getByRole('form', { name: 'Shorten a URL' }).getByRole('alert').waitFor();
    await expect(page.getByTestId('created-short-link').count()).resolves.toBe(0);

    // The phone menu: Escape closes it and gives focus back to its button.
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.click();
      await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
      await nav().getByRole('link', { name: 'Files' }).focus();
      await page.keyboard.press('Escape');
      await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');
      await expect(nav().getByRole('link', { name: 'Files' }).isVisible()).resolves.toBe(false);
      await expect.poll(() => hasFocus(menu)).toBe(true);
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    expect(problems).toEqual([]);
  });
  test("the Upload page's own options go with the next files, over the profile's, in one request and in parts", async () => {
    const tag = async (name: string) => ((await owner.post('/api/tags', { name })).body as { data: { tag: { id: string } } }).data.tag.id;
    await tag('receipts');
    const created = await owner.post('/api/upload-profiles', { name: 'Public week', options: { visibility: 'PUBLIC', expiration: 'WEEK', expiryAction: 'SET_PRIVATE', tagIds: [await tag('weekly')] } });
    expect(created.status).toBe(201);
    const record = async (name: string) =>
      ((await owner.get(`/api/files?search=${encodeURIComponent(name)}`)).body as { data: Array<{ name: string; urlPath: string; visibility: string; hasPassword: boolean; expiresAt: string | null; expiryAction: string | null; tags: Array<{ name: string }> }> }).data.find((f) => f.name === name)!;

    await page.goto(`${server.baseUrl}/app/upload`);
    await page.getByLabel('Upload profile').selectOption({ label: 'Public week' });
    const more = page.getByTestId('upload-more');
    await more.locator('summary').click();
    await more.getByLabel('Visibility').selectOption({ label: 'Private' });
    await more.getByLabel('Expiration').selectOption({ label: 'After an hour' });
    await more.getByLabel('When it expires').selectOption({ label: 'Delete the file' });
    await more.getByRole('checkbox', { name: 'receipts' }).check();
    await more.getByLabel('Password').fill('open sesame');
    await expect(more.locator('summary').textContent()).resolves.toBe('Options for the next files: private · expires after an hour · tags: receipts · a password');

    // One request (a small file), and parts (over 32 MiB): the same options reach the server.
    const small = path.join(tmp, 'receipt-march.txt');
    fs.writeFileSync(small, 'coffee 3.20');
    const big = path.join(tmp, 'scan-archive.bin');
    fs.writeFileSync(big, Buffer.alloc(33 * 1024 * 1024, 7));
    const before = Date.now();
    await page.getByTestId('file-input').setInputFiles([small, big]);
    for (const name of ['receipt-march.txt', 'scan-archive.bin']) {
      const row = page.locator('[data-testid=upload-item][data-status=done]', { hasText: name });
      await row.waitFor({ timeout: 60_000 });
      await row.getByTestId('upload-access').getByText('Opens with its password').waitFor();
      await expect(row.getByTestId('upload-access').textContent()).resolves.toMatch(/Private: only you can open the link.*Deleted at /);
      const file = await record(name);
      expect(file).toMatchObject({ visibility: 'PRIVATE', hasPassword: true, expiryAction: 'DELETE', tags: [{ name: 'receipts' }] });
      const expires = Date.parse(file.expiresAt!);
      expect(expires).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000);
    }

    // Back to the profile's options: the button goes, the focus goes to the options' heading, and
    // the next file gets the profile's.
    await more.getByRole('button', { name: 'Use the profile’s options' }).focus();
    await page.keyboard.press('Enter');
    await expect(more.locator('summary').textContent()).resolves.toBe('Options for the next files');
    await expect.poll(() => hasFocus(more.locator('summary'))).toBe(true);
    await expect(more.getByLabel('Password').inputValue()).resolves.toBe('');
    await page.getByTestId('file-input').setInputFiles({ name: 'receipt-april.txt', mimeType: 'text/plain', buffer: Buffer.from('tea 2.10') });
    await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'receipt-april.txt' }).waitFor();
    expect(await record('receipt-april.txt')).toMatchObject({ visibility: 'PUBLIC', hasPassword: false, expiryAction: 'SET_PRIVATE', tags: [{ name: 'weekly' }] });
    await shot('edges-upload-options');
    expect(problems).toEqual([]);
  });
  test('a failed webhook delivery is sent again from its log, with its webhook-id, and the keyboard stays on its button', async () => {
    // A receiver misconfigured at first (404: final), then mended; it holds its answer to the resent
    // copy until the test lets it go, so that the copy is still on its way when Resend is pressed again.
    const hits: Array<{ id: string; body: string; signatures?: string[] }> = [];
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const receiver = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', async () => {
        hits.push({ id: String(request.headers['webhook-id']), body, ...(hits.length >= 2 ? { signatures: String(request.headers['webhook-signature']).split(' ') } : {}) });
        if (hits.length === 2) await held;
        response.writeHead(hits.length === 1 ? 404 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hooks = await startTestServer({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    try {
      const hookOwner = await signUp(hooks.baseUrl, 'hooks@example.test', PASSWORD);
      const created = await hookOwner.post('/api/webhooks', { name: 'Relay', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
      expect(created.status).toBe(201);
      expect((await hookOwner.post(`/api/webhooks/${created.body.data.webhook.id}/test`)).status).toBe(202);
      await expect.poll(async () => (await hookOwner.get(`/api/webhooks/${created.body.data.webhook.id}/deliveries`)).body.data.deliveries[0].status).toBe('failed');

      await page.goto(`${hooks.baseUrl}/app/signin`);
      await page.getByLabel('Email').fill(hookOwner.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await page.goto(`${hooks.baseUrl}/app/integrations?tab=webhooks`);
      await page.getByRole('button', { name: 'Deliveries of Relay' }).click();
      const resend = page.getByRole('button', { name: /^Resend event evt_/ });
      await expect.poll(() => resend.count()).toBe(1);
      await resend.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('status').getByText('Event queued again').waitFor();
      const rows = page.locator('.deliveries tbody tr');
      await expect.poll(() => rows.count()).toBe(2);
      // The failed row keeps its button, below the new delivery, and the keyboard is still on it.
      await expect.poll(() => hasFocus(rows.nth(1).getByRole('button', { name: /^Resend/ }))).toBe(true);
      await expect.poll(() => hits.length).toBe(2);
      // Pressed again while that copy is on its way: refused, and the app says when to try again.
      await page.keyboard.press('Enter');
      await page.getByText('This event is still being sent to this webhook; resend it once that delivery is delivered or failed (try again in 10 seconds)').waitFor();
      letGo();
      expect(hits[1]).toEqual(hits[0]);
      await page.getByRole('button', { name: 'Refresh' }).click();
      await expect.poll(async () => (await rows.allTextContents()).map((text) => /delivered|failed|pending/.exec(text)?.[0])).toEqual(['delivered', 'failed']);
      await shot('edges-webhook-resend');

      // A new signing secret, shown once; the old one still signs beside it.
      await page.getByRole('button', { name: 'Rotate secret of Relay' }).click();
      await page.getByRole('dialog', { name: 'Rotate signing secret' }).getByRole('button', { name: 'Rotate' }).click();
      const shown = page.getByRole('region', { name: /New signing secret of “Relay”/ });
      await shown.waitFor();
      const fresh = (await shown.locator('code').first().textContent())!.trim();
      expect(fresh).toMatch(/^whsec_/);
      expect(fresh).not.toBe(created.body.data.secret);
      expect((await hookOwner.post(`/api/webhooks/${created.body.data.webhook.id}/test`)).status).toBe(202);
      await expect.poll(() => hits.length).toBe(3);
      expect(hits[2]!.signatures).toHaveLength(2);
      expect(problems).toEqual([]);
    } finally {
      await hooks.close();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
  test('the Upload page offers only the expiry a role may apply, and uses it when the action is left to the profile', async () => {
    const roles = (await owner.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null; permissions: string[] }>;
    const everyone = roles.find((r) => r.systemKey === 'everyone')!;
    const memberEmail = uniqueEmail('expiry');
    await createAccount(memberEmail);
    const setEveryone = async (permissions: string[]) => expect((await owner.patch(`/api/roles/${everyone.id}`, { permissions })).status).toBe(200);
    // Sharing, not deleting: an expiry can only make a file private.
    await setEveryone(everyone.permissions.filter((p) => p !== 'files.delete'));
    try {
      const member = await signedIn(memberEmail, PASSWORD, '/app/upload');
      try {
        const other = member.page;
        const more = other.getByTestId('upload-more');
        await more.locator('summary').click();
        await expect(more.getByLabel('When it expires').locator('option').allTextContents()).resolves.toEqual(['As the profile says', 'Make it private']);
        await more.getByLabel('Expiration').selectOption({ label: 'After a day' });
        await other.getByTestId('file-input').setInputFiles({ name: 'short-lived.txt', mimeType: 'text/plain', buffer: Buffer.from('for a day') });
        const row = other.locator('[data-testid=upload-item][data-status=done]', { hasText: 'short-lived.txt' });
        await row.waitFor();
        await expect(row.getByTestId('upload-access').textContent()).resolves.toMatch(/^Private from /);
        // Neither deleting nor sharing: no expiry is offered at all.
        await setEveryone(everyone.permissions.filter((p) => p !== 'files.delete' && p !== 'files.share'));
        await other.reload();
        await other.getByTestId('upload-more').locator('summary').click();
        await expect(other.getByTestId('upload-more').getByLabel('Expiration').count()).resolves.toBe(0);
        await expect(other.getByTestId('upload-more').getByLabel('Visibility').count()).resolves.toBe(0);
      } finally {
        await member.session.close();
      }
    } finally {
      await setEveryone(everyone.permissions);
    }
    expect(problems).toEqual([]);
  });

  /** The Files page at `path` for the owner, signed in again when an earlier test ended this browser's session. */
  const ownerAt = async (path: string) => {
    await page.goto(`${server.baseUrl}${path}`);
    const heading = page.getByRole('heading', { level: 1 });
    await heading.waitFor();
    if (new URL(page.url()).pathname === '/app/signin') {
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
      await page.goto(`${server.baseUrl}${path}`);
    }
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  };

  test('the search box keeps every letter typed while the address takes the words before a pause', async () => {
    await ownerAt('/app/files');
    const box = page.getByRole('searchbox', { name: 'Search files' });
    await box.waitFor();
    // A busy machine: once the box has written its words to the address, the page is slow to show
    // them, and the next keys come first.
    await page.evaluate(`(() => {
      const replace = history.replaceState.bind(history);
      history.replaceState = (...args) => {
        replace(...args);
        // Busy from just after the address changed (the app has asked to show it) for 400 ms.
        if (String(args[2]).includes('search=')) queueMicrotask(() => { const end = performance.now() + 400; while (performance.now() < end); });
      };
    })()`);
    try {
      for (const [before, after] of [['inv', 'oice'], [' bud', 'get'], [' smö', 'rgåsbord']] as const) {
        await box.focus();
        await page.keyboard.type(before, { delay: 30 });
        // Past the 300 ms pause after which the box writes the address: the next keys come while
        // the page is busy. (The keyboard, not the box's locator, which would wait for the page first.)
        await page.waitForTimeout(320);
        await page.keyboard.type(after, { delay: 30 });
      }
      await expect.poll(() => box.inputValue()).toBe('invoice budget smörgåsbord');
      await expect.poll(() => new URL(page.url()).searchParams.get('search')).toBe('invoice budget smörgåsbord');
      // Cleared from outside the box (Clear filters, Back), the box follows the address.
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expect.poll(() => box.inputValue()).toBe('');
    } finally {
      await page.reload();
    }
    expect(problems).toEqual([]);
  });

  test('grouping the timeline by another length of time lets go of the period chosen under the old one', async () => {
    expect((await uploadFile(owner, 'in-a-period.txt', 'a file of this month\n')).status).toBe(200);
    await ownerAt('/app/files');
    const timeline = page.getByRole('region', { name: 'Timeline' });
    const periods = timeline.getByRole('group', { name: 'Periods' });
    await periods.getByRole('button').first().click();
    const count = page.getByText(/ files? in this period$/);
    await count.waitFor();
    await timeline.getByLabel('Group by').selectOption('week');
    // No week is chosen, so no period limits the list: the list says so, and every file is in it.
    await expect.poll(() => periods.locator('[aria-pressed="true"]').count()).toBe(0);
    await count.waitFor({ state: 'detached' });
    const total = ((await owner.get('/api/files?limit=1')).body as { pagination: { total: number } }).pagination.total;
    await page.getByText(new RegExp(`^${total} files?$`)).waitFor();
    expect(problems).toEqual([]);
  });

  test('the period chosen on the timeline is in the address: a reload keeps it, Back lets it go, a period of no grouping is ignored', async () => {
    expect((await uploadFile(owner, 'in-this-week.txt', 'a file of this week\n')).status).toBe(200);
    await ownerAt('/app/files?groupBy=week');
    const timeline = page.getByRole('region', { name: 'Timeline' });
    const periods = timeline.getByRole('group', { name: 'Periods' });
    await periods.getByRole('button').first().waitFor();
    const zone = (await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')) as string;
    const buckets = ((await owner.get(`/api/files/timeline?groupBy=week&timezone=${encodeURIComponent(zone)}`)).body as { data: { buckets: Array<{ key: string; count: number }> } }).data.buckets;
    const latest = buckets.find((bucket) => bucket.count > 0)!;
    await periods.getByRole('button').first().click();
    await expect.poll(() => new URL(page.url()).searchParams.get('period')).toBe(latest.key);
    const inPeriod = page.getByText(new RegExp(`^${latest.count} files? in this period$`));
    await inPeriod.waitFor();

    // A reload reads the period from the address: the same bar is pressed and the list is the same.
    await page.reload();
    await inPeriod.waitFor();
    await expect.poll(() => periods.locator('[aria-pressed="true"]').count()).toBe(1);

    // Back goes to the list before the period was chosen.
    await page.goBack();
    await inPeriod.waitFor({ state: 'detached' });
    expect(new URL(page.url()).searchParams.get('period')).toBeNull();
    await expect.poll(() => periods.locator('[aria-pressed="true"]').count()).toBe(0);

    // A month's key under weeks chooses nothing: every file is listed.
    const total = ((await owner.get('/api/files?limit=1')).body as { pagination: { total: number } }).pagination.total;
    await page.goto(`${server.baseUrl}/app/files?groupBy=week&period=${latest.key.slice(0, 4)}-01`);
    await page.getByText(new RegExp(`^${total} files?$`)).waitFor();
    expect(problems).toEqual([]);
  });

  test('the first key on the timeline slider chooses the bar under it, or with End the last one, where it skipped the first', async () => {
    const uploaded = await uploadFile(owner, 'from-two-years-ago.txt', 'an older file\n');
    expect(uploaded.status).toBe(200);
    const id = uploaded.body.data.downloadUrl.split('/').at(-2) as string;
    const recent = await uploadFile(owner, 'from-today.txt', 'a newer file\n');
    expect(recent.status).toBe(200);
    const recentId = recent.body.data.downloadUrl.split('/').at(-2) as string;
    // Two years of files: this one is moved back in time, as an imported library's are.
    await server.ctx.db.updateTable('files').set({ createdAt: Date.now() - 2 * 366 * 86_400_000 }).where('id', '=', id).execute();
    try {
      const zone = (await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')) as string;
      const buckets = ((await owner.get(`/api/files/timeline?groupBy=year&timezone=${encodeURIComponent(zone)}`)).body as { data: { buckets: Array<{ key: string }> } }).data.buckets;
      expect(buckets.length).toBeGreaterThanOrEqual(2);
      await ownerAt('/app/files?groupBy=year');
      const slider = page.getByRole('slider', { name: 'Scrub through periods' });
      const chosen = () => new URL(page.url()).searchParams.get('period');
      const showAll = page.getByRole('button', { name: 'Show all periods' });
      for (const [key, bucket] of [['ArrowRight', buckets[0]], ['ArrowLeft', buckets[0]], ['End', buckets.at(-1)]] as const) {
        await slider.focus();
        await page.keyboard.press(key);
        await expect.poll(chosen, { message: key }).toBe(bucket!.key);
        await showAll.click();
        await expect.poll(chosen).toBeNull();
      }
      // Once a period is chosen, the keys step from it as a slider's do.
      await slider.focus();
      await page.keyboard.press('ArrowRight');
      await expect.poll(chosen).toBe(buckets[0]!.key);
      await page.keyboard.press('ArrowRight');
      await expect.poll(chosen).toBe(buckets[1]!.key);
    } finally {
      for (const each of [id, recentId]) expect((await owner.delete(`/api/files/${each}`)).status).toBe(204);
    }
    expect(problems).toEqual([]);
  });

  test('the bulk bar acts on selected files as they are now, also those a search no longer shows, and drops the ones deleted elsewhere', async () => {
    const ids: string[] = [];
    for (const name of ['beach-one.txt', 'beach-two.txt', 'beach-three.txt']) {
      const uploaded = await uploadFile(owner, name, `${name}\n`);
      expect(uploaded.status).toBe(200);
      ids.push(uploaded.body.data.downloadUrl.split('/').at(-2) as string);
    }
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    await ownerAt('/app/files?search=beach-');
    for (const name of ['beach-one.txt', 'beach-two.txt', 'beach-three.txt']) await page.getByLabel(`Select ${name}`).check();
    const bar = page.getByRole('region', { name: 'Selected files' });
    // One renamed so that the search no longer shows it, one deleted in another tab.
    await page.getByRole('button', { name: 'Edit beach-one.txt' }).click();
    const editor = page.getByRole('dialog', { name: 'Edit beach-one.txt' });
    await editor.getByLabel('Name', { exact: true }).fill('sunset-one.txt');
    await editor.getByRole('button', { name: 'Save' }).click();
    await editor.waitFor({ state: 'hidden' });
    await bar.getByText('(1 not shown here)').waitFor();
    expect((await owner.delete(`/api/files/${ids[2]}`)).status).toBe(204);
    await bar.getByRole('button', { name: 'Copy links' }).click();
    await page.getByRole('status').getByText('Copied 2 links; 1 selected file no longer exists and left the selection').waitFor();
    const copied = ((await page.evaluate('navigator.clipboard.readText()')) as string).split('\n');
    expect(copied.map((link) => decodeURIComponent(link.split('/').at(-1)!)).sort()).toEqual(['beach-two.txt', 'sunset-one.txt']);
    for (const link of copied) expect((await fetch(link)).status, link).toBe(200);
    await bar.getByText('2 files selected').waitFor();
    // A bulk change reaches the file the search no longer shows, under its new name.
    await bar.getByRole('button', { name: 'Make private' }).click();
    await page.getByRole('status').getByText('Made private: 2 files').waitFor();
    const visibilities = await Promise.all(ids.slice(0, 2).map(async (id) => ((await owner.patch(`/api/files/${id}`, {})).body as { data: { file: { visibility: string } } }).data.file.visibility));
    expect(visibilities).toEqual(['PRIVATE', 'PRIVATE']);
    await bar.getByRole('button', { name: 'Clear selection' }).click();
    expect(problems).toEqual([]);
  });

  test('a date the field holds but no calendar can read is an error, never "no expiry"; a day ends at the next one\'s midnight', async () => {
    // A token's expiry typed with a year of six digits (Chromium's field takes them).
    await ownerAt('/app/files');
    await page.goto(`${server.baseUrl}/app/integrations`);
    const form = page.getByRole('form', { name: 'Create a token' });
    await form.getByLabel('Name').fill('six-digit year');
    await form.getByRole('checkbox').first().check();
    await form.getByLabel(/^Expires/).fill('202711-01-01T11:00');
    await form.getByRole('button', { name: /Create/ }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toBe('Expires: 202711-01-01T11:00 is not a date and time; pick one with a four-digit year');
    const tokens = (await owner.get('/api/tokens')).body.data.tokens as Array<{ name: string }>;
    expect(tokens.map((t) => t.name)).not.toContain('six-digit year');

    // A file whose expiry the field cannot show as a four-digit year east of UTC: changing only what
    // happens then keeps the date.
    const far = await uploadFile(owner, 'far-future.txt', 'far\n', { fields: { expiresAt: '9999-12-31T23:59:59.999Z', expiryAction: 'DELETE' } });
    expect(far.status, far.text).toBe(200);
    const fileId = (far.body as { data: { downloadUrl: string } }).data.downloadUrl.split('/').at(-2)!;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setTimezoneOverride', { timezoneId: 'Asia/Kathmandu' });
    try {
      await ownerAt('/app/files?search=far-future');
      await page.getByRole('button', { name: 'Edit far-future.txt' }).first().click();
      const editor = page.getByRole('dialog', { name: 'Edit far-future.txt' });
      await expect(editor.getByLabel(/^Expires at/).inputValue()).resolves.toBe('10000-01-01T05:44');
      await editor.getByLabel('Then').selectOption('SET_PRIVATE');
      await editor.getByRole('button', { name: 'Save' }).click();
      await editor.waitFor({ state: 'detached' });
      const kept = (await owner.patch(`/api/files/${fileId}`, {})).body.data.file as { expiresAt: string; expiryAction: string };
      expect([kept.expiresAt, kept.expiryAction]).toEqual(['9999-12-31T23:59:59.999Z', 'SET_PRIVATE']);

      // A date typed on into the year is said to be wrong, and the expiry stays.
      await page.getByRole('button', { name: 'Edit far-future.txt' }).first().click();
      await editor.getByLabel(/^Expires at/).fill('202711-01-01T11:00');
      await editor.getByRole('button', { name: 'Save' }).click();
      await editor.getByText('Expires at: 202711-01-01T11:00 is not a date and time; pick one with a four-digit year').waitFor();
      await editor.getByRole('button', { name: 'Cancel' }).click();
      expect(((await owner.patch(`/api/files/${fileId}`, {})).body.data.file as { expiresAt: string }).expiresAt).toBe('9999-12-31T23:59:59.999Z');

      // A file that expires within a day shows the time too, one that expires later its day alone.
      expect((await uploadFile(owner, 'hours-left.txt', 'soon\n', { fields: { expiresAt: new Date(Date.now() + 2 * 3600_000).toISOString() } })).status).toBe(200);
      expect((await uploadFile(owner, 'days-left.txt', 'later\n', { fields: { expiresAt: new Date(Date.now() + 5 * 86_400_000).toISOString() } })).status).toBe(200);
      await ownerAt('/app/files?search=-left');
      const card = (name: string) => page.getByTestId('file-card').filter({ hasText: name });
      await expect(card('hours-left.txt').textContent()).resolves.toMatch(/Expires [^·]*\d{1,2}:\d{2}/);
      await expect(card('days-left.txt').textContent()).resolves.not.toMatch(/Expires [^·]*\d{1,2}:\d{2}/);

      // In Santiago the clocks go back at midnight ending 4 April 2026: that day ends at 04:00Z, and
      // the hour repeated before it is in it.
      await cdp.send('Emulation.setTimezoneOverride', { timezoneId: 'America/Santiago' });
      const read = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/files');
      await page.goto(`${server.baseUrl}/app/files?from=2026-04-04&to=2026-04-04`);
      const sent = new URL((await read).url()).searchParams;
      expect([sent.get('dateFrom'), sent.get('dateTo')]).toEqual(['2026-04-04T03:00:00.000Z', '2026-04-05T03:59:59.999Z']);
    } finally {
      await cdp.send('Emulation.setTimezoneOverride', { timezoneId: '' });
      await cdp.detach();
    }
    expect(problems).toEqual([]);
  });

  test("the users table says each account's two-factor and the quota that holds it; an administrator giving up the role sees the page go, not an error", async () => {
    const administrator = ((await owner.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null }>).find((r) => r.systemKey === 'administrator')!;
    const carolEmail = uniqueEmail('carol');
    await createAccount(carolEmail, { roleIds: [administrator.id] });
    const plainEmail = uniqueEmail('plain');
    const plainId = await createAccount(plainEmail);
    const before = (await owner.get('/api/settings')).body.data as { defaultQuotaBytes: number };
    expect((await owner.patch('/api/settings', { defaultQuotaBytes: 1024 })).status).toBe(200);
    const plainClient = new Client(server.baseUrl);
    expect((await plainClient.post('/api/auth/login', { email: plainEmail, password: PASSWORD })).status).toBe(200);
    expect((await uploadFile(plainClient, 'fills.txt', 'x'.repeat(1000))).status).toBe(200);
    expect((await owner.patch('/api/settings', { defaultQuotaBytes: 512 })).status).toBe(200);

    const carol = await signedIn(carolEmail, PASSWORD, '/app/admin?tab=users');
    try {
      const other = carol.page;
      const row = (email: string) => other.getByTestId('user-row').filter({ hasText: email });
      await row(plainEmail).waitFor();
      await expect(row(plainEmail).textContent()).resolves.toMatch(/Off.*Over quota: uploads refused.*Default \(512 B\)/);
      // An administrator is held to no default quota.
      await expect(row(carolEmail).textContent()).resolves.toContain('No quota');
      // Reset two-factor is offered only where two-factor is on.
      await expect(row(plainEmail).getByRole('button', { name: `Reset two-factor of ${plainEmail}` }).count()).resolves.toBe(0);

      // An edit says it was saved.
      await other.getByRole('button', { name: `Edit ${plainEmail}` }).click();
      let dialog = other.getByRole('dialog', { name: `Edit ${plainEmail}` });
      await dialog.getByLabel('Name').fill('Plain P');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await other.getByRole('status').getByText(`Saved ${plainEmail}`).waitFor();
      expect((await accountOf(plainId)).name).toBe('Plain P');

      // Carol gives up the Administrator role: the page says it is not available to her now.
      await other.getByRole('button', { name: `Edit ${carolEmail}` }).click();
      dialog = other.getByRole('dialog', { name: `Edit ${carolEmail}` });
      await dialog.getByRole('checkbox', { name: 'Administrator' }).uncheck();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await dialog.waitFor({ state: 'detached' });
      await other.getByText('Not available').first().waitFor();
      await expect(other.getByText('You do not have permission to perform this action.').count()).resolves.toBe(0);
      await expect(other.getByTestId('user-row').count()).resolves.toBe(0);
    } finally {
      await carol.session.close();
      await owner.patch('/api/settings', { defaultQuotaBytes: before.defaultQuotaBytes });
    }
    expect(problems).toEqual([]);
  });

  test('the invites table says who made each invite and who came in with it; a used one is removed, not withdrawn', async () => {
    const made = (await owner.post('/api/invites')).body.data as { code: string };
    const inviteeEmail = uniqueEmail('invitee');
    expect((await new Client(server.baseUrl).post('/api/auth/register', { email: inviteeEmail, password: PASSWORD, inviteCode: made.code })).status).toBe(201);
    await ownerAt('/app/files');
    await page.goto(`${server.baseUrl}/app/admin?tab=invites`);
    const row = page.getByRole('row').filter({ hasText: made.code });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(`by ${inviteeEmail}`);
    await expect(row.textContent()).resolves.toContain(owner.email);
    await row.getByRole('button', { name: `Remove invite ${made.code}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove invite' });
    await expect(dialog.textContent()).resolves.toContain('The account made with it stays.');
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('status').getByText('Invite removed').waitFor();
    await row.waitFor({ state: 'detached' });
    // A note says who an open invite is for; the form is empty again after.
    const form = page.getByRole('form', { name: 'New invite' });
    await form.getByLabel('Note').fill('For Alice, by email');
    await form.getByRole('button', { name: 'Create invite' }).click();
    await page.getByRole('status').getByText('Invite created').waitFor();
    await page.getByRole('row').filter({ hasText: 'For Alice, by email' }).waitFor();
    expect(await form.getByLabel('Note').inputValue()).toBe('');
    expect(problems).toEqual([]);
  });

  test('a member deletes their own account from the Account page, with the password, after a question that says what goes', async () => {
    const email = uniqueEmail('leaver');
    const id = await createAccount(email);
    const leaver = await signedIn(email, PASSWORD, '/app/account');
    try {
      const other = leaver.page;
      const form = other.getByRole('form', { name: 'Delete account' });
      await form.getByLabel('Your password').fill('not the password');
      await form.getByRole('button', { name: 'Delete my account' }).click();
      let dialog = other.getByRole('dialog', { name: 'Delete your account' });
      await dialog.getByRole('button', { name: 'Delete my account' }).click();
      await form.getByText('The password is not right').waitFor();
      expect((await owner.get('/api/users')).body.data.users.some((u: { id: string }) => u.id === id)).toBe(true);

      // Asked, and cancelled: nothing goes.
      await form.getByLabel('Your password').fill(PASSWORD);
      await form.getByRole('button', { name: 'Delete my account' }).click();
      dialog = other.getByRole('dialog', { name: 'Delete your account' });
      await expect(dialog.textContent()).resolves.toContain('This cannot be undone.');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect((await owner.get('/api/users')).body.data.users.some((u: { id: string }) => u.id === id)).toBe(true);

      await form.getByRole('button', { name: 'Delete my account' }).click();
      await dialog.getByRole('button', { name: 'Delete my account' }).click();
      await other.getByRole('heading', { name: 'Sign in' }).waitFor();
      expect((await owner.get('/api/users')).body.data.users.some((u: { id: string }) => u.id === id)).toBe(false);
    } finally {
      await leaver.session.close();
    }
    expect(problems).toEqual([]);
  });

  test('an address with a page that is no whole number, or a deleted tag or folder, shows the list or says it once; the closed viewer asks for nothing', async () => {
    for (const name of ['addr-a.png', 'addr-b.png']) expect((await uploadFile(owner, name, PNG_1X1, { type: 'image/png' })).status).toBe(200);
    const listRequests: URL[] = [];
    const watch = (request: { url(): string }) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/files') listRequests.push(url);
    };
    page.on('request', watch);
    try {
      // page=2.5: the first page, not the server's 400 alone.
      await ownerAt('/app/files?search=addr-&page=2.5');
      await expect.poll(() => page.getByTestId('file-card').count()).toBe(2);
      await expect(page.getByRole('alert').count()).resolves.toBe(0);
      expect(listRequests.every((url) => url.searchParams.get('page') !== '2.5')).toBe(true);

      // A tag deleted since the address was made: said once, and the select says what filters.
      const tag = (await owner.post('/api/tags', { name: `gone-${Date.now()}` })).body.data.tag as { id: string };
      expect((await owner.delete(`/api/tags/${tag.id}`)).status).toBe(204);
      await ownerAt(`/app/files?tag=${tag.id}`);
      await page.getByRole('alert').first().waitFor();
      await page.waitForTimeout(300);
      await expect(page.getByRole('alert').count()).resolves.toBe(1);
      const chosen = (label: string) => page.locator('.filters label').filter({ hasText: new RegExp(`^${label}`) }).locator('select option:checked').textContent();
      await expect(chosen('Tag')).resolves.toBe('A tag no longer there');

      const folder = (await owner.post('/api/folders', { name: `gone-${Date.now()}` })).body.data.folder as { id: string };
      expect((await owner.delete(`/api/folders/${folder.id}`)).status).toBe(204);
      await ownerAt(`/app/files?folder=${folder.id}`);
      await expect.poll(() => chosen('Folder')).toBe('A folder no longer there');

      // The viewer, closed, asks for no neighbours when the filters change.
      await ownerAt('/app/files?search=addr-');
      await page.getByRole('button', { name: 'View addr-a.png' }).first().click();
      const viewer = page.getByRole('dialog', { name: 'addr-a.png' });
      await viewer.waitFor();
      await expect.poll(() => listRequests.filter((url) => url.searchParams.has('galleryAnchor')).length).toBeGreaterThan(0);
      await page.keyboard.press('Escape');
      await viewer.waitFor({ state: 'hidden' });
      await page.waitForTimeout(300);
      const before = listRequests.length;
      await page.getByLabel('Search').fill('addr-b');
      await expect.poll(() => page.getByTestId('file-card').count()).toBe(1);
      await page.waitForTimeout(500);
      expect(listRequests.slice(before).filter((url) => url.searchParams.has('galleryAnchor'))).toEqual([]);
    } finally {
      page.off('request', watch);
    }
    expect(problems).toEqual([]);
  });

  test('an administrator suspends an account from the users table, which signs it out and marks it, and resumes it', async () => {
    const email = uniqueEmail('paused');
    await createAccount(email);
    const member = await signedIn(email, PASSWORD, '/app/files');
    try {
      await ownerAt('/app/files');
      await page.goto(`${server.baseUrl}/app/admin?tab=users`);
      const row = page.getByTestId('user-row').filter({ hasText: email });
      await row.getByRole('button', { name: `Suspend ${email}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Suspend account' });
      await expect(dialog.textContent()).resolves.toContain('Nothing is deleted');
      await dialog.getByRole('button', { name: 'Suspend' }).click();
      await page.getByRole('status').getByText(`${email} is suspended`).waitFor();
      await row.getByText('Suspended', { exact: true }).waitFor();

      // The member's browser finds itself signed out, and signing in says why.
      await member.page.reload();
      await member.page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await member.page.getByLabel('Email').fill(email);
      await member.page.getByLabel('Password').fill(PASSWORD);
      await member.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await member.page.getByText('This account is suspended: ask an administrator of this instance').waitFor();

      await row.getByRole('button', { name: `Resume ${email}` }).click();
      await page.getByRole('status').getByText(`${email} is resumed`).waitFor();
      // The list is read again after the toast: the badge goes once it has come.
      await expect.poll(() => row.getByText('Suspended', { exact: true }).count()).toBe(0);
      await member.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await member.page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    } finally {
      await member.session.close();
    }
    expect(problems).toEqual([]);
  });

  test("on a phone each table's rows are cards: nothing scrolls sideways, every cell is named and every button is on the screen", async () => {
    await createAccount(uniqueEmail('carded'));
    expect((await owner.post('/api/urls', { url: `https://example.com/${'a-long-path/'.repeat(20)}` })).status).toBe(200);
    expect((await owner.post('/api/tokens', { name: 'phone script', scopes: ['files:read'] })).status).toBe(201);
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      for (const [where, table, button] of [
        ['/app/admin?tab=users', 'Users', 'Edit'],
        ['/app/links', 'Short links', 'Delete'],
        ['/app/integrations', 'Tokens', 'Revoke'],
      ] as const) {
        await page.goto(`${server.baseUrl}${where}`);
        const frame = page.getByRole('region', { name: table });
        await frame.locator('tbody tr').first().waitFor();
        await expect.poll(() => frame.evaluate((element) => element.scrollWidth - element.clientWidth), { message: where }).toBe(0);
        // Each cell but the buttons' says its column; the headers themselves are kept for screen readers.
        const unnamed = await frame.locator('tbody td:not([data-label]):not([data-actions])').count();
        expect(unnamed, where).toBe(0);
        await expect(frame.locator('thead').evaluate((element) => element.getBoundingClientRect().height), where).resolves.toBeLessThanOrEqual(1);
        await expect(frame.getByRole('columnheader').count(), where).resolves.toBeGreaterThan(2);
        const last = frame.getByRole('button', { name: new RegExp(`^${button}`) }).last();
        await last.scrollIntoViewIfNeeded();
        const box = (await last.boundingBox())!;
        expect(box.x + box.width, where).toBeLessThanOrEqual(390);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
    // On a wide screen they are tables as before.
    await page.goto(`${server.baseUrl}/app/links`);
    const row = page.getByRole('region', { name: 'Short links' }).locator('tbody tr').first();
    await expect(row.evaluate((element) => element.ownerDocument.defaultView!.getComputedStyle(element).display)).resolves.toBe('table-row');
    expect(problems).toEqual([]);
  });

  test('a folder is shared from its row: the address comes with the focus, opens a page of its public files, and stops working once sharing stops', async () => {
    const folder = (await owner.post('/api/folders', { name: 'Shared album' })).body.data.folder.id as string;
    expect((await uploadFile(owner, 'album-photo.png', PNG_1X1, { type: 'image/png', query: `folderId=${folder}` })).status).toBe(200);
    expect((await uploadFile(owner, 'album-secret.txt', 'not for anyone\n', { query: `folderId=${folder}`, fields: { visibility: 'PRIVATE' } })).status).toBe(200);
    await ownerAt('/app/files');
    await page.goto(`${server.baseUrl}/app/organisation?tab=folders`);
    await page.getByRole('button', { name: 'Share folder Shared album' }).click();
    const dialog = page.getByRole('dialog', { name: 'Share Shared album' });
    await dialog.getByRole('button', { name: 'Share this folder' }).click();
    const address = dialog.getByLabel('Public address');
    await address.waitFor();
    await expect.poll(() => address.evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true);
    const url = await address.inputValue();
    expect(url).toMatch(new RegExp(`^${server.baseUrl}/folder/[a-z0-9]{16}$`));
    // Closed, the dialog leaves the folder marked in the tree; opened again, it has the same address.
    await dialog.getByRole('button', { name: 'Close' }).click();
    const row = page.getByRole('list', { name: 'Folders' }).getByRole('listitem').filter({ hasText: 'Shared album' });
    await row.getByText('Shared', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Share folder Shared album' }).click();
    await expect.poll(() => address.inputValue()).toBe(url);
    // The Files page filtered by the folder says where its page is.
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.goto(`${server.baseUrl}/app/files?folder=${folder}`);
    const note = page.getByTestId('folder-share-note');
    await expect.poll(() => note.getByRole('link').getAttribute('href')).toBe(url);
    await expect(note.textContent()).resolves.toContain('The public files of Shared album without a password are listed at');
    await note.getByRole('button', { name: 'Copy address' }).waitFor();
    await page.goto(`${server.baseUrl}/app/organisation?tab=folders`);
    await page.getByRole('button', { name: 'Share folder Shared album' }).click();
    await expect.poll(() => address.inputValue()).toBe(url);
    // An end for the address, set and taken away again: the address stays the same.
    const ends = dialog.getByLabel(/^Stops working/);
    const said = dialog.getByTestId('share-ends');
    await expect(said.textContent()).resolves.toBe('Works until you stop sharing.');
    await ends.fill('2099-05-01T12:30');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => said.textContent()).toMatch(/^Works until .*2099/);
    const ending = (await owner.get(`/api/folders/${folder}/share`)).body.data.share;
    expect([ending.url, ending.expiresAt]).toEqual([url, expect.stringMatching(/^2099-0[45]-/)]);
    // The Files page's note says until when too.
    await page.goto(`${server.baseUrl}/app/files?folder=${folder}`);
    await expect.poll(() => note.textContent()).toMatch(/listed at .* until .*2099/);
    await page.goto(`${server.baseUrl}/app/organisation?tab=folders`);
    await page.getByRole('button', { name: 'Share folder Shared album' }).click();
    await expect.poll(() => ends.inputValue()).toBe('2099-05-01T12:30');
    await ends.fill('');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => said.textContent()).toBe('Works until you stop sharing.');
    expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toMatchObject({ url, expiresAt: null });
    // Subfolders listed too, at once, and no longer: the address stays.
    const subfolders = dialog.getByLabel(/^Include subfolders/);
    await subfolders.check();
    await page.getByText('The page now lists the subfolders’ public files too').waitFor();
    expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toMatchObject({ url, subfolders: true });
    await subfolders.uncheck();
    await page.getByText('The page now lists this folder’s files only').waitFor();
    expect((await owner.get(`/api/folders/${folder}/share`)).body.data.share).toMatchObject({ url, subfolders: false });

    const visitor = await browser.context.newPage();
    try {
      await visitor.goto(url);
      await visitor.getByRole('heading', { name: 'Shared album' }).waitFor();
      await visitor.getByRole('link', { name: /album-photo\.png/ }).click();
      await visitor.getByRole('heading', { name: 'album-photo.png' }).waitFor();
      await visitor.goBack();
      await expect(visitor.getByText('album-secret.txt').count()).resolves.toBe(0);

      await dialog.getByRole('button', { name: 'Stop sharing' }).click();
      await page.getByRole('dialog', { name: 'Stop sharing' }).getByRole('button', { name: 'Stop sharing' }).click();
      const again = dialog.getByRole('button', { name: 'Share this folder' });
      await again.waitFor();
      await expect.poll(() => again.evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true);
      expect((await visitor.goto(url))!.status()).toBe(404);
      // Shared again with an end chosen first: a new address, which says when it stops working.
      await ends.fill('2099-06-01T08:00');
      await again.click();
      await expect.poll(() => said.textContent()).toMatch(/^Works until .*2099/);
      expect(await address.inputValue()).not.toBe(url);
      await dialog.getByRole('button', { name: 'Stop sharing' }).click();
      await page.getByRole('dialog', { name: 'Stop sharing' }).getByRole('button', { name: 'Stop sharing' }).click();
      await again.waitFor();
    } finally {
      await visitor.close();
    }
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => row.getByText('Shared', { exact: true }).count()).toBe(0);
    // Nor does the Files page say it any more.
    await page.goto(`${server.baseUrl}/app/files?folder=${folder}`);
    await page.getByRole('button', { name: 'View album-photo.png' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByTestId('folder-share-note').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  test('an administrator takes down one file of another account from its address, after seeing whose it is', async () => {
    const email = uniqueEmail('reported');
    const memberId = await createAccount(email);
    const member = new Client(server.baseUrl);
    expect((await member.post('/api/auth/login', { email, password: PASSWORD })).status).toBe(200);
    const reported = (await uploadFile(member, 'reported-scan.txt', 'reported bytes')).body.data as { url: string; rawUrl: string };
    const kept = (await uploadFile(member, 'kept-notes.txt', 'kept bytes')).body.data as { rawUrl: string };

    await ownerAt('/app/files');
    await page.goto(`${server.baseUrl}/app/admin?tab=takedown`);
    const address = page.getByLabel('Address of the file or short link');
    // An address that leads nowhere says so.
    await address.fill(`${server.baseUrl}/u/Zz9_Zz`);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('alert').getByText(/^Nothing at this address/).waitFor();

    await address.fill(reported.url);
    await page.getByRole('button', { name: 'Find' }).click();
    const card = page.getByTestId('reported-content');
    await card.getByText('reported-scan.txt').waitFor();
    await expect(card.textContent()).resolves.toContain(email);
    await card.getByLabel('Reason, shown to the owner (optional)').fill('Reported as someone else’s scan');
    await card.getByRole('button', { name: 'Take down' }).click();
    const dialog = page.getByRole('dialog', { name: 'Take down file' });
    await expect(dialog.textContent()).resolves.toContain(`reported-scan.txt of ${email}`);
    await expect(dialog.textContent()).resolves.toContain('Its owner is told, with your reason');
    await dialog.getByRole('button', { name: 'Take down' }).click();
    await page.getByRole('status').getByText('File taken down: reported-scan.txt').waitFor();
    await expect.poll(() => card.count()).toBe(0);
    await expect.poll(() => page.evaluate('document.activeElement?.getAttribute("name")')).toBe('address');
    expect((await fetch(reported.rawUrl)).status).toBe(404);
    expect((await fetch(kept.rawUrl)).status).toBe(200);

    // The owner is told, above every page, until they dismiss it.
    const owned = await signedIn(email, PASSWORD, '/app/links');
    try {
      const notice = owned.page.getByTestId('account-notice');
      await notice.waitFor();
      await expect(notice.textContent()).resolves.toMatch(/An administrator took down your file reported-scan\.txt on .+\. Reason: Reported as someone else’s scan/);
      await owned.page.getByRole('button', { name: 'Dismiss the notice about reported-scan.txt' }).click();
      await notice.waitFor({ state: 'detached' });
      await expect.poll(() => owned.page.evaluate('document.activeElement?.id')).toBe('main');
      await owned.page.reload();
      await owned.page.getByRole('heading', { name: 'Short links', level: 1 }).waitFor();
      await expect(owned.page.getByTestId('account-notice').count()).resolves.toBe(0);
    } finally {
      await owned.session.close();
    }

    // The administration log tells who took what down, and whose it was.
    await page.goto(`${server.baseUrl}/app/admin?tab=changes`);
    const row = page.getByTestId('admin-change-row').filter({ hasText: 'Took down file reported-scan.txt' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(`Owner: ${email}`);
    await expect(row.textContent()).resolves.toContain('Size: 14 B');
    await expect(row.textContent()).resolves.toContain('Reason: Reported as someone else’s scan');
    // Users → History of the owner: only the changes to that account.
    await page.goto(`${server.baseUrl}/app/admin?tab=users`);
    expect((await owner.patch(`/api/users/${memberId}`, { name: 'Reported Owner' })).status).toBe(200);
    await page.reload();
    await page.getByRole('link', { name: `History of ${email}` }).click();
    const ownRow = page.getByTestId('admin-change-row');
    await expect.poll(() => ownRow.count()).toBe(2);
    await expect(page.getByText(`Only the changes to ${email}.`).count()).resolves.toBe(1);
    await expect(ownRow.first().textContent()).resolves.toContain('Changed account');
    await expect(ownRow.last().textContent()).resolves.toContain('Created account');
    await page.getByRole('button', { name: 'Show all changes' }).click();
    await row.waitFor();

    // On a phone its rows are cards, each cell under its column's name: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 800 });
    try {
      const frame = page.getByRole('region', { name: 'Changes made by administrators' });
      await expect.poll(() => frame.evaluate((element) => element.scrollWidth - element.clientWidth)).toBe(0);
      await expect(page.evaluate(`getComputedStyle(document.querySelector('[data-testid="admin-change-row"] td[data-label="By"]'), '::before').content`)).resolves.toBe('"By"');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }

    // Fifty changes later the take-down is on the next page, which Show older adds below.
    const invites: string[] = [];
    for (let i = 0; i < 50; i++) invites.push((await owner.post('/api/invites', { note: `paging ${i}` })).body.data.id);
    await page.reload();
    await expect.poll(() => page.getByTestId('admin-change-row').count()).toBe(50);
    await expect(row.count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Show older' }).click();
    await row.waitFor();
    await expect.poll(() => page.getByTestId('admin-change-row').count()).toBeGreaterThan(50);
    for (const id of invites) expect((await owner.delete(`/api/invites/${id}`)).status).toBe(204);
    expect(problems).toEqual([]);
  });

  test('"Select all matching" puts every file the filters match into the selection, beyond the page, and the bulk actions reach them all', async () => {
    for (let i = 1; i <= 30; i++) expect((await uploadFile(owner, `selected-batch-${String(i).padStart(2, '0')}.txt`, `batch ${i}\n`)).status).toBe(200);
    const privateTotal = async () => (await owner.get('/api/files?visibility=private&limit=1')).body.pagination.total as number;
    const privateBefore = await privateTotal();
    await page.goto(`${server.baseUrl}/app/files?search=selected-batch`);
    await expect.poll(() => page.getByTestId('file-card').count()).toBe(24);
    const offer = page.getByRole('button', { name: /matching$/ });
    // Offered once the whole page is ticked, since more files match than it shows.
    expect(await offer.count()).toBe(0);
    await page.getByLabel('Select all on this page').check();
    await page.getByRole('button', { name: 'Select all 30 matching' }).click();
    const bar = page.getByRole('region', { name: 'Selected files' });
    await bar.getByText('30 files selected').waitFor();
    await bar.getByText('(6 not shown here)').waitFor();
    await expect.poll(() => offer.count()).toBe(0);
    await shot('edges-select-all-matching');

    await bar.getByRole('button', { name: 'Make private' }).click();
    await page.getByText('Made private: 30 files').waitFor({ timeout: 15_000 });
    // Those 30 and no other file: the filter bounded the selection.
    expect(await privateTotal()).toBe(privateBefore + 30);
    expect((await owner.get('/api/files?search=selected-batch&visibility=public&limit=1')).body.pagination.total).toBe(0);
    await bar.getByRole('button', { name: 'Clear selection' }).click();
    await bar.waitFor({ state: 'detached' });
    for (const file of (await owner.get('/api/files?search=selected-batch&limit=100')).body.data as Array<{ id: string }>) {
      expect((await owner.delete(`/api/files/${file.id}`)).status).toBe(204);
    }
    expect(problems).toEqual([]);
  });
});
