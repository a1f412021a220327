/**
 * Session history (contract §8): the account's live browser sessions, ending one of them or all the
 * others; named tokens and the legacy credential are never touched (spec, Authentication 10).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken } from '../support/uploads.ts';
import { SoftwareAuthenticator } from '../support/authenticator.ts';
import { sha256Hex } from '../../src/auth/secrets.ts';
import { SESSION_COOKIE } from '../../src/auth/sessions.ts';

let server: TestServer;
beforeAll(async () => {
  // TRUST_PROXY: each browser of a test speaks from a client address of its own.
  server = await startTestServer({ TRUST_PROXY: 'true' });
  const admin = await signUp(server.baseUrl);
  await admin.patch('/api/settings', { registration: 'open' });
});
afterAll(() => server.close());

let ipCounter = 0;

/** A browser with its own user agent and client address. */
function browser(userAgent: string): Client & { ip: string; userAgent: string } {
  const client = new Client(server.baseUrl) as Client & { ip: string; userAgent: string };
  client.ip = `198.51.100.${++ipCounter}`;
  client.userAgent = userAgent;
  const request = client.request.bind(client);
  client.request = (method, path, options = {}) => request(method, path, { ...options, headers: { 'user-agent': userAgent, 'x-forwarded-for': client.ip, ...options.headers } });
  return client;
}

async function account() {
  const email = uniqueEmail('sessions');
  const password = 'a sessions password';
  const first = browser('Firefox on the desk');
  expect((await first.post('/api/auth/register', { email, password })).status).toBe(201);
  const signIn = async (userAgent: string) => {
    const client = browser(userAgent);
    expect((await client.post('/api/auth/login', { email, password })).status).toBe(200);
    return client;
  };
  return { email, password, first, signIn };
}

const sessionsOf = async (client: Client) => {
  const answer = await client.get('/api/auth/sessions');
  expect(answer.status).toBe(200);
  return answer.body.data.sessions as Array<{ id: string; createdAt: string; lastSeenAt: string; expiresAt: string; ip: string | null; userAgent: string | null; method: string; current: boolean }>;
};

