/**
 * Passkeys (contract §8, "Passkeys"): registering, listing, renaming and deleting them on a signed-in
 * account, and signing in with one, against a software authenticator (test/support/authenticator.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { clientAt as clientFrom, Client, signUp, uniqueEmail } from '../support/client.ts';
import { SoftwareAuthenticator } from '../support/authenticator.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
let ipCounter = 0;

beforeAll(async () => {
  // TRUST_PROXY lets a test speak from a client address of its own (the sign-in throttle is per IP).
  server = await startTestServer({ TRUST_PROXY: 'true' });
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

type Account = Client & { email: string; password: string; userId: string; ip: string };

/** A browser at its own client IP address. */
function clientAt(ip = `203.0.113.${++ipCounter}`): Client & { ip: string } {
  return Object.assign(clientFrom(server.baseUrl, ip), { ip });
}

async function account(): Promise<Account> {
  const email = uniqueEmail('passkey');
  const password = 'the right password';
  expect((await admin.post('/api/users', { email, password })).status).toBe(201);
  const client = clientAt() as Account;
  expect((await client.post('/api/auth/login', { email, password })).status).toBe(200);
  return Object.assign(client, { email, password, userId: (await client.get('/api/auth/me')).body.data.user.id });
}

async function registerPasskey(client: Client, authenticator: SoftwareAuthenticator, name = 'Laptop') {
  const options = await client.post('/api/auth/passkeys/options');
  expect(options.status).toBe(200);
  return client.post('/api/auth/passkeys', { name, response: authenticator.register(options.body.data.options) });
}

async function signInOptions(client: Client, email?: string) {
  const options = await client.post('/api/auth/passkey/options', email === undefined ? {} : { email });
  expect(options.status).toBe(200);
  return options.body.data.options;
}

/** A whole passkey sign-in from a new browser: options, the authenticator, the answer. */
async function passkeySignIn(authenticator: SoftwareAuthenticator, email?: string, overrides: Parameters<SoftwareAuthenticator['signIn']>[1] = {}) {
  const client = clientAt();
  const response = authenticator.signIn(await signInOptions(client, email), overrides);
  return { client, answer: await client.post('/api/auth/passkey', { response }), response };
}

const authenticatorFor = () => new SoftwareAuthenticator(server.baseUrl);

