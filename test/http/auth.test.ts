import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer();
  admin = await signUp(server.baseUrl, 'admin@example.test');
});
afterAll(() => server.close());

const setRegistration = (registration: string) => admin.patch('/api/settings', { registration });

describe('registration', () => {
  it('made the first account an Administrator with a session cookie', async () => {
    const me = await admin.get('/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.success).toBe(true);
    const user = me.body.data.user;
    expect(Object.keys(user).sort()).toEqual(['email', 'emailVerified', 'id', 'name', 'passkeyCount', 'permissions', 'roles', 'twoFactorEnabled', 'urlId']);
    expect(user.email).toBe('admin@example.test');
    expect(user.permissions).toContain('administrator');
    expect(user.roles.map((r: { systemKey: string }) => r.systemKey).sort()).toEqual(['administrator', 'everyone']);
    expect(user.urlId).toMatch(/^[a-z0-9]+$/);
  });

  it('sets an HttpOnly, SameSite=Lax session cookie', async () => {
    const response = await new Client(server.baseUrl).post('/api/auth/login', { email: admin.email, password: admin.password });
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('hoard_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);
  });

  it('is closed after the first account unless opened or invited', async () => {
    const closed = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw' });
    expect(closed.status).toBe(403);
    expect(closed.body).toEqual({ success: false, error: expect.stringMatching(/closed/i) });

    expect((await setRegistration('invite')).status).toBe(200);
    const withoutInvite = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw' });
    expect(withoutInvite.status).toBe(403);

    const invite = await admin.post('/api/invites');
    expect(invite.status).toBe(201);
    const code = invite.body.data.code;
    expect(code).toEqual(expect.any(String));
    const invited = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw', inviteCode: code });
    expect(invited.status).toBe(201);
    expect(invited.body.data.user.permissions).not.toContain('administrator');
    expect(invited.body.data.user.emailVerified).toBe(false);

    const reused = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw', inviteCode: code });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toMatch(/inviteCode/);

    expect((await setRegistration('open')).status).toBe(200);
    const open = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw', name: 'Open Sesame' });
    expect(open.status).toBe(201);
    expect(open.body.data.user.name).toBe('Open Sesame');
    await setRegistration('closed');
    // An invite is an administrator's decision about one person: it admits under `closed` too.
    const closedInvite = (await admin.post('/api/invites')).body.data.code;
    const stillClosed = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw' });
    expect(stillClosed.status).toBe(403);
    const admitted = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw', inviteCode: closedInvite });
    expect(admitted.status).toBe(201);
  });

  it('rejects bad input with 400 naming the field', async () => {
    await setRegistration('open');
    const client = new Client(server.baseUrl);
    const cases: Array<[unknown, RegExp]> = [
      [{ email: 'not-an-email', password: 'long enough pw' }, /^body\.email: /],
      [{ email: uniqueEmail(), password: 'short' }, /^body\.password: must be at least 8 characters/],
      [{ email: uniqueEmail(), password: 'long enough pw', role: 'admin' }, /^body: unknown field "role"/],
      [{ password: 'long enough pw' }, /^body\.email: /],
    ];
    for (const [body, message] of cases) {
      const response = await client.post('/api/auth/register', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error).toMatch(message);
    }
    const malformed = await client.request('POST', '/api/auth/register', { body: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ success: false, error: 'The request body is not valid JSON' });
    await setRegistration('closed');
  });

  it('refuses a second account with the same email, case-insensitively', async () => {
    await setRegistration('open');
    const response = await new Client(server.baseUrl).post('/api/auth/register', { email: 'ADMIN@example.test', password: 'long enough pw' });
    expect(response.status).toBe(409);
    await setRegistration('closed');
  });

  it('names an account after its address when no name is given, within the 100 characters of a name', async () => {
    await setRegistration('open');
    try {
      const local = 'b'.repeat(150);
      const response = await new Client(server.baseUrl).post('/api/auth/register', { email: `${local}@example.test`, password: 'long enough pw' });
      expect(response.status, response.text).toBe(201);
      expect(response.body.data.user.name).toBe('b'.repeat(100));
    } finally {
      await setRegistration('closed');
    }
  });
});

describe('sign-in and sessions', () => {
  it('logs in, logs out, and the old cookie stops working', async () => {
    const client = new Client(server.baseUrl);
    const login = await client.post('/api/auth/login', { email: admin.email.toUpperCase(), password: admin.password });
    expect(login.status).toBe(200);
    expect(login.body.data.user.email).toBe(admin.email);
    const cookie = client.cookies.get('hoard_session')!;
    expect((await client.get('/api/auth/me')).status).toBe(200);

    const logout = await client.post('/api/auth/logout');
    expect(logout.status).toBe(204);
    expect(client.cookies.has('hoard_session')).toBe(false);

    const replay = new Client(server.baseUrl);
    replay.cookies.set('hoard_session', cookie);
    const me = await replay.get('/api/auth/me');
    expect(me.status).toBe(401);
    expect(me.body).toEqual({ success: false, error: 'Unauthorized' });
  });

  it('answers wrong credentials with 401 without saying which part was wrong', async () => {
    const wrongPassword = await new Client(server.baseUrl).post('/api/auth/login', { email: admin.email, password: 'wrong password' });
    const unknownUser = await new Client(server.baseUrl).post('/api/auth/login', { email: uniqueEmail(), password: 'wrong password' });
    expect(wrongPassword.status).toBe(401);
    expect(unknownUser.status).toBe(401);
    expect(wrongPassword.body).toEqual(unknownUser.body);
  });

  it('rate-limits failed sign-ins per account with 429 and Retry-After', async () => {
    await setRegistration('open');
    const victim = await signUp(server.baseUrl);
    await setRegistration('closed');
    const attacker = new Client(server.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await attacker.post('/api/auth/login', { email: victim.email, password: `guess ${i}` })).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    const blocked = await attacker.post('/api/auth/login', { email: victim.email, password: victim.password });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(900);
    // Other accounts are unaffected by one account's lock-out.
    expect((await new Client(server.baseUrl).post('/api/auth/login', { email: admin.email, password: admin.password })).status).toBe(200);
  });

  it('rate-limits failed sign-ins per client IP across accounts', async () => {
    const sprayer = new Client(server.baseUrl);
    let last = 0;
    for (let i = 0; i < 40 && last !== 429; i++) last = (await sprayer.post('/api/auth/login', { email: uniqueEmail('spray'), password: 'nope nope' })).status;
    expect(last).toBe(429);
  });

  it("keeps every signed-in answer out of shared caches: private, no-store unless the route says otherwise", async () => {
    for (const path of ['/api/auth/me', '/api/account', '/api/auth/sessions', '/api/users', '/api/settings', '/api/tags', '/api/roles']) {
      const answer = await admin.get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('cache-control'), path).toBe('private, no-store');
    }
  });

  it('requires a session on session routes and refuses bearer credentials', async () => {
    const anonymous = await new Client(server.baseUrl).get('/api/auth/me');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ success: false, error: 'Unauthorized' });
    // A bearer header wins over the cookie, and no bearer credential opens a session route.
    const withBearer = await admin.get('/api/auth/me', { token: 'svc_whatever' });
    expect(withBearer.status).toBe(401);
    expect(withBearer.body).toEqual(anonymous.body);
  });

  it('refuses sign-in and registration sent with an API credential: the generic 401, no session', async () => {
    // Contract §3: every route of its Sign-in table rejects named tokens and the legacy credential.
    const named = (await admin.post('/api/tokens', { name: 'sign-in attempt', scopes: ['files:read'] })).body.data.secret as string;
    const legacy = (await admin.get('/api/profile/upload-token')).body.data.uploadToken as string;
    for (const token of [named, legacy, 'svc_not_even_a_token']) {
      const client = new Client(server.baseUrl);
      const login = await client.post('/api/auth/login', { email: admin.email, password: admin.password }, { token });
      expect([login.status, login.body]).toEqual([401, { success: false, error: 'Unauthorized' }]);
      const register = await client.post('/api/auth/register', { email: uniqueEmail('bearer'), password: 'long enough password' }, { token });
      expect([register.status, register.body]).toEqual([401, { success: false, error: 'Unauthorized' }]);
      // Before the body is looked at.
      expect((await client.request('POST', '/api/auth/login', { token })).status).toBe(401);
      expect(client.cookies.size).toBe(0);
    }
  });
});

