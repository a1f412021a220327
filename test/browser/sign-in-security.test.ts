import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { freePort, startTestServer, type TestServer } from '../support/server.ts';
import { Client } from '../support/client.ts';
import { launchBrowser, watchPage, type BrowserSession } from '../support/browser.ts';
import { codeAt, previousStepCode } from '../support/totp.ts';

/**
 * Sign-in security in a real Chromium (contract §8): two-factor from the QR page and signing in with
 * a code and with a recovery code, a passkey through Chromium's virtual authenticator, and ending
 * another browser's session from the sessions table. Passkeys need a host name, so the instance
 * is served as http://localhost.
 */
const EMAIL = 'grace@example.test';
const PASSWORD = 'a security password';

describe('sign-in security in Chromium', () => {
  let server: TestServer;
  let browser: BrowserSession;
  let page: Page;
  const problems: string[] = [];
  let secret = '';
  let recoveryCodes: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    server = await startTestServer({ PORT: String(port), BASE_URL: `http://localhost:${port}` });
    expect((await new Client(server.baseUrl).post('/api/auth/register', { email: EMAIL, password: PASSWORD })).status).toBe(201);
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    watchPage(page, problems);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const signInWithPassword = async () => {
    await page.goto(`${server.baseUrl}/app/signin`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  };
  const signOut = async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  };
  const openSecurity = async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Security' }).click();
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
  };

  test('turning two-factor on from the QR page, then signing in with a code and with a recovery code', async () => {
    await signInWithPassword();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
    await openSecurity();
    // Each step takes away the button that led to it: the focus goes to what the next one shows.
    const focusedNow = () => page.evaluate("(() => { const e = document.activeElement; return e ? `${e.tagName} ${e.getAttribute('name') ?? e.textContent?.trim()}` : ''; })()");
    await page.getByRole('button', { name: 'Turn on two-factor' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(focusedNow).toBe('INPUT code');
    // Cancel goes back to the first step, with the focus on its button.
    await page.getByRole('button', { name: 'Cancel', exact: true }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(focusedNow).toBe('BUTTON Turn on two-factor');
    await page.keyboard.press('Enter');
    await expect.poll(focusedNow).toBe('INPUT code');
    await expect(page.getByRole('img', { name: /QR code/ }).getAttribute('src')).resolves.toMatch(/^data:image\/png;base64,/);
    secret = (await page.getByTestId('totp-secret').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{32,}$/);
    await page.getByLabel('Code from the app').fill(await previousStepCode(secret));
    await page.getByRole('button', { name: 'Turn on', exact: true }).click();
    const shown = page.getByTestId('recovery-codes');
    await shown.waitFor();
    await expect.poll(focusedNow).toBe('H3 Your recovery codes');
    // And stays there: nothing gives it back elsewhere a moment later.
    await page.waitForTimeout(300);
    await expect(focusedNow()).resolves.toBe('H3 Your recovery codes');
    recoveryCodes = (await shown.locator('code').allTextContents()).map((code) => code.trim());
    expect(recoveryCodes).toHaveLength(10);
    await expect(shown.getByRole('button', { name: 'Download codes' }).isVisible()).resolves.toBe(true);
    const download = page.waitForEvent('download');
    await shown.getByRole('button', { name: 'Download codes' }).click();
    expect((await download).suggestedFilename()).toBe('hoard-recovery-codes.txt');
    await shown.getByRole('button', { name: 'I have stored them' }).click();
    await page.getByText('On', { exact: true }).waitFor();
    await expect.poll(focusedNow).toBe('BUTTON New recovery codes');

    // The password alone no longer signs in: the code step asks for a code.
    await signOut();
    await signInWithPassword();
    await page.getByLabel('Two-factor code').fill(codeAt(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();

    // And with a recovery code.
    await signOut();
    await signInWithPassword();
    await page.getByRole('button', { name: 'Use a recovery code' }).click();
    await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Files', level: 1 }).waitFor();
  });

  test('on a 375-px screen the Security page never scrolls sideways, with two-factor on or new recovery codes shown', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      const fits = async (what: string, button: string) => {
        expect(await page.evaluate('document.documentElement.scrollWidth'), what).toBeLessThanOrEqual(375);
        const box = (await page.getByRole('button', { name: button }).boundingBox())!;
        expect(box.x, `${what}: ${button}`).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, `${what}: ${button}`).toBeLessThanOrEqual(375);
      };
      // The menu is folded on a narrow screen: the page is opened by its address.
      await page.goto(`${server.baseUrl}/app/security`);
      await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Turn off two-factor' }).waitFor();
      await fits('two-factor on', 'New recovery codes');
      await fits('two-factor on', 'Turn off two-factor');

      await page.getByRole('button', { name: 'New recovery codes' }).click();
      const dialog = page.getByRole('dialog', { name: 'New recovery codes' });
      await dialog.getByLabel('Your password').fill(PASSWORD);
      await dialog.getByRole('button', { name: 'Make new codes' }).click();
      const shown = page.getByTestId('recovery-codes');
      await shown.waitFor();
      // The new codes, shown once, have the focus, not the button of the dialog that made them.
      await page.waitForTimeout(300);
      await expect(page.evaluate("document.activeElement?.textContent?.trim()")).resolves.toBe('Your recovery codes');
      recoveryCodes = (await shown.locator('code').allTextContents()).map((code) => code.trim());
      expect(recoveryCodes).toHaveLength(10);
      await fits('recovery codes shown', 'I have stored them');
      await fits('recovery codes shown', 'Download codes');
      await shown.getByRole('button', { name: 'I have stored them' }).click();
      await shown.waitFor({ state: 'detached' });
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  test('registering a passkey and signing in with it (no code asked)', async () => {
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await openSecurity();
    await page.getByLabel('Passkey name').fill('Chromium key');
    await page.getByRole('button', { name: 'Add passkey' }).click();
    await page.getByTestId('passkey-row').filter({ hasText: 'Chromium key' }).waitFor();

    await signOut();
    // The person does not confirm on the device: the browser's failure is told in plain words, and
    // the button keeps the keyboard's focus (it was disabled while busy, dropping it to the body).
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    const passkeyButton = page.getByRole('button', { name: 'Sign in with a passkey' });
    await passkeyButton.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText(/^No passkey was used: .* Try again, or sign in with your password\.$/).waitFor();
    await expect(page.getByText('webauthn', { exact: false }).count()).resolves.toBe(0);
    await expect.poll(() => page.evaluate('document.activeElement?.textContent?.trim()')).toBe('Sign in with a passkey');
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
    await passkeyButton.click();
    // Back where the sign-out left: the Security page, signed in by the passkey.
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    await page.getByTestId('session-row').filter({ hasText: 'This browser' }).filter({ hasText: 'Passkey' }).waitFor();
  });

  test('ending another browser from the sessions table', async () => {
    // Another browser: a script signing in with the password and a recovery code.
    const other = new Client(server.baseUrl);
    const step = await other.request('POST', '/api/auth/login', { json: { email: EMAIL, password: PASSWORD }, headers: { 'user-agent': 'Another browser' } });
    expect(step.body.data.twoFactorRequired).toBe(true);
    const done = await other.request('POST', '/api/auth/login/two-factor', { json: { ticket: step.body.data.ticket, code: recoveryCodes[1] }, headers: { 'user-agent': 'Another browser' } });
    expect(done.status).toBe(200);
    expect((await other.get('/api/auth/me')).status).toBe(200);

    await page.reload();
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    const row = page.getByTestId('session-row').filter({ hasText: 'Another browser' });
    await row.getByRole('button', { name: /^Sign out Another browser/ }).click();
    await row.waitFor({ state: 'detached' });
    expect((await other.get('/api/auth/me')).status).toBe(401);
    expect(problems).toEqual([]);
  });

  test('a passkey added, renamed and deleted with the keyboard: each says so, and focus stays on the page', async () => {
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const focused = () => page.evaluate('document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.getAttribute("name") ?? document.activeElement?.textContent?.trim() ?? null');
    await openSecurity();

    // The button is busy while the browser asks for the key, and keeps focus all the same.
    await page.getByLabel('Passkey name').fill('Spare key');
    await page.getByRole('button', { name: 'Add passkey' }).focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('passkey-row').filter({ hasText: 'Spare key' }).waitFor();
    await expect.poll(focused).toBe('Add passkey');

    // The rename dialog opens on its field.
    await page.getByRole('button', { name: 'Rename Spare key' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Rename passkey' });
    await dialog.waitFor();
    await expect.poll(focused).toBe('name');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Backup key');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Passkey renamed to Backup key').waitFor();

    // Deleted: focus goes to the Delete of the passkey left.
    await page.getByRole('button', { name: 'Delete Backup key' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('Cancel');
    await page.keyboard.press('Tab');
    await expect.poll(focused).toBe('Delete');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Passkey Backup key deleted').waitFor();
    await expect.poll(() => page.getByTestId('passkey-row').count()).toBe(1);
    await expect.poll(focused).toBe('Delete Chromium key');
    await cdp.detach();
    expect(problems).toEqual([]);
  });

  test('a session signed in over an hour ago asks for the password before a passkey is added, then adds it', async () => {
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    // Time passing: every session of the account signed in two hours ago.
    await server.ctx.db.updateTable('sessions').set({ createdAt: Date.now() - 2 * 3600_000, confirmedAt: null }).execute();
    await page.reload();
    await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
    const rows = page.getByTestId('passkey-row');
    // The heading shows before the passkeys have loaded: count them once the list (or its empty
    // note) is there.
    await rows.or(page.getByText('No passkeys yet.')).first().waitFor();
    const before = await rows.count();

    await page.getByLabel('Passkey name').fill('Late key');
    await page.getByRole('button', { name: 'Add passkey' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm your password' });
    await dialog.waitFor();
    // Cancelled: nothing added, and nothing said to be wrong.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect(rows.count()).resolves.toBe(before);
    await expect(page.getByRole('alert').count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Add passkey' }).click();
    await dialog.getByLabel('Your password').fill('not the password');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.getByText('The password is not right').waitFor();
    await dialog.getByLabel('Your password').fill(PASSWORD);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await dialog.waitFor({ state: 'detached' });
    await rows.filter({ hasText: 'Late key' }).waitFor();
    await expect(rows.count()).resolves.toBe(before + 1);
    await page.getByRole('status').getByText('Passkey added').waitFor();

    // Within the hour confirmed, the next one asks nothing. (The key forgets its passkey, which the
    // server would otherwise exclude as registered already.)
    await cdp.send('WebAuthn.clearCredentials', { authenticatorId });
    await page.getByLabel('Passkey name').fill('Later key');
    await page.getByRole('button', { name: 'Add passkey' }).click();
    await rows.filter({ hasText: 'Later key' }).waitFor();
    await expect(dialog.count()).resolves.toBe(0);

    // Deleted from the account but still on the device: its sign-in says what that can mean.
    await page.getByRole('button', { name: 'Delete Later key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('status').getByText('Passkey Later key deleted').waitFor();
    await signOut();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('That passkey did not sign you in: it may have been deleted from this account (remove it from this device too), or copied from another device. Sign in with your password instead.').waitFor();
    await cdp.detach();
    expect(problems).toEqual([]);
  });
});
