import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Chromium binary the browser tests drive; '' when none could be found or installed. */
    chromiumPath: string;
  }
}

/** The Chromium found (or installed) by test/browser/global-setup.ts. */
export const chromiumPath = (): string => inject('chromiumPath') ?? '';

/** Where screenshots go (git-ignored). */
export const screenshotDir = path.resolve('test-results', 'browser');

export interface BrowserSession {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A headless Chromium with a fresh profile directory: nothing from another run (cookies, cache,
 * storage) leaks in, and no background network traffic leaves.
 */
export async function launchBrowser(options: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {}): Promise<BrowserSession> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath(),
    headless: true,
    chromiumSandbox: false,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: options.viewport ?? { width: 1280, height: 860 },
    colorScheme: options.colorScheme ?? 'light',
    acceptDownloads: true,
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Records into `problems` what a page must never show: an uncaught script error, or a Content
 * Security Policy violation (the served policy and the page disagree).
 */
export function watchPage(page: Page, problems: string[]): void {
  page.on('pageerror', (error) => problems.push(`${error.name}: ${error.message}`));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) problems.push(message.text());
  });
}
