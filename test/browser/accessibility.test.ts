/**
 * The web app used as a keyboard user, a screen-reader user and a phone user would (docs/web.md,
 * "Accessibility"): axe-core on every page and dialog in both themes at 1280 and 390 px, nothing
 * wider than the window, focus returned when a dialog closes, dropdowns that close on Escape, and a
 * focused control never under the sticky header. axe runs through the DevTools protocol
 * (page.evaluate), so the app keeps its Content Security Policy.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { launchBrowser, watchPage, type BrowserSession } from '../support/browser.ts';
import { signUp, uniqueEmail } from '../support/client.ts';
import { createToken, PNG_1X1, uploadFile } from '../support/uploads.ts';

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/** axe-core's violations on the page as it is now (WCAG 2.2 A and AA, and best practices). */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource);
  const found = (await page.evaluate(`window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as Violation[];
  return found.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const widths = [1280, 390] as const;
const themes = ['light', 'dark'] as const;

describe('the web app for keyboards, screen readers and phones', () => {
  let server: TestServer;
  const problems: string[] = [];
  let owner: Awaited<ReturnType<typeof signUp>>;
  const sessions: BrowserSession[] = [];
  let sharedFolderUrl = '';
  let sharedFolderId = '';

  beforeAll(async () => {
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await signUp(server.baseUrl);
    await owner.patch('/api/settings', { registration: 'open' });
    await signUp(server.baseUrl, uniqueEmail('second'));
    const folder = (await owner.post('/api/folders', { name: 'Receipts' })).body.data.folder.id as string;
    // Shared, so its public page and the dialog's shared state are looked at too.
    sharedFolderUrl = (await owner.put(`/api/folders/${folder}/share`)).body.data.share.url as string;
    sharedFolderId = folder;
    const tag = (await owner.post('/api/tags', { name: 'work' })).body.data.tag.id as string;
    await owner.post('/api/upload-profiles', { name: 'Screenshots', options: { visibility: 'PRIVATE', tagIds: [tag] } });
    for (let i = 0; i < 33; i++) {
      const name = i % 3 === 0 ? `budget-2026-${i}.csv` : i % 3 === 1 ? `screenshot-${i}.png` : `notes-${i}.txt`;
      const content = name.endsWith('.png') ? PNG_1X1 : `line ${i}\n`;
      const answer = await uploadFile(owner, name, content, { type: name.endsWith('.png') ? 'image/png' : name.endsWith('.csv') ? 'text/csv' : 'text/plain', headers: i % 4 === 0 ? { 'X-Upload-Folder': folder } : {} });
      expect(answer.status, answer.text).toBe(200);
    }
    await owner.post('/api/urls', { url: 'https://example.com/a/long/path/to/share' });
    await createToken(owner, ['files:read']);
    expect((await owner.post('/api/webhooks', { name: 'Chat relay', url: 'http://127.0.0.1:9/hook' })).status).toBe(201);
  });

  afterAll(async () => {
    for (const session of sessions) await session.close();
    await server?.close();
  });

  /** A signed-in tab of a new browser with the theme and width asked for. */
  async function open(theme: (typeof themes)[number], width: number): Promise<Page> {
    const session = await launchBrowser({ colorScheme: theme, viewport: { width, height: 860 } });
    sessions.push(session);
    await session.context.addCookies([{ name: 'hoard_session', value: owner.cookies.get('hoard_session')!, url: server.baseUrl }]);
    const page = session.context.pages()[0] ?? (await session.context.newPage());
    watchPage(page, problems);
    return page;
  }

  const pages = ['/app/files', '/app/files?view=list', '/app/upload', '/app/links', '/app/integrations', '/app/integrations?tab=webhooks', '/app/organisation', '/app/organisation?tab=folders', '/app/account', '/app/security', '/app/admin', '/app/admin?tab=invites', '/app/admin?tab=takedown', '/app/admin?tab=activity', '/app/admin?tab=changes', '/app/no/such/page'];

  for (const theme of themes) {
    for (const width of widths) {
      // The pages are only looked at here, each combination in its own browser, and most of the
      // time goes to waiting for pages to settle: the combinations and the narrowest width (below)
      // run at once, before the tests that change the library.
      test.concurrent(`every page passes axe and fits the window: ${theme} theme, ${width} px`, { timeout: 240_000 }, async () => {
        const page = await open(theme, width);
        for (const path of pages) {
          await page.goto(server.baseUrl + path);
          await page.locator('main h1').waitFor();
          await page.waitForLoadState('networkidle');
          expect(await violations(page), `${path}`).toEqual([]);
          const { scrollWidth, innerWidth } = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
          expect(scrollWidth, `${path} is wider than the window`).toBeLessThanOrEqual(innerWidth);
        }
        // An upload a reload cut off, as the Upload page lists it (docs/web.md, "Upload").
        const kept = { account: owner.userId, name: 'holiday-video.mp4', size: 40 * 1024 * 1024, lastModified: 1, settings: '["","",[]]', uploadId: 'nosuchsession', partSize: 8 * 1024 * 1024, parts: [[1, 'etag', '']], keptAt: Date.now() };
        await page.evaluate((entry) => globalThis.localStorage.setItem('hoard.chunkedUploads', JSON.stringify({ kept: entry })), kept);
        await page.goto(`${server.baseUrl}/app/upload`);
        await page.getByTestId('interrupted-uploads').waitFor();
        expect(await violations(page), 'unfinished uploads').toEqual([]);
        const upload = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
        expect(upload.scrollWidth, 'the unfinished uploads are wider than the window').toBeLessThanOrEqual(upload.innerWidth);
        await page.evaluate(() => globalThis.localStorage.removeItem('hoard.chunkedUploads'));
        // A webhook's delivery log, opened under its row.
        await page.goto(`${server.baseUrl}/app/integrations?tab=webhooks`);
        await page.getByRole('button', { name: 'Deliveries of Chat relay' }).click();
        await page.getByRole('heading', { name: /^Delivery log/ }).waitFor();
        expect(await violations(page), 'delivery log').toEqual([]);
        const log = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
        expect(log.scrollWidth, 'the delivery log is wider than the window').toBeLessThanOrEqual(log.innerWidth);
        // The dialogs: the file editor, the image viewer, a confirmation.
        await page.goto(`${server.baseUrl}/app/files`);
        await page.getByRole('button', { name: /^Edit notes-/ }).first().click();
        await page.getByRole('dialog').waitFor();
        expect(await violations(page), 'file editor').toEqual([]);
        await page.keyboard.press('Escape');
        await page.getByRole('button', { name: /^View screenshot-/ }).first().click();
        await page.getByRole('dialog').waitFor();
        expect(await violations(page), 'image viewer').toEqual([]);
        await page.keyboard.press('Escape');
        await page.getByRole('button', { name: /^Delete notes-/ }).first().click();
        await page.getByRole('dialog').waitFor();
        expect(await violations(page), 'confirmation').toEqual([]);
        await page.keyboard.press('Escape');
        // A shared folder: its dialog, and its public page (outside the app).
        await page.goto(`${server.baseUrl}/app/organisation?tab=folders`);
        await page.getByRole('button', { name: 'Share folder Receipts' }).click();
        await page.getByRole('dialog').getByLabel('Public address').waitFor();
        expect(await violations(page), 'folder share dialog').toEqual([]);
        await page.keyboard.press('Escape');
        // The Files page filtered by it, which says where its page is.
        await page.goto(`${server.baseUrl}/app/files?folder=${sharedFolderId}`);
        await page.getByTestId('folder-share-note').waitFor();
        await page.waitForLoadState('networkidle');
        expect(await violations(page), 'files of a shared folder').toEqual([]);
        const filtered = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
        expect(filtered.scrollWidth, 'the files of a shared folder are wider than the window').toBeLessThanOrEqual(filtered.innerWidth);
        await page.goto(sharedFolderUrl);
        await page.getByRole('heading', { name: 'Receipts' }).waitFor();
        expect(await violations(page), 'shared folder page').toEqual([]);
        const shared = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
        expect(shared.scrollWidth, 'the shared folder page is wider than the window').toBeLessThanOrEqual(shared.innerWidth);
        expect(problems).toEqual([]);
      });
    }
  }

  test.concurrent('no page is wider than the window on the narrowest phones (320 px)', { timeout: 240_000 }, async () => {
    const page = await open('light', 320);
    // With the files of a shared folder, whose note holds its long address.
    for (const path of [...pages, `/app/files?folder=${sharedFolderId}`]) {
      await page.goto(server.baseUrl + path);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      const { scrollWidth, innerWidth } = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
      expect(scrollWidth, `${path} is wider than the window`).toBeLessThanOrEqual(innerWidth);
    }
  });

  test('focus goes back where it was when a dialog closes, and to the next card after a deletion', async () => {
    const page = await open('light', 1280);
    await page.goto(`${server.baseUrl}/app/files`);
    const focused = () => page.evaluate('document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.tagName ?? null');

    const edit = page.getByRole('button', { name: /^Edit notes-/ }).first();
    const editLabel = await edit.getAttribute('aria-label');
    const dialogs = () => page.evaluate('document.querySelectorAll("dialog").length') as Promise<number>;
    const before = await dialogs();
    for (const close of ['Escape', 'Cancel', 'Save'] as const) {
      await edit.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog');
      await dialog.waitFor();
      if (close === 'Escape') await page.keyboard.press('Escape');
      else await dialog.getByRole('button', { name: close, exact: true }).click();
      await dialog.waitFor({ state: 'hidden' });
      await expect.poll(focused, { message: `after ${close}` }).toBe(editLabel);
      // The editor is closed as a dialog, not taken off the page.
      expect(await dialogs()).toBe(before + 1);
    }

    const view = page.getByRole('button', { name: /^View screenshot-/ }).first();
    const viewLabel = await view.getAttribute('aria-label');
    await view.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(focused).toBe(viewLabel);
    expect(await dialogs()).toBe(before + 2);

    // From the viewer to the editor and out: focus goes back to the card the viewer was opened from.
    await view.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('dialog').getByRole('button', { name: 'Edit', exact: true }).click();
    const editor = page.getByRole('dialog', { name: /^Edit screenshot-/ });
    await editor.waitFor();
    await page.keyboard.press('Escape');
    await editor.waitFor({ state: 'hidden' });
    await expect.poll(focused).toBe(viewLabel);

    // Deleting a card: focus goes to the next card's first control.
    const cards = page.getByTestId('file-card');
    const second = await cards.nth(1).getAttribute('data-item-key');
    await cards.first().locator('[data-action="delete"]').click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await expect.poll(() => page.evaluate('document.activeElement?.closest("[data-item-key]")?.getAttribute("data-item-key") ?? null')).toBe(second);
  });

  test('the type and visibility filters are named by their label and close on Escape and outside clicks', async () => {
    const page = await open('light', 390);
    await page.goto(`${server.baseUrl}/app/files`);
    for (const label of ['Type', 'Visibility']) {
      // Named by its label first, then the choice it shows ("Type Any type").
      const summary = page.locator('.filters .field').filter({ has: page.locator('.field-label', { hasText: label }) }).locator('summary');
      await expect.poll(() => summary.count(), { message: `one dropdown labelled ${label}` }).toBe(1);
      const name = await summary.evaluate((element) => (element.getAttribute('aria-labelledby') ?? '').split(' ').map((id: string) => element.ownerDocument.getElementById(id)?.textContent ?? '').join(' '));
      expect(name).toMatch(new RegExp(`^${label} Any ${label.toLowerCase()}$`));
      await summary.click();
      const panel = summary.locator('xpath=..').locator('.dropdown-panel');
      await panel.waitFor();
      // The panel stays inside the window.
      const box = (await panel.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
      await page.keyboard.press('Escape');
      await panel.waitFor({ state: 'hidden' });
      expect(await page.evaluate('document.activeElement?.tagName')).toBe('SUMMARY');
      await summary.click();
      await panel.waitFor();
      await page.locator('main h1').click();
      await panel.waitFor({ state: 'hidden' });
    }
  });

  test('a focused control is never under the sticky header, also when tabbing backwards', async () => {
    const page = await open('light', 1280);
    await page.goto(`${server.baseUrl}/app/files`);
    await page.getByTestId('file-card').first().waitFor();
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
    const header = (await page.locator('header.topbar').boundingBox())!;
    let checked = 0;
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Shift+Tab');
      const top = (await page.evaluate(`(() => {
        const element = document.activeElement;
        if (!element || element === document.body || element.closest('header')) return null;
        return element.getBoundingClientRect().top;
      })()`)) as number | null;
      if (top === null) continue;
      checked += 1;
      expect(top, `focused control ${i} at ${top} px`).toBeGreaterThanOrEqual(header.y + header.height);
    }
    expect(checked).toBeGreaterThan(20);
  });
  /** What has the keyboard's focus: its tag and its accessible words. */
  const focusedOn = (page: Page) =>
    page.evaluate(`(() => { const e = document.activeElement; return e ? { tag: e.tagName, text: (e.getAttribute('aria-label') || e.textContent || '').trim() } : null; })()`) as Promise<{ tag: string; text: string } | null>;

  test("the focus is never dropped to the page's body: a link inside a page, Back, a saved or undone role, a dismissed toast", { timeout: 120_000 }, async () => {
    expect((await owner.post('/api/roles', { name: 'Testers', permissions: ['files.read'] })).status).toBe(201);
    const page = await open('light', 1280);
    await page.goto(`${server.baseUrl}/app/files`);
    await page.getByTestId('file-card').first().waitFor();
    // A link inside the page that opens another page: the new page's heading has the focus.
    await page.getByRole('main').getByRole('link', { name: 'Upload' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    await expect.poll(() => focusedOn(page)).toEqual({ tag: 'H1', text: 'Upload' });
    await page.goBack();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    await expect.poll(() => focusedOn(page)).toEqual({ tag: 'H1', text: 'Files' });

    // A role saved with the keyboard: Save is disabled once saved, the role's heading has the focus.
    // Opened, the page leaves the focus where the browser puts it.
    await page.goto(`${server.baseUrl}/app/admin?tab=roles`);
    const role = page.getByRole('form', { name: 'Role Testers' });
    await role.waitFor();
    await expect.poll(() => focusedOn(page)).toMatchObject({ tag: 'BODY' });
    await role.getByRole('checkbox').nth(1).focus();
    await page.keyboard.press('Space');
    await role.getByRole('button', { name: 'Save Testers' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Saved role Testers').waitFor();
    await expect.poll(() => focusedOn(page)).toMatchObject({ tag: 'H2', text: expect.stringContaining('Testers') });
    // Undone: the Undo button goes, and so does nothing else.
    await role.getByRole('checkbox').nth(2).focus();
    await page.keyboard.press('Space');
    await role.getByRole('button', { name: 'Undo changes' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedOn(page)).toMatchObject({ tag: 'H2', text: expect.stringContaining('Testers') });

    // The toast stays while the keyboard is on it (past its 4 s), and Dismiss gives the focus back.
    await page.getByRole('status').getByRole('button', { name: 'Dismiss' }).focus();
    await page.waitForTimeout(4_500);
    await expect(page.getByRole('status').getByText('Saved role Testers').count()).resolves.toBe(1);
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Saved role Testers').waitFor({ state: 'detached' });
    await expect.poll(() => focusedOn(page)).toMatchObject({ tag: 'H2', text: expect.stringContaining('Testers') });

    // A toast dismissed with the pointer, far down a page: the page stays where it is.
    await page.goto(`${server.baseUrl}/app/files?view=list`);
    await page.getByTestId('file-row').last().waitFor();
    const copy = page.getByRole('button', { name: /^Copy link to / }).last();
    await copy.scrollIntoViewIfNeeded();
    await copy.click();
    await page.mouse.click(2, 300);
    const scrolled = (await page.evaluate('window.scrollY')) as number;
    expect(scrolled).toBeGreaterThan(200);
    await page.getByRole('status').getByRole('button', { name: 'Dismiss' }).first().click();
    await page.waitForTimeout(300);
    expect(await page.evaluate('window.scrollY')).toBe(scrolled);
    expect(problems).toEqual([]);
  });

  test('uploads that finish together are each announced', async () => {
    const page = await open('light', 1280);
    await page.goto(`${server.baseUrl}/app/upload`);
    await page.getByRole('heading', { name: 'Upload', level: 1 }).waitFor();
    await page.evaluate(`(() => {
      window.__said = [];
      const region = document.querySelector('[data-testid=announcer]');
      new MutationObserver(() => region.textContent && window.__said.push([performance.now(), region.textContent])).observe(region, { childList: true, characterData: true, subtree: true });
    })()`);
    // Two uploads go at a time: each pair's answers are given back together, so they finish in one moment.
    const answers: Array<() => Promise<void>> = [];
    await page.route('**/api/files', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const response = await route.fetch();
      answers.push(() => route.fulfill({ response }));
      if (answers.length === 2) for (const answer of answers.splice(0)) void answer();
    });
    const names = ['said-1.txt', 'said-2.txt', 'said-3.txt', 'said-4.txt'];
    await page.getByTestId('file-input').setInputFiles(names.map((name) => ({ name, mimeType: 'text/plain', buffer: Buffer.from(name) })));
    await expect.poll(() => page.locator('[data-testid=upload-item][data-status=done]').count()).toBe(4);
    await expect.poll(async () => ((await page.evaluate('window.__said.map(([, words]) => words).join(" | ")')) as string)).toMatch(/said-4\.txt uploaded/);
    // Every upload is said, and no announcement replaces the one before at once (they are held 600 ms,
    // less the time the page takes to show them): a second one
    // written 2 ms after the first replaced it before a screen reader had said it. (Those that come
    // together are said together; on a busy machine a pair's answers may come apart, and are then
    // said one after the other.)
    const said = (await page.evaluate('window.__said')) as Array<[number, string]>;
    const text = said.map(([, words]) => words).join(' | ');
    for (const name of names) expect(said.some(([, words]) => words.includes(`${name} uploaded`)), text).toBe(true);
    for (let i = 1; i < said.length; i++) expect(said[i]![0] - said[i - 1]![0], text).toBeGreaterThanOrEqual(400);
  });

  test('a phone keeps the bulk bar in the page and closes its menu when the focus leaves it; colours hold in forced colours and the dark theme', async () => {
    const phone = await open('light', 360);
    await phone.goto(`${server.baseUrl}/app/files`);
    await phone.getByTestId('file-card').first().waitFor();
    // A file far down the list: the bar with its actions is in sight, one row at the bottom.
    await phone.getByRole('checkbox', { name: /^Select / }).last().check();
    await phone.locator('.bulk-bar').waitFor();
    const bar = (await phone.locator('.bulk-bar').boundingBox())!;
    const viewport = phone.viewportSize()!;
    expect(bar.y).toBeGreaterThan(viewport.height / 2);
    expect(bar.y + bar.height).toBeLessThanOrEqual(viewport.height);
    expect(bar.height).toBeLessThan(90);
    const menu = phone.getByRole('button', { name: 'Menu' });
    await menu.click();
    await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
    const links = await phone.getByRole('navigation', { name: 'Main' }).getByRole('link').count();
    for (let i = 0; i <= links; i++) await phone.keyboard.press('Tab');
    await expect.poll(() => menu.getAttribute('aria-expanded')).toBe('false');

    // Forced colours: the current tab is told from the others, not every tab underlined alike.
    const forced = await open('light', 1280);
    await forced.emulateMedia({ forcedColors: 'active' });
    await forced.goto(`${server.baseUrl}/app/integrations`);
    await forced.locator('.tab.active').waitFor();
    const underlines = (await forced.evaluate(`[...document.querySelectorAll('.tab')].map((tab) => [tab.classList.contains('active'), getComputedStyle(tab).borderBottomColor])`)) as Array<[boolean, string]>;
    const current = underlines.filter(([active]) => active).map(([, colour]) => colour);
    const others = underlines.filter(([active]) => !active).map(([, colour]) => colour);
    expect([current.length, others.length > 0]).toEqual([1, true]);
    for (const other of others) expect(other).not.toBe(current[0]);

    // Dark theme: an error toast's words and a field's edge meet WCAG's contrast.
    const dark = await open('dark', 1280);
    await dark.goto(`${server.baseUrl}/app/integrations`);
    await dark.locator('input[name=token-name]').waitFor();
    const contrast = (await dark.evaluate(`(() => {
      const luminance = (rgb) => { const [r, g, b] = rgb.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number).map((c) => c / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
      const ratio = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
      document.body.insertAdjacentHTML('beforeend', '<div class="toasts"><div class="toast toast-error" id="contrast-probe">x</div></div>');
      const toast = getComputedStyle(document.getElementById('contrast-probe'));
      const input = document.querySelector('input[name=token-name]');
      const card = input.closest('.card');
      return { toast: ratio(toast.color, toast.backgroundColor), field: ratio(getComputedStyle(input).borderTopColor, getComputedStyle(card).backgroundColor) };
    })()`)) as { toast: number; field: number };
    expect(contrast.toast).toBeGreaterThanOrEqual(4.5);
    expect(contrast.field).toBeGreaterThanOrEqual(3);
    expect(problems).toEqual([]);
  });

  test("a form's error is tied to its field where the field's name is not the API's", async () => {
    const page = await open('light', 1280);
    await page.goto(`${server.baseUrl}/app/integrations`);
    const form = page.getByRole('form', { name: 'Create a token' });
    await form.getByLabel('Name').fill('   ');
    await form.getByRole('checkbox').first().check();
    await form.getByRole('button', { name: /Create/ }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    const field = form.locator('input[name=token-name]');
    await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(field.getAttribute('aria-describedby')).resolves.toBe(await alert.getAttribute('id'));
  });
});
