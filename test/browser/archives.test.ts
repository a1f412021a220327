import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/client.ts';
import { launchBrowser, screenshotDir, watchPage, type BrowserSession } from '../support/browser.ts';
import { encryptedFlagZip, manyEntriesZip, zipBytes } from '../support/archives.ts';
import { uploadFile } from '../support/uploads.ts';

/**
 * Archives in the web app (contract §9, docs/web.md "Archives"), in a real Chromium against a real
 * server: the contents of an uploaded ZIP as a tree with sizes, one entry downloaded, the busy
 * answer, extraction of a selection into a folder and of everything, a new ZIP made from files
 * selected in the grid, and a narrow screen.
 */
const PASSWORD = 'correct horse battery';
const README = '# Hello from the archive\n';
const SETUP = 'Step one: unpack.\n';
const BIG = 200 * 1024;

describe('archives in the web app', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let page: Page;
  let owner: Awaited<ReturnType<typeof signUp>>;
  let folderId = '';
  const problems: string[] = [];

  const shot = async (name: string, target: Page = page) => {
    await target.evaluate('window.scrollTo(0, 0)');
    await target.screenshot({ path: path.join(screenshotDir, `${name}.png`), fullPage: true, animations: 'disabled' });
  };
  const signIn = async (target: Page) => {
    await target.goto(`${server.baseUrl}/app/signin`);
    await target.getByLabel('Email').fill(owner.email);
    await target.getByLabel('Password').fill(PASSWORD);
    await target.getByRole('button', { name: 'Sign in', exact: true }).click();
    await target.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  };
  const contents = () => page.getByRole('dialog', { name: 'Contents of bundle.zip' });
  const openContents = async () => {
    await page.getByRole('button', { name: 'Contents of bundle.zip' }).click();
    await contents().getByTestId('archive-totals').waitFor();
  };

  beforeAll(async () => {
    fs.mkdirSync(screenshotDir, { recursive: true });
    server = await startTestServer();
    owner = await signUp(server.baseUrl, 'ines@example.test', PASSWORD);
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    watchPage(page, problems);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  test('an uploaded ZIP shows its entries as a tree, with sizes and the encrypted one marked', async () => {
    await signIn(page);
    const zip = await encryptedFlagZip(
      [
        { dir: 'docs' },
        { name: 'docs/readme.md', data: README },
        { name: 'docs/guides/setup.txt', data: SETUP },
        { name: 'big.bin', data: new Uint8Array(BIG) },
        { name: 'secret.txt', data: 'not really secret' },
        { name: 'top.txt', data: 'at the top' },
      ],
      'secret.txt',
    );
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Upload' }).click();
    await page.getByTestId('file-input').setInputFiles({ name: 'bundle.zip', mimeType: 'application/zip', buffer: zip });
    await page.locator('[data-testid=upload-item][data-status=done]', { hasText: 'bundle.zip' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Files' }).click();
    await page.getByTestId('file-card').filter({ hasText: 'bundle.zip' }).waitFor();

    // The archive code arrives only when it is first opened.
    const loaded = page.waitForRequest((request) => /\/assets\/archive-[^/]+\.js$/.test(request.url()));
    await openContents();
    await loaded;
    const dialog = contents();
    // 6 entries: 5 files and the docs directory (docs/guides is only implied); 200 KiB + 70 bytes.
    await expect(dialog.getByTestId('archive-totals').textContent()).resolves.toBe('ZIP 6 entries · 200 KiB uncompressed · 1 directory');
    const tree = dialog.getByRole('list', { name: 'Contents of bundle.zip' });
    // Small archives open fully: the nested file is shown inside its directories, with its size.
    const docs = tree.getByTestId('archive-directory').filter({ has: page.getByRole('button', { name: 'docs', exact: true }) });
    await expect(docs.getByRole('button', { name: 'docs', exact: true }).getAttribute('aria-expanded')).resolves.toBe('true');
    await expect(docs.getByRole('button', { name: 'guides', exact: true }).getAttribute('aria-expanded')).resolves.toBe('true');
    const setup = docs.getByTestId('archive-entry').filter({ hasText: 'setup.txt' });
    await expect(setup.textContent()).resolves.toContain('18 B');
    await expect(tree.getByTestId('archive-entry').filter({ hasText: 'big.bin' }).textContent()).resolves.toContain('200 KiB');
    await expect(docs.textContent()).resolves.toContain('2 files · 43 B');
    // Directories come first, then files, each by name.
    const names = await tree.locator(':scope > li').evaluateAll((items) => items.map((item) => item.querySelector('.archive-name')!.textContent));
    expect(names).toEqual(['docs', 'big.bin', 'secret.txt', 'top.txt']);
    // The encrypted entry is marked, cannot be selected and has no download.
    const secret = tree.getByTestId('archive-entry').filter({ hasText: 'secret.txt' });
    await secret.getByText('Encrypted').waitFor();
    await expect(secret.getByRole('checkbox').isDisabled()).resolves.toBe(true);
    await expect(secret.getByRole('link').count()).resolves.toBe(0);
    await shot('archives-01-contents');

    // A directory folds and unfolds from the keyboard.
    await docs.getByRole('button', { name: 'docs', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect(docs.getByRole('button', { name: 'docs', exact: true }).getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(dialog.getByText('readme.md').count()).resolves.toBe(0);
    await page.keyboard.press('Space');
    await dialog.getByText('readme.md').waitFor();
    await dialog.getByRole('button', { name: 'Collapse all' }).click();
    await expect(tree.getByTestId('archive-entry').count()).resolves.toBe(3);
    await dialog.getByRole('button', { name: 'Expand all' }).click();
    await expect(tree.getByTestId('archive-entry').count()).resolves.toBe(5);

    // Selecting a directory selects its files; the group box shows "some" when one is taken out.
    await dialog.getByRole('checkbox', { name: 'Select everything in docs', exact: true }).check();
    await dialog.getByText('2 files selected').waitFor();
    await dialog.getByRole('checkbox', { name: 'Select docs/guides/setup.txt' }).uncheck();
    await expect(dialog.getByRole('checkbox', { name: 'Select everything in docs', exact: true }).evaluate((box: any) => box.indeterminate)).resolves.toBe(true);
    await dialog.getByRole('checkbox', { name: 'Select all', exact: true }).check();
    await dialog.getByText('4 files selected').waitFor();
    await dialog.getByRole('checkbox', { name: 'Select all', exact: true }).uncheck();
    await dialog.getByText('0 files selected').waitFor();
  });

  test('one entry downloads with its own name and bytes', async () => {
    const dialog = contents();
    const link = dialog.getByRole('link', { name: 'Download docs/readme.md' });
    expect(await link.getAttribute('href')).toMatch(/^\/api\/archives\/[^/]+\/entry\?path=docs%2Freadme\.md$/);
    const download = page.waitForEvent('download');
    await link.click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('readme.md');
    expect(fs.readFileSync((await file.path())!, 'utf8')).toBe(README);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  test('a full server says to try again, and trying again shows the contents', async () => {
    await page.route(/\/api\/archives\/[^/?]+$/, (route) =>
      route.fulfill({ status: 503, headers: { 'Retry-After': '5' }, contentType: 'application/json', body: JSON.stringify({ error: 'Too many archives are being read right now; try again shortly' }) }),
    );
    await page.getByRole('button', { name: 'Contents of bundle.zip' }).click();
    const dialog = contents();
    await dialog.getByRole('alert').getByText('The server is busy with other archives. Try again in 5 seconds.').waitFor();
    await shot('archives-02-busy');
    await page.unroute(/\/api\/archives\/[^/?]+$/);
    await dialog.getByRole('button', { name: 'Try again' }).click();
    await dialog.getByTestId('archive-totals').waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  test('a file that is not an archive after all says so', async () => {
    // Named like an archive, so the app offers its contents; the server reads the bytes and refuses.
    const form = new FormData();
    form.append('file', new Blob(['just some text'], { type: 'application/octet-stream' }), 'fake.zip');
    expect((await owner.request('POST', '/api/files', { body: form })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Contents of fake.zip' }).click();
    const dialog = page.getByRole('dialog', { name: 'Contents of fake.zip' });
    await dialog.getByRole('alert').getByText(/not a ZIP or tar archive/).waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  test('a selection is extracted into a folder; the summary lists the new files and the skipped entry with its reason', async () => {
    const folder = await owner.post('/api/folders', { name: 'Unpacked', parentId: null });
    expect(folder.status, folder.text).toBe(201);
    folderId = folder.body.data.folder.id;
    // big.bin (200 KiB) is over this limit, so the server skips it; the ZIP itself is already stored.
    expect((await owner.patch('/api/settings', { maxUploadSizeBytes: 100 * 1024 })).status).toBe(200);
    await page.reload(); // the Files page reads the folders when it opens
    await openContents();
    const dialog = contents();
    await dialog.getByRole('checkbox', { name: 'Select everything in docs', exact: true }).check();
    await dialog.getByRole('checkbox', { name: 'Select big.bin' }).check();
    await dialog.getByLabel('Extract into').selectOption({ label: 'Unpacked' });
    const sent = page.waitForRequest((request) => request.method() === 'POST' && /\/api\/archives\/[^/]+\/extract$/.test(request.url()));
    await dialog.getByRole('button', { name: 'Extract 3 selected files' }).click();
    expect((await sent).postDataJSON()).toEqual({ folderId, paths: expect.arrayContaining(['docs/readme.md', 'docs/guides/setup.txt', 'big.bin']) });

    const summary = dialog.getByTestId('extraction-summary');
    await summary.getByRole('heading', { name: 'Extracted 2 files into Unpacked' }).waitFor();
    // The focus moved from the form (now gone) to the summary.
    await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe('Extracted 2 files into Unpacked');
    const created = summary.getByRole('list', { name: 'Extracted files' });
    await expect(created.getByRole('link').allTextContents()).resolves.toEqual(['readme.md', 'setup.txt']);
    expect(await created.getByRole('link', { name: 'readme.md' }).getAttribute('href')).toMatch(new RegExp(`^${server.baseUrl}/[a-z0-9]+/readme\\.md$`));
    const skipped = summary.getByRole('list', { name: 'Skipped entries' }).getByRole('listitem');
    await expect(skipped.count()).resolves.toBe(1);
    await expect(skipped.textContent()).resolves.toBe(`big.bin${'larger than the maximum upload size of 100 KiB'}`);
    await shot('archives-04-extracted');
    expect((await owner.patch('/api/settings', { maxUploadSizeBytes: 1024 ** 3 })).status).toBe(200);

    // The list was read again: the new files are in the grid, in the folder, with the entries' bytes.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('file-card').filter({ hasText: 'setup.txt' }).waitFor();
    const inFolder = await owner.get(`/api/files?folder=${folderId}&sortBy=name`);
    expect(inFolder.body.data.map((f: { name: string }) => f.name)).toEqual(['readme.md', 'setup.txt']);
    const readme = inFolder.body.data.find((f: { name: string }) => f.name === 'readme.md');
    expect((await owner.get(`/api/files/${readme.id}/download`)).text).toBe(README);
  });

  test('Extract all takes every file and reports the encrypted one as skipped', async () => {
    await openContents();
    const dialog = contents();
    const sent = page.waitForRequest((request) => request.method() === 'POST' && /\/extract$/.test(request.url()));
    await dialog.getByRole('button', { name: 'Extract all' }).click();
    // No paths: the server takes every file entry, also any beyond a cut-off list.
    expect((await sent).postDataJSON()).toEqual({ folderId: null });
    const summary = dialog.getByTestId('extraction-summary');
    await summary.getByRole('heading', { name: 'Extracted 4 files into Unfiled' }).waitFor();
    await expect(summary.getByRole('list', { name: 'Skipped entries' }).textContent()).resolves.toMatch(/^secret\.txtencrypted/);
    await summary.getByRole('button', { name: 'Back to the contents' }).click();
    await dialog.getByTestId('archive-totals').waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByTestId('file-card').filter({ hasText: 'top.txt' }).waitFor();
  });

  test('a selection too large for one request body is extracted in several', async () => {
    // 50 files four directories deep: each path is about 420 bytes, so 49 of them are over the
    // archive routes' 16 KiB body limit.
    const deep = ['a', 'b', 'c', 'd'].map((letter) => letter.repeat(100)).join('/');
    const zip = await zipBytes(Array.from({ length: 50 }, (_, i) => ({ name: `${deep}/file-${String(i + 1).padStart(2, '0')}.txt`, data: `file ${i + 1}` })));
    expect((await uploadFile(owner, 'deep.zip', zip, { type: 'application/zip' })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Contents of deep.zip' }).click();
    const dialog = page.getByRole('dialog', { name: 'Contents of deep.zip' });
    await dialog.getByTestId('archive-totals').waitFor();
    await dialog.getByRole('checkbox', { name: 'Select all', exact: true }).check();
    await dialog.getByRole('checkbox', { name: `Select ${deep}/file-07.txt` }).uncheck();
    const bodies: string[] = [];
    const onRequest = (request: { method(): string; url(): string; postData(): string | null }) => {
      if (request.method() === 'POST' && /\/extract$/.test(request.url())) bodies.push(request.postData()!);
    };
    page.on('request', onRequest);
    await dialog.getByRole('button', { name: 'Extract 49 selected files' }).click();
    await dialog.getByTestId('extraction-summary').getByRole('heading', { name: 'Extracted 49 files into Unfiled' }).waitFor();
    page.off('request', onRequest);
    expect(bodies).toHaveLength(2);
    for (const body of bodies) expect(Buffer.byteLength(body)).toBeLessThanOrEqual(16 * 1024);
    const sent = bodies.flatMap((body) => JSON.parse(body).paths as string[]);
    expect(new Set(sent).size).toBe(49);
    expect(sent).not.toContain(`${deep}/file-07.txt`);
    await expect(dialog.getByRole('list', { name: 'Skipped entries' }).count()).resolves.toBe(0);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    // Out of the way of the next test's grid.
    const made = await owner.get('/api/files?search=file-&limit=100');
    expect(made.body.data).toHaveLength(49);
    for (const file of made.body.data) expect((await owner.delete(`/api/files/${file.id}`)).status).toBe(204);
    await page.reload();
    await page.getByTestId('file-card').filter({ hasText: 'top.txt' }).waitFor();
  });

  test('files selected in the grid become a new ZIP in the library', async () => {
    await page.getByRole('checkbox', { name: 'Select top.txt' }).check();
    await page.getByRole('checkbox', { name: 'Select big.bin' }).check();
    const bar = page.getByRole('region', { name: 'Selected files' });
    await bar.getByText('2 files selected').waitFor();
    await bar.getByRole('button', { name: 'Create archive' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create archive' });
    const day = new Date();
    const pad = (n: number) => String(n).padStart(2, '0');
    await expect(dialog.getByLabel('Name').inputValue()).resolves.toBe(`archive-${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())}.zip`);
    // The form arrives after the dialog opened (its code is loaded on first use): it takes the focus
    // from the Close button, the only control there was.
    await expect.poll(() => dialog.getByLabel('Name').evaluate((element) => element === element.ownerDocument.activeElement)).toBe(true);
    await dialog.getByText('The 2 selected files go into one ZIP file of yours.', { exact: false }).waitFor();
    await dialog.getByLabel('Name').fill('picked');
    await dialog.getByLabel('Folder').selectOption({ label: 'Unpacked' });
    await shot('archives-05-create');
    const sent = page.waitForRequest((request) => request.method() === 'POST' && request.url().endsWith('/api/archives'));
    await dialog.getByRole('button', { name: 'Create archive' }).click();
    const body = (await sent).postDataJSON();
    expect(body.name).toBe('picked');
    expect(body.folderId).toBe(folderId);
    expect(body.fileIds).toHaveLength(2);

    const result = dialog.getByTestId('archive-created');
    await result.getByRole('heading', { name: /^Created picked\.zip/ }).waitFor();
    expect(await result.getByTestId('archive-link').textContent()).toMatch(new RegExp(`^${server.baseUrl}/[a-z0-9]+/picked\\.zip$`));
    await shot('archives-06-created');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });

    // The list was read again: the new ZIP is there, holding the two files, and its contents open.
    const card = page.getByTestId('file-card').filter({ hasText: 'picked.zip' });
    await card.waitFor();
    const listing = await owner.get('/api/files?search=picked');
    const manifest = await owner.get(`/api/archives/${listing.body.data[0].id}`);
    expect(manifest.body.data.entries.map((e: { path: string; size: number }) => [e.path, e.size]).sort()).toEqual([
      ['big.bin', BIG],
      ['top.txt', 10],
    ]);
    await card.getByRole('button', { name: 'Contents of picked.zip' }).click();
    const opened = page.getByRole('dialog', { name: 'Contents of picked.zip' });
    await opened.getByTestId('archive-totals').getByText('2 entries · 200 KiB uncompressed').waitFor();
    await page.keyboard.press('Escape');
    await opened.waitFor({ state: 'detached' });
    await bar.getByRole('button', { name: 'Clear selection' }).click();
  });

  test('a large archive opens with its directories closed; Create archive stops at 500 files and says why', async () => {
    expect((await uploadFile(owner, 'many.zip', manyEntriesZip(501), { type: 'application/zip' })).status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Contents of many.zip' }).click();
    const dialog = page.getByRole('dialog', { name: 'Contents of many.zip' });
    await dialog.getByTestId('archive-totals').waitFor();
    const folder = dialog.getByRole('button', { name: 'f', exact: true });
    await expect(folder.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(dialog.getByTestId('archive-entry').count()).resolves.toBe(0);
    await dialog.getByRole('button', { name: 'Extract all' }).click();
    await dialog.getByRole('heading', { name: 'Extracted 501 files into Unfiled' }).waitFor({ timeout: 60_000 });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    // The selection survives paging: 96 a page, six pages. Each later page answers late, so the
    // pager names it while the last page's files are still shown: "Select all on this page" must
    // wait for the files of the page it names.
    const later = /\/api\/files\?.*page=\d/;
    await page.route(later, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      await route.continue();
    });
    await page.goto(`${server.baseUrl}/app/files?search=000&limit=96`);
    await page.getByText('501 files', { exact: true }).waitFor();
    for (let n = 1; n <= 6; n++) {
      if (n > 1) await page.getByRole('button', { name: 'Next' }).click();
      await page.getByRole('navigation', { name: 'Pages' }).getByText(`Page ${n} of 6`).waitFor();
      await page.getByLabel('Select all on this page').check();
    }
    await page.unroute(later);
    const bar = page.getByRole('region', { name: 'Selected files' });
    await bar.getByText('501 files selected').waitFor();
    const create = bar.getByRole('button', { name: 'Create archive' });
    await expect(create.isDisabled()).resolves.toBe(true);
    await bar.getByText('An archive holds at most 500 files: select fewer to create one.').waitFor();
    expect(await create.getAttribute('aria-describedby')).toBe('archive-limit');
    await shot('archives-07-limit');
    await page.getByTestId('file-card').first().getByRole('checkbox').uncheck();
    await bar.getByText('500 files selected').waitFor();
    await expect(create.isEnabled()).resolves.toBe(true);
    await expect(bar.getByText('An archive holds at most 500 files').count()).resolves.toBe(0);
    await bar.getByRole('button', { name: 'Clear selection' }).click();
  });

  test('an archive of more entries than the manifest lists says so', async () => {
    // The server's cut at 10,000 entries is tested with the routes; here its answer is marked cut
    // (a real 10,001-entry manifest costs seconds of the test servers' response checks).
    const manifestRoute = /\/api\/archives\/[^/?]+$/;
    await page.route(manifestRoute, async (route) => {
      const answer = await route.fetch();
      const body = await answer.json();
      await route.fulfill({ response: answer, json: { ...body, data: { ...body.data, truncated: true, entryCount: 10_001 } } });
    });
    let sent: unknown = null;
    await page.route(/\/extract$/, async (route) => {
      sent = route.request().postDataJSON();
      await route.fulfill({ status: 201, json: { success: true, data: { files: [], skipped: [] } } });
    });
    await page.goto(`${server.baseUrl}/app/files?search=bundle`);
    await openContents();
    const dialog = contents();
    await expect(dialog.getByTestId('archive-totals').textContent()).resolves.toMatch(/^ZIP 10,001 entries · /);
    await dialog.getByRole('note').getByText('Only the first 6 of 10,001 entries are listed. Extract all takes every file of the archive, listed or not.').waitFor();
    await shot('archives-08-truncated');
    // Every listed file is not every file: the selection goes as paths, not as "everything".
    await dialog.getByRole('checkbox', { name: 'Select all', exact: true }).check();
    await dialog.getByRole('button', { name: 'Extract 4 selected files' }).click();
    await dialog.getByRole('heading', { name: 'No file was extracted' }).waitFor();
    expect(sent).toEqual({ folderId: null, paths: expect.arrayContaining(['docs/readme.md', 'docs/guides/setup.txt', 'big.bin', 'top.txt']) });
    await page.unroute(manifestRoute);
    await page.unroute(/\/extract$/);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  test('dark theme and a 390 px screen: the contents fit without sideways scrolling', async () => {
    const phone = await launchBrowser({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      const small = phone.context.pages()[0] ?? (await phone.context.newPage());
      watchPage(small, problems);
      await signIn(small);
      await small.goto(`${server.baseUrl}/app/files?search=bundle`);
      await small.getByRole('button', { name: 'Contents of bundle.zip' }).click();
      const dialog = small.getByRole('dialog', { name: 'Contents of bundle.zip' });
      await dialog.getByText('setup.txt').waitFor();
      await shot('archives-03-phone-contents', small);
      await expect(small.evaluate('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(390);
      await expect(dialog.evaluate((element: any) => element.scrollWidth <= element.clientWidth)).resolves.toBe(true);
    } finally {
      await phone.close();
    }
    expect(problems).toEqual([]);
  });
});