describe('Origin check on cookie-authenticated state changes', () => {
  it('refuses a missing or foreign Origin with 403 and accepts the instance origin', async () => {
    const missing = await admin.patch('/api/settings', { registration: 'closed' }, { origin: null });
    expect(missing.status).toBe(403);
    // A route only a browser session may use: the hint is the header, not a named token it would refuse.
    expect(missing.body.error).toBe(`Cross-origin request refused: a change made with a browser session needs an Origin header of ${server.baseUrl}`);
    // A route a named token may use too: the hint names it.
    const upload = await admin.post('/api/urls', { url: 'https://example.com/' }, { origin: null });
    expect([upload.status, upload.body.error]).toEqual([403, `Cross-origin request refused: a change made with a browser session needs an Origin header of ${server.baseUrl} (scripts use a named token instead)`]);
    const foreign = await admin.patch('/api/settings', { registration: 'closed' }, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.success).toBe(false);
    // Both addresses are named, and the setting: an instance opened at its LAN address before BASE_URL is set.
    expect(foreign.body.error).toBe(`Cross-origin request refused: its Origin header is https://evil.example, but this instance is at ${server.baseUrl} (its BASE_URL); open it there, or set BASE_URL to the address you use`);
    const same = await admin.patch('/api/settings', { registration: 'closed' });
    expect(same.status).toBe(200);
    // Reads need no Origin.
    expect((await admin.get('/api/settings', { origin: null })).status).toBe(200);
  });
});

describe('a BASE_URL written in capitals, with its default port', () => {
  it('is used as browsers spell its origin: Secure cookies for https, links and the Origin check in lower case', async () => {
    const secure = await startTestServer({ BASE_URL: 'HTTPS://Files.Example.TEST:443' });
    try {
      const direct = `http://127.0.0.1:${secure.env.PORT}`;
      expect(secure.baseUrl).toBe('https://files.example.test');
      const registered = await new Client(direct).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw' });
      expect(registered.status, registered.text).toBe(201);
      const cookie = registered.headers.getSetCookie().find((c) => c.startsWith('hoard_session='))!;
      expect(cookie).toMatch(/; Secure/i);
      // A state-changing request from the instance's own pages, as a browser sends it.
      const session = cookie.split(';')[0]!;
      const folder = await new Client(direct).post('/api/folders', { name: 'Mine' }, { headers: { cookie: session }, origin: 'https://files.example.test' });
      expect(folder.status, folder.text).toBe(201);
    } finally {
      await secure.close();
    }
  });
});