describe('registering and managing passkeys', () => {
  it('registers, lists, renames and deletes a passkey; /me counts them', async () => {
    const user = await account();
    const me = await user.get('/api/auth/me');
    expect(me.body.data.user.passkeyCount).toBe(0);

    const authenticator = authenticatorFor();
    const created = await registerPasskey(user, authenticator, '  Work laptop ');
    expect(created.status).toBe(201);
    const passkey = created.body.data.passkey;
    expect(Object.keys(passkey).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name']);
    expect(passkey).toMatchObject({ name: 'Work laptop', lastUsedAt: null });
    expect(Date.parse(passkey.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    // Its public ID is not the authenticator's credential ID.
    expect(passkey.id).not.toBe(authenticator.credentialIds[0]);

    const listed = await user.get('/api/auth/passkeys');
    expect(listed.status).toBe(200);
    expect(listed.body.data.passkeys).toEqual([passkey]);
    expect((await user.get('/api/auth/me')).body.data.user.passkeyCount).toBe(1);

    const renamed = await user.patch(`/api/auth/passkeys/${passkey.id}`, { name: 'Phone' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.passkey).toEqual({ ...passkey, name: 'Phone' });

    const deleted = await user.delete(`/api/auth/passkeys/${passkey.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await user.get('/api/auth/passkeys')).body.data.passkeys).toEqual([]);
    expect((await user.get('/api/auth/me')).body.data.user.passkeyCount).toBe(0);
    // A deleted passkey no longer signs in (the authenticator still holds it; the email no longer lists it).
    expect((await passkeySignIn(authenticator)).answer.status).toBe(401);
    const options = await signInOptions(clientAt(), user.email);
    expect(options.allowCredentials.map((c: { id: string }) => c.id)).not.toContain(authenticator.credentialIds[0]);
  });

  it('offers ES256 and RS256, attestation none, the account as the user, and excludes its passkeys', async () => {
    const user = await account();
    const first = await user.post('/api/auth/passkeys/options');
    expect(first.status).toBe(200);
    const options = first.body.data.options;
    expect(options.rp.id).toBe('127.0.0.1');
    expect(options.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-7, -257]);
    expect(options.attestation).toBe('none');
    expect(options.user).toMatchObject({ name: user.email });
    expect(options.excludeCredentials).toEqual([]);
    const authenticator = authenticatorFor();
    expect((await user.post('/api/auth/passkeys', { name: 'Key', response: authenticator.register(options) })).status).toBe(201);

    const second = (await user.post('/api/auth/passkeys/options')).body.data.options;
    expect(second.excludeCredentials.map((c: { id: string }) => c.id)).toEqual(authenticator.credentialIds);
    expect(second.challenge).not.toBe(options.challenge);
    // The authenticator refuses to register a second credential of the same account.
    expect(() => authenticator.register(second)).toThrow(/InvalidStateError/);
  });

  it('registers an RS256 key and signs in with it', async () => {
    const user = await account();
    const authenticator = new SoftwareAuthenticator(server.baseUrl, 'RS256');
    expect((await registerPasskey(user, authenticator)).status).toBe(201);
    expect((await passkeySignIn(authenticator, user.email)).answer.status).toBe(200);
  });

  it('refuses a name that is empty or longer than 80 characters', async () => {
    const user = await account();
    const authenticator = authenticatorFor();
    for (const name of ['', '   ', 'x'.repeat(81)]) {
      const options = (await user.post('/api/auth/passkeys/options')).body.data.options;
      const answer = await user.post('/api/auth/passkeys', { name, response: authenticator.register(options) });
      expect(answer.status, name).toBe(400);
      expect(answer.body.error).toMatch(/^body\.name: /);
    }
    const created = await registerPasskey(user, authenticatorFor(), 'x'.repeat(80));
    expect(created.status).toBe(201);
    for (const name of ['', 'y'.repeat(81)]) {
      const answer = await user.patch(`/api/auth/passkeys/${created.body.data.passkey.id}`, { name });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatch(/^body\.name: /);
    }
  });

  it('refuses (400) a registration from another origin, for another RP ID, in another site\'s frame, without user verification or with a malformed answer', async () => {
    const user = await account();
    const cases: Array<[string, Parameters<SoftwareAuthenticator['register']>[1]]> = [
      ['origin', { origin: 'https://evil.example' }],
      ['rp id', { rpId: 'evil.example' }],
      // Hoard's pages cannot be framed (frame-ancestors 'none'): an answer made in a frame is not theirs.
      ['framed', { framedBy: 'https://evil.example' }],
      ['framed, top origin not told', { framedBy: null }],
      ['a top origin, not framed', { topOriginOnly: 'https://evil.example' }],
      ['user verification', { userVerified: false }],
    ];
    for (const [label, overrides] of cases) {
      const options = (await user.post('/api/auth/passkeys/options')).body.data.options;
      const answer = await user.post('/api/auth/passkeys', { name: 'Bad', response: authenticatorFor().register(options, overrides) });
      expect(answer.status, label).toBe(400);
      expect(answer.body).toEqual({ success: false, error: expect.any(String) });
    }
    const options = (await user.post('/api/auth/passkeys/options')).body.data.options;
    const response = authenticatorFor().register(options);
    const garbled = await user.post('/api/auth/passkeys', { name: 'Bad', response: { ...response, response: { ...response.response, clientDataJSON: 'not json' } } });
    expect(garbled.status).toBe(400);
    const missing = await user.post('/api/auth/passkeys', { name: 'Bad' });
    expect(missing.status).toBe(400);
    expect((await user.get('/api/auth/passkeys')).body.data.passkeys).toEqual([]);
  });

  it('uses a registration challenge once, for the account it was issued to, for 5 minutes', async () => {
    const user = await account();
    const other = await account();
    const options = (await user.post('/api/auth/passkeys/options')).body.data.options;
    const response = authenticatorFor().register(options);
    // Another account cannot use it (nor does it use it up).
    expect((await other.post('/api/auth/passkeys', { name: 'Stolen', response })).status).toBe(400);
    expect((await user.post('/api/auth/passkeys', { name: 'Mine', response })).status).toBe(201);
    // Replayed.
    const replayed = await user.post('/api/auth/passkeys', { name: 'Again', response });
    expect(replayed.status).toBe(400);

    const late = (await user.post('/api/auth/passkeys/options')).body.data.options;
    await server.ctx.db.updateTable('webauthnChallenges').set({ expiresAt: Date.now() - 1 }).where('challenge', '=', late.challenge).execute();
    expect((await user.post('/api/auth/passkeys', { name: 'Late', response: authenticatorFor().register(late) })).status).toBe(400);
    expect((await user.get('/api/auth/passkeys')).body.data.passkeys.map((p: { name: string }) => p.name)).toEqual(['Mine']);
  });

  it("answers 404 for another account's passkey and for an unknown ID", async () => {
    const owner = await account();
    const stranger = await account();
    const passkey = (await registerPasskey(owner, authenticatorFor())).body.data.passkey;
    for (const id of [passkey.id, 'no-such-passkey']) {
      const renamed = await stranger.patch(`/api/auth/passkeys/${id}`, { name: 'Mine now' });
      expect(renamed.status).toBe(404);
      expect(renamed.body).toEqual({ success: false, error: expect.any(String) });
      expect((await stranger.delete(`/api/auth/passkeys/${id}`)).status).toBe(404);
    }
    expect((await stranger.get('/api/auth/passkeys')).body.data.passkeys).toEqual([]);
    expect((await owner.get('/api/auth/passkeys')).body.data.passkeys).toEqual([passkey]);
  });

  it("does not tell a signed-in account that another account's credential ID is taken", async () => {
    // Sign-in options give an email's credential IDs to anyone (made-up ones for an address without
    // passkeys): registering one elsewhere must not confirm which of them are real.
    const owner = await account();
    const prober = await account();
    expect((await registerPasskey(owner, authenticatorFor())).status).toBe(201);
    const realId = (await signInOptions(clientAt(), owner.email)).allowCredentials[0].id as string;
    const madeUpId = (await signInOptions(clientAt(), uniqueEmail('nobody'))).allowCredentials[0].id as string;
    const forged = async (credentialId: string) => {
      const options = await prober.post('/api/auth/passkeys/options');
      return prober.post('/api/auth/passkeys', { name: 'Probe', response: authenticatorFor().register(options.body.data.options, { credentialId }) });
    };
    const real = await forged(realId);
    expect([real.status, real.body]).toEqual([400, { success: false, error: 'The passkey could not be verified; start again' }]);
    expect((await prober.get('/api/auth/passkeys')).body.data.passkeys).toEqual([]);
    // The made-up one is no one's: it registers (and so would any new credential).
    expect((await forged(madeUpId)).status).toBe(201);
    // One's own credential registered twice is still said plainly.
    const ownId = (await owner.get('/api/auth/passkeys')).body.data.passkeys[0];
    expect(ownId).toBeDefined();
    const again = await owner.post('/api/auth/passkeys', { name: 'Again', response: authenticatorFor().register((await owner.post('/api/auth/passkeys/options')).body.data.options, { credentialId: realId }) });
    expect([again.status, again.body.error]).toEqual([409, 'This passkey is already registered']);
  });

  it("goes with its account: deleting the account deletes its passkeys and challenges", async () => {
    const user = await account();
    expect((await registerPasskey(user, authenticatorFor())).status).toBe(201);
    expect((await user.post('/api/auth/passkeys/options')).status).toBe(200);
    expect((await admin.delete(`/api/users/${user.userId}`)).status).toBe(204);
    expect(await server.ctx.db.selectFrom('passkeys').select('id').where('userId', '=', user.userId).execute()).toEqual([]);
    expect(await server.ctx.db.selectFrom('webauthnChallenges').select('challenge').where('userId', '=', user.userId).execute()).toEqual([]);
  });

  it('takes a browser session only: a named token gets the generic 401', async () => {
    const created = await admin.post('/api/tokens', { name: 'script', scopes: ['files:read'] });
    expect(created.status).toBe(201);
    const token = created.body.data.secret;
    const bearer = new Client(server.baseUrl);
    for (const [method, path] of [
      ['POST', '/api/auth/passkeys/options'],
      ['GET', '/api/auth/passkeys'],
      ['POST', '/api/auth/passkeys'],
      ['PATCH', '/api/auth/passkeys/x'],
      ['DELETE', '/api/auth/passkeys/x'],
    ] as const) {
      const answer = await bearer.request(method, path, { token, ...(method === 'POST' || method === 'PATCH' ? { json: { name: 'x' } } : {}) });
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
    }
    expect((await new Client(server.baseUrl).get('/api/auth/passkeys')).status).toBe(401);
  });
});

describe('signing in with a passkey', () => {
  it("signs in with the email's credentials: the cookie, {user}, a passkey session, lastUsedAt", async () => {
    const user = await account();
    const authenticator = authenticatorFor();
    expect((await registerPasskey(user, authenticator)).status).toBe(201);

    const browser = clientAt();
    const options = await signInOptions(browser, user.email);
    expect(options.rpId).toBe('127.0.0.1');
    expect(options.userVerification).toBe('required');
    expect(options.allowCredentials.map((c: { id: string }) => c.id)).toEqual(authenticator.credentialIds);
    const answer = await browser.post('/api/auth/passkey', { response: authenticator.signIn(options) });
    expect(answer.status).toBe(200);
    expect(answer.body.data.user).toMatchObject({ id: user.userId, email: user.email, passkeyCount: 1 });
    expect(answer.headers.getSetCookie().some((c) => c.startsWith('hoard_session='))).toBe(true);
    expect((await browser.get('/api/auth/me')).body.data.user.id).toBe(user.userId);

    const sessions = await server.ctx.db.selectFrom('sessions').select(['method']).where('userId', '=', user.userId).orderBy('createdAt', 'desc').execute();
    expect(sessions[0]!.method).toBe('passkey');
    const [passkey] = (await user.get('/api/auth/passkeys')).body.data.passkeys;
    expect(Date.parse(passkey.lastUsedAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('signs in with a discoverable credential, without an email', async () => {
    const user = await account();
    const authenticator = authenticatorFor();
    expect((await registerPasskey(user, authenticator)).status).toBe(201);
    const browser = clientAt();
    const options = await signInOptions(browser);
    expect(options.allowCredentials ?? []).toEqual([]);
    // The body may be left out altogether.
    const bare = await browser.post('/api/auth/passkey/options');
    expect(bare.status).toBe(200);
    expect(bare.body.data.options.allowCredentials ?? []).toEqual([]);
    const answer = await browser.post('/api/auth/passkey', { response: authenticator.signIn(options) });
    expect(answer.status).toBe(200);
    expect(answer.body.data.user.id).toBe(user.userId);
  });

  it('answers an unknown email, or one without passkeys, like one with passkeys (a stable, made-up credential)', async () => {
    const withoutPasskeys = await account();
    for (const email of [uniqueEmail('nobody'), withoutPasskeys.email]) {
      const first = await signInOptions(clientAt(), email);
      const second = await signInOptions(clientAt(), email.toUpperCase());
      expect(first.allowCredentials.length).toBeGreaterThanOrEqual(1);
      expect(first.allowCredentials.length).toBeLessThanOrEqual(2);
      for (const { id } of first.allowCredentials) expect([16, 20, 32, 64]).toContain(Buffer.from(id, 'base64url').length);
      expect(second.allowCredentials).toEqual(first.allowCredentials);
      expect(Object.keys(first).sort()).toEqual(['allowCredentials', 'challenge', 'rpId', 'timeout', 'userVerification']);
    }
    // Not one shape for every made-up answer, which would tell them from real ones: counts and lengths vary
    // as real accounts' do (over 40 addresses, both counts and three lengths or more, by a wide margin).
    const shapes = await Promise.all(Array.from({ length: 40 }, async (_, i) => (await signInOptions(clientAt(), `shape-${i}@example.com`)).allowCredentials as Array<{ id: string }>));
    expect(new Set(shapes.map((credentials) => credentials.length))).toEqual(new Set([1, 2]));
    expect(new Set(shapes.flat().map(({ id }) => Buffer.from(id, 'base64url').length)).size).toBeGreaterThanOrEqual(3);
    // And answers with a credential no account holds are the generic 401.
    const stranger = authenticatorFor();
    stranger.register({ challenge: 'AAAA', rp: { id: '127.0.0.1', name: 'x' }, user: { id: 'dXNlcg', name: 'u', displayName: 'u' }, pubKeyCredParams: [{ alg: -7, type: 'public-key' }] });
    const { answer } = await passkeySignIn(stranger);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
    expect(answer.headers.getSetCookie()).toEqual([]);
  });

  it('refuses an answer whose user handle is not the account of its credential', async () => {
    const user = await account();
    const other = await account();
    const authenticator = authenticatorFor();
    expect((await registerPasskey(user, authenticator)).status).toBe(201);
    const browser = clientAt();
    const response = authenticator.signIn(await signInOptions(browser));
    const answer = await browser.post('/api/auth/passkey', { response: { ...response, response: { ...response.response, userHandle: Buffer.from(other.userId).toString('base64url') } } });
    expect(answer.status).toBe(401);
  });

  it("refuses another account's passkey on an email-bound challenge", async () => {
    const alice = await account();
    const bob = await account();
    const bobsKey = authenticatorFor();
    expect((await registerPasskey(bob, bobsKey)).status).toBe(201);
    expect((await registerPasskey(alice, authenticatorFor())).status).toBe(201);
    const browser = clientAt();
    const options = await signInOptions(browser, alice.email);
    const answer = await browser.post('/api/auth/passkey', { response: bobsKey.signIn(options, { credentialId: bobsKey.credentialIds[0]! }) });
    expect(answer.status).toBe(401);
  });

  it('fails a counter that goes backwards (a cloned authenticator) and allows one that stays 0', async () => {
    const user = await account();
    const counting = authenticatorFor();
    expect((await registerPasskey(user, counting)).status).toBe(201);
    const [credentialId] = counting.credentialIds;
    counting.setCounter(credentialId!, 10);
    expect((await passkeySignIn(counting, user.email)).answer.status).toBe(200); // 11
    counting.setCounter(credentialId!, 4);
    expect((await passkeySignIn(counting, user.email)).answer.status).toBe(401); // 5 < 11
    counting.setCounter(credentialId!, 10);
    expect((await passkeySignIn(counting, user.email)).answer.status).toBe(401); // 11 again: not forwards
    expect((await passkeySignIn(counting, user.email)).answer.status).toBe(200); // 12

    const counterless = authenticatorFor();
    counterless.counterStep = 0;
    expect((await registerPasskey(user, counterless)).status).toBe(201);
    for (let i = 0; i < 2; i += 1) expect((await passkeySignIn(counterless, undefined)).answer.status).toBe(200);
  });

  it('lets only one of two answers carrying the same counter through, even in parallel (a clone racing the original)', async () => {
    const user = await account();
    const authenticator = authenticatorFor();
    expect((await registerPasskey(user, authenticator)).status).toBe(201);
    const [credentialId] = authenticator.credentialIds;
    for (let round = 0; round < 5; round += 1) {
      const [a, b] = [clientAt(), clientAt()];
      const optionsA = await signInOptions(a, user.email);
      const optionsB = await signInOptions(b, user.email);
      const counter = 100 * (round + 1);
      authenticator.setCounter(credentialId!, counter);
      const responseA = authenticator.signIn(optionsA);
      authenticator.setCounter(credentialId!, counter);
      const responseB = authenticator.signIn(optionsB);
      const answers = await Promise.all([a.post('/api/auth/passkey', { response: responseA }), b.post('/api/auth/passkey', { response: responseB })]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 401]);
    }
  });

  it('fails an answer from another origin, for another RP ID, in another site\'s frame, or without user verification', async () => {
    const user = await account();
    const authenticator = authenticatorFor();
    expect((await registerPasskey(user, authenticator)).status).toBe(201);
    for (const overrides of [{ origin: 'https://evil.example' }, { origin: 'http://127.0.0.1:1' }, { rpId: 'evil.example' }, { framedBy: 'https://evil.example' }, { framedBy: null }, { topOriginOnly: 'https://evil.example' }, { userVerified: false }]) {
      const { answer } = await passkeySignIn(authenticator, user.email, overrides);
      expect(answer.status, JSON.stringify(overrides)).toBe(401);
      expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
    }
    expect((await passkeySignIn(authenticator, user.email)).answer.status).toBe(200);
  });

  it('uses a sign-in challenge once and for 5 minutes; a made-up challenge fails', async () => {
    const user = await account();
    const authenticator = authenticatorFor();
    expect((await registerPasskey(user, authenticator)).status).toBe(201);
    const { answer, response } = await passkeySignIn(authenticator, user.email);
    expect(answer.status).toBe(200);
    expect((await clientAt().post('/api/auth/passkey', { response })).status).toBe(401);

    const browser = clientAt();
    const options = await signInOptions(browser, user.email);
    await server.ctx.db.updateTable('webauthnChallenges').set({ expiresAt: Date.now() - 1 }).where('challenge', '=', options.challenge).execute();
    expect((await browser.post('/api/auth/passkey', { response: authenticator.signIn(options) })).status).toBe(401);

    expect((await passkeySignIn(authenticator, user.email, { challenge: 'bWFkZSB1cCBjaGFsbGVuZ2U' })).answer.status).toBe(401);
    // A registration challenge is not a sign-in challenge.
    const registration = (await user.post('/api/auth/passkeys/options')).body.data.options;
    expect((await passkeySignIn(authenticator, user.email, { challenge: registration.challenge })).answer.status).toBe(401);
  });

  it('counts failures toward the per-IP sign-in throttle before verifying; successes do not use it up', async () => {
    const user = await account();
    const authenticator = authenticatorFor();
    expect((await registerPasskey(user, authenticator)).status).toBe(201);
    const attacker = clientAt();
    const forged = authenticator.signIn(await signInOptions(attacker, user.email), { origin: 'https://evil.example' });
    const answers = await Promise.all(Array.from({ length: 35 }, () => attacker.post('/api/auth/passkey', { response: forged })));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(30);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(5);
    expect(Number(answers.find((a) => a.status === 429)!.headers.get('retry-after'))).toBeGreaterThan(0);
    // Even a good answer is refused from that address now.
    const good = authenticator.signIn(await signInOptions(attacker, user.email));
    expect((await attacker.post('/api/auth/passkey', { response: good })).status).toBe(429);

    const office = clientAt();
    for (let i = 0; i < 32; i += 1) {
      const response = authenticator.signIn(await signInOptions(office, user.email));
      expect((await office.post('/api/auth/passkey', { response })).status).toBe(200);
    }
  });

  it('leaves named tokens working through registering, signing in and deleting passkeys', async () => {
    const created = await admin.post('/api/tokens', { name: 'uploader', scopes: ['files:read'] });
    const token = created.body.data.secret;
    const authenticator = authenticatorFor();
    const passkey = (await registerPasskey(admin, authenticator)).body.data.passkey;
    expect((await passkeySignIn(authenticator, admin.email)).answer.status).toBe(200);
    expect((await admin.delete(`/api/auth/passkeys/${passkey.id}`)).status).toBe(204);
    expect((await new Client(server.baseUrl).get('/api/files', { token })).status).toBe(200);
  });
});
