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

  beforeAll(async () => {
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await signUp(server.baseUrl);
    await owner.patch('/api/settings', { registration: 'open' });
    await signUp(server.baseUrl, uniqueEmail('second'));
    const folder = (await owner.post('/api/folders', { name: 'Receipts' })).body.data.folder.id as string;
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

  const pages = ['/app/files', '/app/files?view=list', '/app/upload', '/app/links', '/app/integrations', '/app/integrations?tab=webhooks', '/app/organisation', '/app/organisation?tab=folders', '/app/account', '/app/security', '/app/admin', '/app/admin?tab=invites', '/app/admin?tab=activity', '/app/no/such/page'];

  for (const theme of themes) {
    for (const width of widths) {
      test(`every page passes axe and fits the window: ${theme} theme, ${width} px`, { timeout: 240_000 }, async () => {
        const page = await open(theme, width);
        for (const path of pages) {
          await page.goto(server.baseUrl + path);
          await page.locator('main h1').waitFor();
          await page.waitForLoadState('networkidle');
          expect(await violations(page), `${path}`).toEqual([]);
          const { scrollWidth, innerWidth } = (await page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })')) as { scrollWidth: number; innerWidth: number };
          expect(scrollWidth, `${path} is wider than the window`).toBeLessThanOrEqual(innerWidth);
        }
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
        expect(problems).toEqual([]);
      });
    }
  }

  test('no page is wider than the window on the narrowest phones (320 px)', { timeout: 120_000 }, async () => {
    const page = await open('light', 320);
    for (const path of pages) {
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
});
