import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { launchBrowser, screenshotDir, type BrowserSession, watchPage } from '../support/browser.ts';
import { signUp } from '../support/client.ts';

/**
 * The API reference renders in the browser from a script bundle the server ships. A header test
 * shows the policy; only a browser shows that the page still works under it, offline: every
 * request it makes stays on this server.
 */
describe('the API reference in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let page: Page;
  const violations: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchBrowser();
    // Every request of every page and worker of the browser.
    browser.context.on('request', (request) => requested.push(request.url()));
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    watchPage(page, violations);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  test('opens from Integrations → API tokens and shows the API’s operations, loading nothing from elsewhere', async () => {
    // The first account is the administrator, who may manage tokens; the browser takes its session.
    const admin = await signUp(server.baseUrl);
    await browser.context.addCookies([...admin.cookies].map(([name, value]) => ({ name, value, url: server.baseUrl })));

    await page.goto(`${server.baseUrl}/app/integrations`);
    await page.getByRole('heading', { name: 'Create a token' }).waitFor();
    await page.getByRole('link', { name: 'API reference' }).click();
    await page.waitForURL(`${server.baseUrl}/api/docs/`);

    // Rendered from /api/openapi.json: its title and an operation of the named-token API.
    await page.getByText('Hoard', { exact: true }).first().waitFor();
    await page.getByRole('link', { name: 'files', exact: true }).first().click();
    await page.getByText('/api/files', { exact: true }).first().waitFor();
    fs.mkdirSync(screenshotDir, { recursive: true });
    await page.screenshot({ path: path.join(screenshotDir, 'api-docs.png') });

    expect(requested.some((url) => url === `${server.baseUrl}/api/openapi.json`)).toBe(true);
    const elsewhere = requested.filter((url) => !url.startsWith(`${server.baseUrl}/`) && !/^(data|blob):/.test(url));
    expect(elsewhere).toEqual([]);
    expect(violations).toEqual([]);
  });
});
