import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../support/server.ts';
import { launchBrowser, type BrowserSession, watchPage } from '../support/browser.ts';
import { signUp } from '../support/client.ts';
import { PNG_1X1, uploadFile } from '../support/uploads.ts';

/**
 * The share page is server-rendered under its own strict Content-Security-Policy (docs/decisions.md,
 * "Share-page CSP"): its style and unlock script are allowed by hash, previews by origin. A header
 * test cannot show that the page still works under it; a real browser can.
 */
describe('the share page in Chromium, under its Content-Security-Policy', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let page: Page;
  let owner: Awaited<ReturnType<typeof signUp>>;
  const violations: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    owner = await signUp(server.baseUrl);
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    watchPage(page, violations);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const pageOf = (links: { body: { data: { url: string } } }) => new URL(links.body.data.url).pathname;

  test('shows its styled page and an image preview without a policy violation', async () => {
    const image = await uploadFile(owner, 'dot.png', PNG_1X1, { type: 'image/png' });
    expect(image.status, image.text).toBe(200);

    await page.goto(server.baseUrl + pageOf(image));
    await expect.poll(() => page.evaluate("[...document.images].filter((img) => img.complete && img.naturalWidth === 1).length")).toBe(1);
    // The stylesheet applied: the page's buttons are not the browser's plain links.
    expect(await page.evaluate("getComputedStyle([...document.links].find((a) => a.textContent === 'Download')).paddingTop")).not.toBe('0px');
    expect(violations).toEqual([]);
  });

  test('plays a sound or a video opened at its raw address, where the share page\'s Open raw leads', async () => {
    // One second of a 440 Hz tone: 8-bit mono PCM at 8 kHz in a WAV container.
    const samples = Buffer.from(Array.from({ length: 8000 }, (_, i) => 128 + Math.round(100 * Math.sin((2 * Math.PI * 440 * i) / 8000))));
    const header = Buffer.alloc(44);
    header.write('RIFF', 0);
    header.writeUInt32LE(36 + samples.length, 4);
    header.write('WAVEfmt ', 8);
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(8000, 24);
    header.writeUInt32LE(8000, 28);
    header.writeUInt16LE(1, 32);
    header.writeUInt16LE(8, 34);
    header.write('data', 36);
    header.writeUInt32LE(samples.length, 40);
    const sound = await uploadFile(owner, 'tone.wav', Buffer.concat([header, samples]), { type: 'audio/wav' });
    expect(sound.status, sound.text).toBe(200);
    const problems: string[] = [];
    const listen = (message: { text(): string }) => void problems.push(message.text());
    page.on('console', listen);
    try {
      await page.goto(server.baseUrl + pageOf(sound));
      await page.getByRole('link', { name: 'Open raw' }).click();
      await page.waitForURL(sound.body.data.rawUrl);
      // The media document Chromium builds around the file: it loads the sound and knows its length.
      await expect.poll(() => page.evaluate("(() => { const media = document.querySelector('video, audio'); return media ? [media.readyState >= 1, media.error?.code ?? null, Math.round(media.duration)] : null; })()")).toEqual([true, null, 1]);
      expect(problems.filter((text) => /CORS|blocked/i.test(text))).toEqual([]);
    } finally {
      page.off('console', listen);
    }
    expect(violations).toEqual([]);
  });

  test('unlocks a password-protected file through its form and shows the text', async () => {
    const locked = await uploadFile(owner, 'secret.txt', 'the hidden text', { fields: { password: 'open sesame 1' } });
    expect(locked.status, locked.text).toBe(200);

    await page.goto(server.baseUrl + pageOf(locked));
    expect(await page.getByText('the hidden text').count()).toBe(0);
    await page.locator('input[type=password]').fill('wrong password');
    await page.locator('input[type=password]').press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\S/);

    await page.locator('input[type=password]').fill('open sesame 1');
    await page.locator('input[type=password]').press('Enter');
    await page.getByText('the hidden text').waitFor();
    expect(violations).toEqual([]);
  });

  test('says when to come back once too many wrong passwords were tried', async () => {
    const locked = await uploadFile(owner, 'guarded.txt', 'guarded text', { fields: { password: 'open sesame 3' } });
    expect(locked.status, locked.text).toBe(200);
    await page.goto(server.baseUrl + pageOf(locked));
    for (let i = 0; i < 11; i++) {
      await page.locator('input[type=password]').fill(`wrong ${i}`);
      await page.locator('input[type=password]').press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/\S/);
      if (/Too many/.test((await page.getByRole('alert').textContent()) ?? '')) break;
      await page.evaluate("document.getElementById('error').textContent = ''");
    }
    // The server's words, which say when, not "try again later".
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Too many wrong passwords; try again in \d+ minutes?$/);
    expect(violations).toEqual([]);
  });

  test('unlocks through its form without JavaScript too, the password never in the address', async () => {
    const locked = await uploadFile(owner, 'no-script.txt', 'text for a browser without scripts', { fields: { password: 'open sesame 2' } });
    expect(locked.status, locked.text).toBe(200);
    const plain = await launchBrowser({ javaScriptEnabled: false });
    try {
      const noScript = plain.context.pages()[0] ?? (await plain.context.newPage());
      const address = server.baseUrl + pageOf(locked);
      await noScript.goto(address);
      await noScript.locator('input[type=password]').fill('a wrong password');
      await noScript.locator('input[type=password]').press('Enter');
      await noScript.waitForURL(`${address}?unlock=wrong`);
      expect(await noScript.getByRole('alert').textContent()).toBe('Wrong password.');
      await noScript.locator('input[type=password]').fill('open sesame 2');
      await noScript.locator('input[type=password]').press('Enter');
      await noScript.getByText('text for a browser without scripts').waitFor();
      expect(noScript.url()).toBe(address);
    } finally {
      await plain.close();
    }
  });
});
