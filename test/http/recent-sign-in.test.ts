/**
 * Recent sign-in (docs/decisions.md): adding a way into the account (a passkey, a second factor)
 * needs a session that signed in, or confirmed its password, within the last hour. A stolen session
 * cookie could otherwise add a passkey that outlives the owner's password change and "sign out
 * everywhere else", and sign in with it afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, clientAt, signUp, uniqueEmail } from '../support/client.ts';
import { createToken } from '../support/uploads.ts';
import { SoftwareAuthenticator } from '../support/authenticator.ts';
import { codeAt } from '../support/totp.ts';
import { RECENT_SIGN_IN_MS } from '../../src/auth/sessions.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
let ipCounter = 0;

beforeAll(async () => {
  // TRUST_PROXY: each browser speaks from a client address of its own (the sign-in throttle is per IP).
  server = await startTestServer({ TRUST_PROXY: 'true' });
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

type Account = Client & { email: string; password: string; userId: string };

const browser = (): Client => clientAt(server.baseUrl, `198.51.100.${++ipCounter}`);

async function account(): Promise<Account> {
  const email = uniqueEmail('recent');
  const password = 'a recent password';
  expect((await admin.post('/api/users', { email, password })).status).toBe(201);
  const client = browser() as Account;
  expect((await client.post('/api/auth/login', { email, password })).status).toBe(200);
  return Object.assign(client, { email, password, userId: (await client.get('/api/auth/me')).body.data.user.id as string });
}

/** Moves every session of the account's sign-in (and confirmation) back by `ms`, as time passing would. */
async function age(account: Account, ms: number): Promise<void> {
  const sessions = await server.ctx.db.selectFrom('sessions').select(['id', 'createdAt', 'confirmedAt']).where('userId', '=', account.userId).execute();
  for (const s of sessions) {
    await server.ctx.db
      .updateTable('sessions')
      .set({ createdAt: Number(s.createdAt) - ms, confirmedAt: s.confirmedAt === null ? null : Number(s.confirmedAt) - ms })
      .where('id', '=', s.id)
      .execute();
  }
}

const confirmedUntil = async (client: Client) => {
  const answer = await client.get('/api/auth/confirm');
  expect(answer.status).toBe(200);
  return Date.parse(answer.body.data.confirmedUntil as string);
};

const REFUSAL = /^Confirm your password first \(POST \/api\/auth\/confirm\): adding a passkey or turning on two-factor needs a sign-in or a confirmed password within the last 60 minutes$/;