describe('GET /api/auth/sessions', () => {
  it("lists the account's live sessions newest first, with the sign-in's address, browser and method, and marks the current one", async () => {
    const { first, signIn } = await account();
    const phone = await signIn('Safari on a phone');
    const sessions = await sessionsOf(phone);
    expect(sessions).toHaveLength(2);
    expect(sessions.map((s) => s.userAgent)).toEqual(['Safari on a phone', 'Firefox on the desk']);
    expect(sessions.map((s) => s.ip)).toEqual([phone.ip, first.ip]);
    expect(sessions.map((s) => s.method)).toEqual(['password', 'password']);
    expect(sessions.map((s) => s.current)).toEqual([true, false]);
    expect(Date.parse(sessions[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(sessions[1]!.createdAt));
    expect(Date.parse(sessions[0]!.expiresAt)).toBeGreaterThan(Date.now());
    // From the other browser, the other one is current.
    expect((await sessionsOf(first)).map((s) => s.current)).toEqual([false, true]);
  });

  it('never shows the cookie value or its hash as an ID', async () => {
    const { first } = await account();
    const cookie = first.cookies.get(SESSION_COOKIE)!;
    const [session] = await sessionsOf(first);
    expect(session!.id).not.toBe(cookie);
    expect(session!.id).not.toBe(sha256Hex(cookie));
    expect(JSON.stringify(await first.get('/api/auth/sessions'))).not.toContain(sha256Hex(cookie));
  });

  it('leaves out expired sessions, which cannot be ended by ID either', async () => {
    const { first, signIn } = await account();
    const old = await signIn('An old browser');
    const [oldSession] = await sessionsOf(old);
    await server.ctx.db.updateTable('sessions').set({ expiresAt: Date.now() - 1000 }).where('publicId', '=', oldSession!.id).execute();
    expect((await sessionsOf(first)).map((s) => s.userAgent)).toEqual(['Firefox on the desk']);
    expect((await first.delete(`/api/auth/sessions/${oldSession!.id}`)).status).toBe(404);
    expect((await old.get('/api/auth/me')).status).toBe(401);
  });

  it('refuses named tokens and the legacy credential with the generic 401', async () => {
    const { first } = await account();
    const token = await createToken(first, ['files:read', 'files:upload', 'urls:read', 'urls:write']);
    const legacy = (await first.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const script = new Client(server.baseUrl);
    for (const credential of [token, legacy]) {
      for (const [method, path] of [['GET', '/api/auth/sessions'], ['DELETE', '/api/auth/sessions'], ['DELETE', '/api/auth/sessions/anything']] as const) {
        const answer = await script.request(method, path, { token: credential });
        expect(answer.status, `${method} ${path}`).toBe(401);
        expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
      }
    }
  });
});

describe('DELETE /api/auth/sessions/{id}', () => {
  it('ends another session of the account: its cookie then gets the generic 401', async () => {
    const { first, signIn } = await account();
    const laptop = await signIn('Chromium on a laptop');
    const laptopId = (await sessionsOf(laptop)).find((s) => s.current)!.id;
    const answer = await first.delete(`/api/auth/sessions/${laptopId}`);
    expect(answer.status).toBe(204);
    expect(first.cookies.has(SESSION_COOKIE)).toBe(true);
    expect((await laptop.get('/api/auth/me')).status).toBe(401);
    expect((await first.get('/api/auth/me')).status).toBe(200);
    // Ended once: a second time it is unknown.
    expect((await first.delete(`/api/auth/sessions/${laptopId}`)).status).toBe(404);
  });

  it('ends the current session too, and clears its cookie', async () => {
    const { first } = await account();
    const [own] = await sessionsOf(first);
    expect((await first.delete(`/api/auth/sessions/${own!.id}`)).status).toBe(204);
    expect(first.cookies.has(SESSION_COOKIE)).toBe(false);
    expect((await first.get('/api/auth/me')).status).toBe(401);
  });

  it("answers 404 for another account's session and for an unknown ID, and leaves them alone", async () => {
    const one = await account();
    const other = await account();
    const [otherSession] = await sessionsOf(other.first);
    expect((await one.first.delete(`/api/auth/sessions/${otherSession!.id}`)).status).toBe(404);
    expect((await one.first.delete('/api/auth/sessions/not-a-session')).status).toBe(404);
    expect((await other.first.get('/api/auth/me')).status).toBe(200);
    expect((await sessionsOf(one.first)).map((s) => s.id)).not.toContain(otherSession!.id);
  });
});

describe('DELETE /api/auth/sessions', () => {
  it('ends every session but the current one; named tokens and the legacy credential keep working', async () => {
    const { first, signIn } = await account();
    const token = await createToken(first, ['files:read']);
    const legacy = (await first.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const phone = await signIn('A phone');
    const tablet = await signIn('A tablet');
    expect((await phone.delete('/api/auth/sessions')).status).toBe(204);
    expect((await sessionsOf(phone)).map((s) => s.userAgent)).toEqual(['A phone']);
    expect((await first.get('/api/auth/me')).status).toBe(401);
    expect((await tablet.get('/api/auth/me')).status).toBe(401);
    const script = new Client(server.baseUrl);
    expect((await script.get('/api/files', { token })).status).toBe(200);
    expect((await script.get('/api/files', { token: legacy })).status).toBe(200);
  });

  it('needs the Origin of the instance, like every state change by a browser', async () => {
    const { first, signIn } = await account();
    await signIn('Another browser');
    expect((await first.request('DELETE', '/api/auth/sessions', { origin: 'https://elsewhere.example' })).status).toBe(403);
    expect(await sessionsOf(first)).toHaveLength(2);
  });
});

describe('sign-in methods and housekeeping', () => {
  it("lists a passkey sign-in's session with the method passkey", async () => {
    const { email, first } = await account();
    const authenticator = new SoftwareAuthenticator(server.baseUrl);
    const options = await first.post('/api/auth/passkeys/options');
    expect((await first.post('/api/auth/passkeys', { name: 'Key', response: authenticator.register(options.body.data.options) })).status).toBe(201);
    const viaPasskey = browser('A browser with a passkey');
    const signInOptions = await viaPasskey.post('/api/auth/passkey/options', { email });
    expect((await viaPasskey.post('/api/auth/passkey', { response: authenticator.signIn(signInOptions.body.data.options) })).status).toBe(200);
    const current = (await sessionsOf(viaPasskey)).find((s) => s.current)!;
    expect(current).toMatchObject({ method: 'passkey', userAgent: 'A browser with a passkey', ip: viaPasskey.ip });
  });

  it('a used session lives on in the browser too: its cookie is sent again with the expiry the server moved', async () => {
    // Sessions slide (docs/decisions.md, Accounts and sign-in): the cookie must slide with them, or
    // the browser drops it 30 days after sign-in however often it was used.
    const { first } = await account();
    const [session] = await sessionsOf(first);
    const cookie = first.cookies.get(SESSION_COOKIE);
    // Last seen two minutes ago, and expiring sooner than a fresh session would.
    await server.ctx.db.updateTable('sessions').set({ lastSeenAt: Date.now() - 120_000, expiresAt: Date.now() + 3_600_000 }).where('publicId', '=', session!.id).execute();
    const me = await first.get('/api/auth/me');
    expect(me.status).toBe(200);
    const renewed = me.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    expect(renewed, 'a renewed session cookie').toBeDefined();
    expect(renewed).toContain(`${SESSION_COOKIE}=${cookie};`);
    expect(renewed).toMatch(/HttpOnly/i);
    expect(renewed).toMatch(/SameSite=Lax/i);
    const cookieExpires = Date.parse(/Expires=([^;]+)/i.exec(renewed!)![1]!);
    const [listed] = await sessionsOf(first);
    // The cookie's date has whole seconds.
    expect(Math.abs(Date.parse(listed!.expiresAt) - cookieExpires)).toBeLessThan(1000);
    expect(cookieExpires).toBeGreaterThan(Date.now() + 29 * 24 * 3600 * 1000);
    // Within the minute, nothing moves and nothing is sent again.
    expect((await first.get('/api/auth/me')).headers.getSetCookie()).toEqual([]);
    // Signing out clears it with the attributes it was set with.
    const cleared = (await first.post('/api/auth/logout')).headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/i);
    expect(cleared).toMatch(/HttpOnly/i);
    expect(cleared).toMatch(/SameSite=Lax/i);
  });

  it('a cookie whose session has ended is cleared by the 401 it gets', async () => {
    const { first, signIn } = await account();
    const other = await signIn('A browser about to be signed out');
    const [session] = (await sessionsOf(other)).filter((s) => s.current);
    expect((await first.delete(`/api/auth/sessions/${session!.id}`)).status).toBe(204);
    const refused = await other.get('/api/auth/me');
    expect(refused.status).toBe(401);
    const cleared = refused.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`));
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/i);
    expect(other.cookies.has(SESSION_COOKIE)).toBe(false);
    // A bearer credential's 401 says nothing about the cookie sent with it, which stays.
    const withToken = await first.get('/api/files', { token: 'svc_not-a-token' });
    expect(withToken.status).toBe(401);
    expect(withToken.headers.getSetCookie()).toEqual([]);
  });

  it('logout ends only its own session', async () => {
    const { first, signIn } = await account();
    const other = await signIn('Another browser');
    expect((await other.post('/api/auth/logout')).status).toBe(204);
    expect((await sessionsOf(first)).map((s) => s.userAgent)).toEqual(['Firefox on the desk']);
  });

  it('a new password ends the other sessions, as before', async () => {
    const { first, signIn, password } = await account();
    const other = await signIn('Another browser');
    expect((await first.patch('/api/account', { currentPassword: password, newPassword: 'a brand new password' })).status).toBe(200);
    expect((await other.get('/api/auth/me')).status).toBe(401);
    expect((await sessionsOf(first)).map((s) => s.current)).toEqual([true]);
  });

  it('expired sessions are deleted by a daily job', async () => {
    const { first, signIn } = await account();
    const old = await signIn('An expired browser');
    const [oldSession] = (await sessionsOf(old)).filter((s) => s.current);
    await server.ctx.db.updateTable('sessions').set({ expiresAt: Date.now() - 1000 }).where('publicId', '=', oldSession!.id).execute();
    await server.ctx.db.updateTable('jobs').set({ runAt: Date.now() - 1000 }).where('dedupeKey', '=', 'session-sweep').execute();
    // The server's own runner polls the job table too and may take the job first (it did, once, in
    // CI): whichever process runs it, the expired session goes and the next sweep is a day away.
    await server.jobs.runDueJobs();
    await expect.poll(async () => server.ctx.db.selectFrom('sessions').select('id').where('publicId', '=', oldSession!.id).executeTakeFirst(), { timeout: 10_000 }).toBeUndefined();
    expect(await sessionsOf(first)).toHaveLength(1);
    const nextSweep = async () => Number((await server.ctx.db.selectFrom('jobs').select('runAt').where('dedupeKey', '=', 'session-sweep').executeTakeFirstOrThrow()).runAt);
    await expect.poll(nextSweep, { timeout: 10_000 }).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
  });
});