describe('adding a passkey or a second factor needs a recent sign-in', () => {
  it('lets a fresh sign-in add both, and says until when', async () => {
    const user = await account();
    const before = Date.now();
    expect(await confirmedUntil(user)).toBeGreaterThanOrEqual(before - 5_000 + RECENT_SIGN_IN_MS);
    const options = await user.post('/api/auth/passkeys/options');
    expect(options.status).toBe(200);
    const added = await user.post('/api/auth/passkeys', { name: 'Laptop', response: new SoftwareAuthenticator(server.baseUrl).register(options.body.data.options) });
    expect(added.status).toBe(201);
    const setup = await user.post('/api/auth/totp/setup');
    expect(setup.status).toBe(200);
    expect((await user.post('/api/auth/totp/enable', { code: codeAt(setup.body.data.secret, Date.now()) })).status).toBe(200);
  });

  it('refuses a session signed in over an hour ago until it confirms its password, on every route that adds a way in', async () => {
    const user = await account();
    // Options asked for while the sign-in was fresh, answered after it went stale.
    const options = await user.post('/api/auth/passkeys/options');
    const setup = await user.post('/api/auth/totp/setup');
    await age(user, RECENT_SIGN_IN_MS + 60_000);
    expect(await confirmedUntil(user)).toBeLessThan(Date.now());

    const authenticator = new SoftwareAuthenticator(server.baseUrl);
    const refused = [
      await user.post('/api/auth/passkeys/options'),
      await user.post('/api/auth/passkeys', { name: 'Stolen', response: authenticator.register(options.body.data.options) }),
      await user.post('/api/auth/totp/setup'),
      await user.post('/api/auth/totp/enable', { code: codeAt(setup.body.data.secret, Date.now()) }),
    ];
    for (const answer of refused) {
      expect(answer.status).toBe(403);
      expect(answer.body).toEqual({ success: false, error: expect.stringMatching(REFUSAL) });
    }
    const me = (await user.get('/api/auth/me')).body.data.user;
    expect([me.passkeyCount, me.twoFactorEnabled]).toEqual([0, false]);
    // What does not add a way in still works: the list, the session history, a rename.
    expect((await user.get('/api/auth/passkeys')).status).toBe(200);
    expect((await user.get('/api/auth/sessions')).status).toBe(200);

    // A wrong password is refused and counts as a failed sign-in; the right one opens the hour.
    const wrong = await user.post('/api/auth/confirm', { password: 'not the password' });
    expect([wrong.status, wrong.body]).toEqual([403, { success: false, error: 'The password is not right' }]);
    expect(await confirmedUntil(user)).toBeLessThan(Date.now());
    const at = Date.now();
    const confirmed = await user.post('/api/auth/confirm', { password: user.password });
    expect(confirmed.status).toBe(200);
    const until = Date.parse(confirmed.body.data.confirmedUntil as string);
    expect(until).toBeGreaterThanOrEqual(at + RECENT_SIGN_IN_MS);
    expect(until).toBeLessThanOrEqual(Date.now() + RECENT_SIGN_IN_MS);
    expect(await confirmedUntil(user)).toBe(until);

    const fresh = await user.post('/api/auth/passkeys/options');
    expect(fresh.status).toBe(200);
    expect((await user.post('/api/auth/passkeys', { name: 'Laptop', response: authenticator.register(fresh.body.data.options) })).status).toBe(201);
    const again = await user.post('/api/auth/totp/setup');
    expect((await user.post('/api/auth/totp/enable', { code: codeAt(again.body.data.secret, Date.now()) })).status).toBe(200);
  });

  it("confirms only the session that proved the password, not the account's other sessions", async () => {
    const user = await account();
    const other = browser();
    expect((await other.post('/api/auth/login', { email: user.email, password: user.password })).status).toBe(200);
    await age(user, 2 * RECENT_SIGN_IN_MS);
    expect((await user.post('/api/auth/confirm', { password: user.password })).status).toBe(200);
    expect((await user.post('/api/auth/passkeys/options')).status).toBe(200);
    expect((await other.post('/api/auth/passkeys/options')).status).toBe(403);
    expect(await confirmedUntil(other)).toBeLessThan(Date.now());
  });

  it('takes a password change made in this session as a confirmation', async () => {
    const user = await account();
    await age(user, 2 * RECENT_SIGN_IN_MS);
    expect((await user.post('/api/auth/totp/setup')).status).toBe(403);
    const changed = await user.patch('/api/account', { currentPassword: user.password, newPassword: 'a newer password' });
    expect(changed.status).toBe(200);
    expect(await confirmedUntil(user)).toBeGreaterThan(Date.now() + RECENT_SIGN_IN_MS - 60_000);
    expect((await user.post('/api/auth/totp/setup')).status).toBe(200);
  });

  it('counts wrong confirmations toward the sign-in throttle, and confirms only with a browser session', async () => {
    const user = await account();
    await age(user, 2 * RECENT_SIGN_IN_MS);
    const answers: number[] = [];
    for (let i = 0; i < 12; i++) answers.push((await user.post('/api/auth/confirm', { password: `guess ${i}` })).status);
    expect(answers.slice(0, 5)).toEqual([403, 403, 403, 403, 403]);
    expect(answers.at(-1)).toBe(429);
    // Even the right password waits out the throttle, as the sign-in would.
    expect((await user.post('/api/auth/confirm', { password: user.password })).status).toBe(429);

    const token = await createToken(user, ['files:read']);
    const withToken = new Client(server.baseUrl);
    expect((await withToken.request('GET', '/api/auth/confirm', { token })).status).toBe(401);
    expect((await withToken.request('POST', '/api/auth/confirm', { token, json: { password: user.password } })).status).toBe(401);
    const signedOut = browser();
    expect((await signedOut.post('/api/auth/confirm', { password: user.password })).status).toBe(401);
    // The body is the password alone.
    expect((await user.post('/api/auth/confirm', { password: user.password, extra: 1 })).status).toBe(400);
    expect((await user.post('/api/auth/confirm', {})).status).toBe(400);
  });
});
