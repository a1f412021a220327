/**
 * Two-factor codes (contract §8): setup, enabling with a first code, the two-step sign-in with a
 * ticket, replay and drift, recovery codes, turning it off, and an administrator's reset. Codes are
 * computed with the same library an authenticator app's arithmetic follows (RFC 6238).
 */
import { codeAt, previousStepCode, STEP_MS } from '../support/totp.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken } from '../support/uploads.ts';
import { SoftwareAuthenticator } from '../support/authenticator.ts';
import { SESSION_COOKIE } from '../../src/auth/sessions.ts';
import { sha256Hex } from '../../src/auth/secrets.ts';
import { SecretBox } from '../../src/auth/secret-box.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
beforeAll(async () => {
  // TRUST_PROXY: each browser speaks from an address of its own (the sign-in throttle is per address).
  server = await startTestServer({ TRUST_PROXY: 'true' });
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

let ipCounter = 0;
function browser(): Client & { ip: string } {
  const client = new Client(server.baseUrl) as Client & { ip: string };
  client.ip = `192.0.2.${++ipCounter}`;
  const request = client.request.bind(client);
  client.request = (method, path, options = {}) => request(method, path, { ...options, headers: { 'x-forwarded-for': client.ip, ...options.headers } });
  return client;
}


interface Account {
  email: string;
  password: string;
  userId: string;
  client: Client & { ip: string };
}

async function account(): Promise<Account> {
  const email = uniqueEmail('twofactor');
  const password = 'a two-factor password';
  const created = await admin.post('/api/users', { email, password });
  expect(created.status).toBe(201);
  const client = browser();
  expect((await client.post('/api/auth/login', { email, password })).status).toBe(200);
  return { email, password, userId: created.body.data.user.id, client };
}

/** Two-factor on; returns the secret and the recovery codes. */
async function enable(acc: Account): Promise<{ secret: string; recoveryCodes: string[]; enablingCode: string }> {
  const setup = await acc.client.post('/api/auth/totp/setup');
  expect(setup.status).toBe(200);
  const { secret } = setup.body.data;
  // A code of the step before: the current one stays unused for the test's own sign-in.
  const enablingCode = await previousStepCode(secret);
  const enabled = await acc.client.post('/api/auth/totp/enable', { code: enablingCode });
  expect(enabled.status).toBe(200);
  return { secret, recoveryCodes: enabled.body.data.recoveryCodes, enablingCode };
}

async function passwordStep(acc: Account, client = browser()) {
  const answer = await client.post('/api/auth/login', { email: acc.email, password: acc.password });
  expect(answer.status).toBe(200);
  return { client, answer };
}

describe('setting up two-factor', () => {
  it('gives a base32 secret of at least 160 bits and its otpauth URL; a first code turns it on with 10 recovery codes', async () => {
    const acc = await account();
    expect((await acc.client.get('/api/auth/me')).body.data.user.twoFactorEnabled).toBe(false);
    const setup = await acc.client.post('/api/auth/totp/setup');
    expect(setup.status).toBe(200);
    const { secret, otpauthUrl } = setup.body.data;
    expect(secret).toMatch(/^[A-Z2-7]{32,}$/);
    expect(secret.length * 5).toBeGreaterThanOrEqual(160);
    const url = new URL(otpauthUrl);
    expect(url.protocol).toBe('otpauth:');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBe('Hoard');

    // A wrong code is a 400; two-factor stays off.
    expect((await acc.client.post('/api/auth/totp/enable', { code: '000000' === codeAt(secret, Date.now()) ? '111111' : '000000' })).status).toBe(400);
    expect((await acc.client.get('/api/auth/me')).body.data.user.twoFactorEnabled).toBe(false);

    const enabled = await acc.client.post('/api/auth/totp/enable', { code: codeAt(secret, Date.now()) });
    expect(enabled.status).toBe(200);
    const codes = enabled.body.data.recoveryCodes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    expect((await acc.client.get('/api/auth/me')).body.data.user.twoFactorEnabled).toBe(true);
    // The secret is kept sealed, never as it was shown.
    const row = await server.ctx.db.selectFrom('users').select(['totpSecretSealed', 'totpPendingSealed']).where('id', '=', acc.userId).executeTakeFirstOrThrow();
    expect(row.totpSecretSealed).not.toContain(secret);
    expect(row.totpPendingSealed).toBeNull();
    // Recovery codes are kept hashed.
    const stored = await server.ctx.db.selectFrom('recoveryCodes').select('codeHash').where('userId', '=', acc.userId).execute();
    expect(stored).toHaveLength(10);
    for (const code of codes) expect(stored.map((r) => r.codeHash)).not.toContain(code);
  });

  it('a new setup replaces an unconfirmed secret; setup is 409 once two-factor is on', async () => {
    const acc = await account();
    const first = (await acc.client.post('/api/auth/totp/setup')).body.data.secret;
    const second = (await acc.client.post('/api/auth/totp/setup')).body.data.secret;
    expect(second).not.toBe(first);
    // The code of the replaced secret (the set-up of another tab came after) says what may have happened.
    const replaced = await acc.client.post('/api/auth/totp/enable', { code: codeAt(first, Date.now()) });
    expect([replaced.status, replaced.body.error]).toEqual([
      400,
      'code: not a current code of the newest secret set up; check the time on your device, and that no other tab or window started a new set-up since (the newest replaces the others: scan its code instead)',
    ]);
    expect((await acc.client.post('/api/auth/totp/enable', { code: codeAt(second, Date.now()) })).status).toBe(200);
    expect((await acc.client.post('/api/auth/totp/setup')).status).toBe(409);
    expect((await acc.client.post('/api/auth/totp/enable', { code: codeAt(second, Date.now() + STEP_MS) })).status).toBe(409);
  });

  it('turning off and new recovery codes answer 409 while two-factor is off; enabling without setup is 409', async () => {
    const acc = await account();
    expect((await acc.client.post('/api/auth/totp/disable', { password: acc.password })).status).toBe(409);
    expect((await acc.client.post('/api/auth/recovery-codes', { password: acc.password })).status).toBe(409);
    expect((await acc.client.post('/api/auth/totp/enable', { code: '123456' })).status).toBe(409);
  });

  it('takes a browser session only: named tokens and the legacy credential get the generic 401', async () => {
    const acc = await account();
    const token = await createToken(acc.client, ['files:read', 'files:upload', 'urls:read', 'urls:write']);
    const legacy = (await acc.client.get('/api/profile/upload-token')).body.data.uploadToken as string;
    for (const credential of [token, legacy]) {
      for (const path of ['/api/auth/totp/setup', '/api/auth/totp/enable', '/api/auth/totp/disable', '/api/auth/recovery-codes']) {
        const answer = await new Client(server.baseUrl).post(path, {}, { token: credential });
        expect(answer.status, path).toBe(401);
        expect(answer.body).toEqual({ success: false, error: 'Unauthorized' });
      }
    }
  });
});

describe('signing in with two-factor on', () => {
  it('the password step answers a ticket and sets no cookie; the code step signs in with the method two-factor', async () => {
    const acc = await account();
    const { secret } = await enable(acc);
    const { client, answer } = await passwordStep(acc);
    expect(answer.body.data).toEqual({ twoFactorRequired: true, ticket: expect.any(String), methods: ['totp', 'recovery'] });
    expect(answer.headers.getSetCookie()).toEqual([]);
    expect(client.cookies.has(SESSION_COOKIE)).toBe(false);
    expect((await client.get('/api/auth/me')).status).toBe(401);

    // Typed as authenticator apps show it, in two groups of three.
    const code = codeAt(secret, Date.now());
    const done = await client.post('/api/auth/login/two-factor', { ticket: answer.body.data.ticket, code: `${code.slice(0, 3)} ${code.slice(3)}` });
    expect(done.status).toBe(200);
    expect(done.body.data.user.email).toBe(acc.email);
    expect(client.cookies.has(SESSION_COOKIE)).toBe(true);
    const sessions = (await client.get('/api/auth/sessions')).body.data.sessions as Array<{ method: string; current: boolean }>;
    expect(sessions.find((s) => s.current)!.method).toBe('two-factor');
  });

  it('refuses a replayed code, accepts one step of drift either side and refuses two', async () => {
    const acc = await account();
    const { secret, enablingCode } = await enable(acc);
    const now = Date.now();
    // Two steps away: refused either way.
    for (const at of [now - 2 * STEP_MS - 1000, now + 2 * STEP_MS + 1000]) {
      const { client, answer } = await passwordStep(acc);
      expect((await client.post('/api/auth/login/two-factor', { ticket: answer.body.data.ticket, code: codeAt(secret, at) })).status).toBe(401);
    }
    const signIn = async (code: string) => {
      const { client, answer } = await passwordStep(acc);
      return (await client.post('/api/auth/login/two-factor', { ticket: answer.body.data.ticket, code })).status;
    };
    // One step ahead is accepted (a phone whose clock runs fast), once.
    const ahead = codeAt(secret, Date.now() + STEP_MS);
    expect(await signIn(ahead)).toBe(200);
    expect(await signIn(ahead)).toBe(401);
    // The current step's code was not used: it is accepted after the later one, once (each step's
    // code once per account, contract §8).
    const current = codeAt(secret, Date.now());
    expect(await signIn(current)).toBe(200);
    expect(await signIn(current)).toBe(401);
    // The code that turned two-factor on is used too.
    expect(await signIn(enablingCode)).toBe(401);
  });

  it('accepts the code of the step before (a phone whose clock runs slow), also right after the current one turned two-factor on', async () => {
    const acc = await account();
    const setup = await acc.client.post('/api/auth/totp/setup');
    const { secret } = setup.body.data;
    const before = await previousStepCode(secret);
    expect((await acc.client.post('/api/auth/totp/enable', { code: codeAt(secret, Date.now()) })).status).toBe(200);
    const { client, answer } = await passwordStep(acc);
    expect((await client.post('/api/auth/login/two-factor', { ticket: answer.body.data.ticket, code: before })).status).toBe(200);
  });

  it('keeps the steps used of the window alone: a sign-in deletes the older ones', async () => {
    const acc = await account();
    const { secret } = await enable(acc);
    const step = Math.floor(Date.now() / STEP_MS);
    await server.ctx.db.insertInto('totpUsedSteps').values([step - 40, step - 3].map((old) => ({ userId: acc.userId, step: old }))).execute();
    const { client, answer } = await passwordStep(acc);
    expect((await client.post('/api/auth/login/two-factor', { ticket: answer.body.data.ticket, code: codeAt(secret, Date.now()) })).status).toBe(200);
    const kept = (await server.ctx.db.selectFrom('totpUsedSteps').select('step').where('userId', '=', acc.userId).execute()).map((row) => Number(row.step));
    expect(kept.every((used) => used >= step - 1)).toBe(true);
    expect(kept.length).toBeGreaterThanOrEqual(1);
    expect(kept.length).toBeLessThanOrEqual(3);
  });

  it('a secret sealed with another key of the instance (SECRET_KEY changed) refuses codes with the generic 401, not a 500; recovery codes still work', async () => {
    const acc = await account();
    const { secret, recoveryCodes } = await enable(acc);
    // What a start with another SECRET_KEY finds: the secret, sealed with the key it had before.
    const otherKey = new SecretBox('another instance secret key, 32 characters or more', 'hoard two-factor secrets v1');
    await server.ctx.db.updateTable('users').set({ totpSecretSealed: otherKey.seal(secret, `totp:${acc.userId}`) }).where('id', '=', acc.userId).execute();
    const step = await passwordStep(acc);
    const answer = await step.client.post('/api/auth/login/two-factor', { ticket: step.answer.body.data.ticket, code: codeAt(secret, Date.now()) });
    expect([answer.status, answer.body.error]).toEqual([401, 'Unauthorized']);
    expect((await step.client.post('/api/auth/login/two-factor', { ticket: step.answer.body.data.ticket, code: recoveryCodes[0] })).status).toBe(200);
    // A set-up pending under the other key: set it up again.
    const other = await account();
    expect((await other.client.post('/api/auth/totp/setup')).status).toBe(200);
    await server.ctx.db.updateTable('users').set({ totpPendingSealed: otherKey.seal('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', `totp:${other.userId}`) }).where('id', '=', other.userId).execute();
    const enabling = await other.client.post('/api/auth/totp/enable', { code: '123456' });
    expect([enabling.status, enabling.body.error]).toEqual([409, 'The two-factor set-up was made with another secret key of this instance; set it up again (POST /api/auth/totp/setup)']);
  });

  it('a ticket works once, dies after 5 wrong codes, and expires after 5 minutes', async () => {
    const acc = await account();
    const { secret, recoveryCodes } = await enable(acc);

    // Once.
    const once = await passwordStep(acc);
    expect((await once.client.post('/api/auth/login/two-factor', { ticket: once.answer.body.data.ticket, code: recoveryCodes[0] })).status).toBe(200);
    expect((await browser().post('/api/auth/login/two-factor', { ticket: once.answer.body.data.ticket, code: recoveryCodes[1] })).status).toBe(401);

    // Five wrong codes, then even a right one is refused.
    const wrong = await passwordStep(acc);
    for (let i = 0; i < 5; i++) expect((await wrong.client.post('/api/auth/login/two-factor', { ticket: wrong.answer.body.data.ticket, code: 'wrong-code' })).status).toBe(401);
    expect((await wrong.client.post('/api/auth/login/two-factor', { ticket: wrong.answer.body.data.ticket, code: recoveryCodes[2] })).status).toBe(401);

    // Expired (the ticket's row aged by 5 minutes).
    const late = await passwordStep(acc);
    await server.ctx.db.updateTable('signInTickets').set({ expiresAt: Date.now() - 1 }).where('userId', '=', acc.userId).where('usedAt', 'is', null).execute();
    expect((await late.client.post('/api/auth/login/two-factor', { ticket: late.answer.body.data.ticket, code: recoveryCodes[3] })).status).toBe(401);
    expect(late.client.cookies.has(SESSION_COOKIE)).toBe(false);

    // An unknown ticket is the same generic 401.
    const unknown = await browser().post('/api/auth/login/two-factor', { ticket: 'no-such-ticket', code: codeAt(secret, Date.now()) });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ success: false, error: 'Unauthorized' });
  });

  it('counts a code against its ticket before checking it: wrong codes sent at once check at most 5', async () => {
    // A throttle counts before it verifies; a ticket's five codes are no exception, or parallel
    // requests that all read "fewer than 5 so far" would each get their code checked.
    const acc = await account();
    await enable(acc);
    const { client, answer } = await passwordStep(acc);
    const ticket = answer.body.data.ticket as string;
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => client.post('/api/auth/login/two-factor', { ticket, code: `00000${i}` })));
    expect(answers.every((a) => a.status === 401)).toBe(true);
    const row = await server.ctx.db.selectFrom('signInTickets').select('failures').where('id', '=', sha256Hex(ticket)).executeTakeFirstOrThrow();
    expect(Number(row.failures)).toBe(5);
  });

  it("spent and expired tickets do not pile up: a new ticket clears the account's old ones", async () => {
    const acc = await account();
    const { recoveryCodes } = await enable(acc);
    const used = await passwordStep(acc);
    expect((await used.client.post('/api/auth/login/two-factor', { ticket: used.answer.body.data.ticket, code: recoveryCodes[0] })).status).toBe(200);
    const dead = await passwordStep(acc);
    for (let i = 0; i < 5; i++) await dead.client.post('/api/auth/login/two-factor', { ticket: dead.answer.body.data.ticket, code: 'wrong-code' });
    await passwordStep(acc);
    await server.ctx.db.updateTable('signInTickets').set({ expiresAt: Date.now() - 1 }).where('userId', '=', acc.userId).where('usedAt', 'is', null).where('failures', '<', 5).execute();
    const live = await passwordStep(acc);
    const rows = await server.ctx.db.selectFrom('signInTickets').select('id').where('userId', '=', acc.userId).execute();
    expect(rows).toHaveLength(1);
    expect((await live.client.post('/api/auth/login/two-factor', { ticket: live.answer.body.data.ticket, code: recoveryCodes[1] })).status).toBe(200);
  });

  it('each recovery code works once; new codes replace the old ones', async () => {
    const acc = await account();
    const { recoveryCodes } = await enable(acc);
    const first = await passwordStep(acc);
    expect((await first.client.post('/api/auth/login/two-factor', { ticket: first.answer.body.data.ticket, code: recoveryCodes[0]!.toUpperCase() })).status).toBe(200);
    const again = await passwordStep(acc);
    expect((await again.client.post('/api/auth/login/two-factor', { ticket: again.answer.body.data.ticket, code: recoveryCodes[0] })).status).toBe(401);

    // A wrong password is 403 and counts as a failed sign-in; the right one gives 10 new codes.
    expect((await acc.client.post('/api/auth/recovery-codes', { password: 'not the password' })).status).toBe(403);
    const fresh = await acc.client.post('/api/auth/recovery-codes', { password: acc.password });
    expect(fresh.status).toBe(200);
    expect(fresh.body.data.recoveryCodes).toHaveLength(10);
    const old = await passwordStep(acc);
    expect((await old.client.post('/api/auth/login/two-factor', { ticket: old.answer.body.data.ticket, code: recoveryCodes[1] })).status).toBe(401);
    const renewed = await passwordStep(acc);
    expect((await renewed.client.post('/api/auth/login/two-factor', { ticket: renewed.answer.body.data.ticket, code: fresh.body.data.recoveryCodes[0] })).status).toBe(200);
  });

  it("two requests for new recovery codes at once: the codes that work are one answer's, all of it; one that overlapped is told 409", async () => {
    const acc = await account();
    await enable(acc);
    const answers = await Promise.all([0, 1].map(() => acc.client.post('/api/auth/recovery-codes', { password: acc.password })));
    // Two requests that overlap give 200 and 409; two that the server happened to take in turn (a
    // loaded machine) both give 200, the later one's codes replacing the earlier one's, as two tabs
    // asking one after the other would. Either way the codes that work are one answer's, all of it.
    const statuses = answers.map((a) => a.status).sort();
    expect([[200, 409], [200, 200]], answers.map((a) => a.text).join('\n')).toContainEqual(statuses);
    for (const refused of answers.filter((a) => a.status === 409)) expect(refused.body.error).toMatch(/replaced meanwhile/);
    const given = answers.filter((a) => a.status === 200).map((a) => a.body.data.recoveryCodes as string[]);
    const working: boolean[] = [];
    for (const codes of given) {
      const step = await passwordStep(acc);
      working.push((await step.client.post('/api/auth/login/two-factor', { ticket: step.answer.body.data.ticket, code: codes[0] })).status === 200);
    }
    expect(working.filter(Boolean)).toHaveLength(1);
    const inEffect = given[working.indexOf(true)]!;
    const step = await passwordStep(acc);
    expect((await step.client.post('/api/auth/login/two-factor', { ticket: step.answer.body.data.ticket, code: inEffect[9] })).status).toBe(200);
  });

  it("a password change makes the tickets of the old password worthless", async () => {
    const acc = await account();
    const { secret, recoveryCodes } = await enable(acc);
    // Someone with the old password got past the password step; the owner changes it.
    const stolen = await passwordStep(acc);
    const changed = await acc.client.patch('/api/account', { currentPassword: acc.password, newPassword: 'a brand new password' });
    expect(changed.status, changed.text).toBe(200);
    const late = await stolen.client.post('/api/auth/login/two-factor', { ticket: stolen.answer.body.data.ticket, code: recoveryCodes[0] });
    expect([late.status, late.body.error]).toEqual([401, 'Unauthorized']);
    expect((await stolen.client.get('/api/auth/me')).status).toBe(401);
    // The new password's ticket works, and the recovery code the refused attempt sent is not spent.
    const owner = await passwordStep({ ...acc, password: 'a brand new password' });
    expect((await owner.client.post('/api/auth/login/two-factor', { ticket: owner.answer.body.data.ticket, code: recoveryCodes[0] })).status).toBe(200);
    const again = await passwordStep({ ...acc, password: 'a brand new password' });
    expect((await again.client.post('/api/auth/login/two-factor', { ticket: again.answer.body.data.ticket, code: await codeAt(secret, Date.now()) })).status).toBe(200);
  });

  it('wrong codes count toward the sign-in throttle of the account and address', async () => {
    const acc = await account();
    await enable(acc);
    const client = browser();
    let status = 0;
    // 10 attempts per account and address in 15 minutes (login.ts): password steps and codes together.
    for (let attempt = 0; attempt < 12 && status !== 429; attempt++) {
      const step = await client.post('/api/auth/login', { email: acc.email, password: acc.password });
      if (step.status === 429) {
        status = 429;
        break;
      }
      status = (await client.post('/api/auth/login/two-factor', { ticket: step.body.data.ticket, code: 'wrong-code' })).status;
    }
    expect(status).toBe(429);
  });

  it('codes count toward the sign-in limit of their address too, before they are checked; a completed sign-in gives its count back', async () => {
    const acc = await account();
    const { secret } = await enable(acc);
    const client = browser();
    // One completed two-factor sign-in from the address: it counts nothing in the end.
    const first = await passwordStep(acc, client);
    expect((await client.post('/api/auth/login/two-factor', { ticket: first.answer.body.data.ticket, code: await codeAt(secret, Date.now()) })).status).toBe(200);
    // 30 failures from the address: unknown tickets count there.
    for (let i = 0; i < 30; i++) expect((await client.post('/api/auth/login/two-factor', { ticket: `no-such-ticket-${i}`, code: '123456' })).status).toBe(401);
    // A live ticket earned elsewhere, with the right code, is refused from that address unchecked (as
    // a right password is there), and taken from another.
    const ticket = (await passwordStep(acc)).answer.body.data.ticket;
    const code = await codeAt(secret, Date.now() + 30_000);
    expect((await client.post('/api/auth/login/two-factor', { ticket, code })).status).toBe(429);
    expect((await browser().post('/api/auth/login/two-factor', { ticket, code })).status).toBe(200);
  });

  it('a passkey sign-in asks for no code', async () => {
    const acc = await account();
    await enable(acc);
    const authenticator = new SoftwareAuthenticator(server.baseUrl);
    const options = await acc.client.post('/api/auth/passkeys/options');
    expect((await acc.client.post('/api/auth/passkeys', { name: 'Key', response: authenticator.register(options.body.data.options) })).status).toBe(201);
    const client = browser();
    const signIn = await client.post('/api/auth/passkey/options', { email: acc.email });
    const answer = await client.post('/api/auth/passkey', { response: authenticator.signIn(signIn.body.data.options) });
    expect(answer.status).toBe(200);
    expect(answer.body.data.user.twoFactorEnabled).toBe(true);
    expect((await client.get('/api/auth/me')).status).toBe(200);
  });
});

describe('turning two-factor off', () => {
  it('needs the password: a wrong one is 403; the right one turns it off and the password alone signs in again', async () => {
    const acc = await account();
    const { recoveryCodes } = await enable(acc);
    expect((await acc.client.post('/api/auth/totp/disable', { password: 'not the password' })).status).toBe(403);
    expect((await acc.client.post('/api/auth/totp/disable', { password: acc.password })).status).toBe(204);
    expect((await acc.client.get('/api/auth/me')).body.data.user.twoFactorEnabled).toBe(false);
    const { client, answer } = await passwordStep(acc);
    expect(answer.body.data.user.email).toBe(acc.email);
    expect(client.cookies.has(SESSION_COOKIE)).toBe(true);
    expect(await server.ctx.db.selectFrom('recoveryCodes').select('id').where('userId', '=', acc.userId).execute()).toEqual([]);
    expect(recoveryCodes).toHaveLength(10);
  });

  it('wrong passwords on turning off count as failed sign-ins of the account from that address', async () => {
    const acc = await account();
    await enable(acc);
    // 10 attempts per account and address in 15 minutes (login.ts), counted before the check.
    for (let i = 0; i < 10; i++) expect((await acc.client.post('/api/auth/totp/disable', { password: 'not the password' })).status).toBe(403);
    expect((await acc.client.post('/api/auth/totp/disable', { password: acc.password })).status).toBe(429);
    expect((await acc.client.post('/api/auth/recovery-codes', { password: acc.password })).status).toBe(429);
    const signIn = await acc.client.post('/api/auth/login', { email: acc.email, password: acc.password });
    expect(signIn.status).toBe(429);
    // Another address is not held back by them.
    expect((await browser().post('/api/auth/login', { email: acc.email, password: acc.password })).status).toBe(200);
    expect((await acc.client.get('/api/auth/me')).body.data.user.twoFactorEnabled).toBe(true);
  });

  it('neither enabling nor disabling touches named tokens or the legacy credential', async () => {
    const acc = await account();
    const token = await createToken(acc.client, ['files:read']);
    const legacy = (await acc.client.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const script = new Client(server.baseUrl);
    await enable(acc);
    expect((await script.get('/api/files', { token })).status).toBe(200);
    expect((await script.get('/api/files', { token: legacy })).status).toBe(200);
    expect((await acc.client.post('/api/auth/totp/disable', { password: acc.password })).status).toBe(204);
    expect((await script.get('/api/files', { token })).status).toBe(200);
    expect((await script.get('/api/files', { token: legacy })).status).toBe(200);
  });

  it('an administrator turns it off for a locked-out account; unknown accounts are 404, members may not', async () => {
    const acc = await account();
    await enable(acc);
    expect((await admin.delete(`/api/users/${acc.userId}/two-factor`)).status).toBe(204);
    const { answer } = await passwordStep(acc);
    expect(answer.body.data.user.twoFactorEnabled).toBe(false);
    expect((await admin.delete('/api/users/no-such-user/two-factor')).status).toBe(404);
    const member = await account();
    expect((await member.client.delete(`/api/users/${acc.userId}/two-factor`)).status).toBe(403);
  });

  it('an administrator cannot turn off its own two-factor from the administration: that takes its password', async () => {
    // Else a stolen session of any account managing users would drop its second factor without the
    // password that POST /api/auth/totp/disable asks for, and without the throttle on wrong ones.
    const acc = await account();
    await enable(acc);
    const role = await admin.post('/api/roles', { name: `Own two-factor ${acc.userId}`, permissions: ['users.manage'] });
    expect((await admin.patch(`/api/users/${acc.userId}`, { roleIds: [role.body.data.role.id] })).status).toBe(200);
    const own = await acc.client.delete(`/api/users/${acc.userId}/two-factor`);
    expect([own.status, own.body.error]).toEqual([400, 'You cannot turn off your own two-factor from the administration: turn it off in your account settings, with your password']);
    expect((await acc.client.get('/api/auth/me')).body.data.user.twoFactorEnabled).toBe(true);
    expect((await admin.delete(`/api/users/${admin.userId}/two-factor`)).status).toBe(400);
    // Another account's it turns off as before.
    const other = await account();
    await enable(other);
    expect((await acc.client.delete(`/api/users/${other.userId}/two-factor`)).status).toBe(204);
  });

  it("the administration's user record says whether two-factor is on", async () => {
    const acc = await account();
    const record = async () => ((await admin.get('/api/users')).body.data.users as Array<{ id: string; twoFactorEnabled: boolean }>).find((u) => u.id === acc.userId)!;
    expect((await record()).twoFactorEnabled).toBe(false);
    await enable(acc);
    expect((await record()).twoFactorEnabled).toBe(true);
    const renamed = await admin.patch(`/api/users/${acc.userId}`, { name: 'Renamed' });
    expect(renamed.body.data.user.twoFactorEnabled).toBe(true);
    expect((await admin.delete(`/api/users/${acc.userId}/two-factor`)).status).toBe(204);
    expect((await record()).twoFactorEnabled).toBe(false);
    // Resetting an account whose two-factor is already off changes nothing and is not an error.
    expect((await admin.delete(`/api/users/${acc.userId}/two-factor`)).status).toBe(204);
  });

  it('a manager without administrator resets an ordinary account, not an account holding more than it does', async () => {
    const role = await admin.post('/api/roles', { name: `Two-factor helpers ${++ipCounter}`, permissions: ['users.manage'] });
    expect(role.status).toBe(201);
    const manager = await account();
    expect((await admin.patch(`/api/users/${manager.userId}`, { roleIds: [role.body.data.role.id] })).status).toBe(200);
    const ordinary = await account();
    await enable(ordinary);
    expect((await manager.client.delete(`/api/users/${ordinary.userId}/two-factor`)).status).toBe(204);
    const adminId = (await admin.get('/api/auth/me')).body.data.user.id as string;
    const refused = await manager.client.delete(`/api/users/${adminId}/two-factor`);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: 'You cannot change an account holding the permission administrator, which you do not have' });
  });

  it('npm run cli -- user reset-two-factor --email E turns it off', async () => {
    const acc = await account();
    await enable(acc);
    const run = await runCli(['user', 'reset-two-factor', '--email', acc.email], { ...process.env, ...server.env });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(acc.email);
    const { answer } = await passwordStep(acc);
    expect(answer.body.data.user.twoFactorEnabled).toBe(false);
    const unknown = await runCli(['user', 'reset-two-factor', '--email', 'nobody@example.invalid'], { ...process.env, ...server.env });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('No account');
    const missing = await runCli(['user', 'reset-two-factor'], { ...process.env, ...server.env });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('--email');
  });
});

describe('a process with another SECRET_KEY', () => {
  it('says so in its log at start-up when none, or only some, of the stored secrets open', async () => {
    const key = 'the instance secret key, at least 32 characters long';
    const first = await startTestServer({ SECRET_KEY: key });
    const shared = { databaseUrl: first.databaseUrl, dataDir: first.dataDir };
    try {
      const owner = await signUp(first.baseUrl);
      // The legacy upload credential is sealed under the instance's key when first asked for.
      expect((await owner.get('/api/profile/upload-token')).status).toBe(200);
    } finally {
      await first.close();
    }
    const complaint = (lines: Array<{ level: number; msg?: string; [field: string]: unknown }>) => lines.filter((line) => line.level >= 50 && line.msg?.startsWith('SECRET_KEY does not open any of the secrets'));

    const wrongLog: Array<{ level: number; msg?: string; [field: string]: unknown }> = [];
    const wrong = await startTestServer({ SECRET_KEY: 'another key altogether, also 32 characters or more' }, shared, wrongLog);
    await wrong.close();
    expect(complaint(wrongLog)).toHaveLength(1);
    expect(complaint(wrongLog)[0]!.tried).toBe(1);
    expect(JSON.stringify(wrongLog)).not.toContain(key);

    const rightLog: Array<{ level: number; msg?: string; [field: string]: unknown }> = [];
    const right = await startTestServer({ SECRET_KEY: key }, shared, rightLog);
    await right.close();
    expect(rightLog.length).toBeGreaterThan(0);
    expect(complaint(rightLog)).toEqual([]);
    expect(rightLog.filter((line) => line.level >= 50)).toEqual([]);

    // A process with another key sealed a secret of its own (here a two-factor secret): from then on
    // the stored secrets open only in part with either key, which every start says too.
    const other = new SecretBox('another key altogether, also 32 characters or more');
    const holder = await startTestServer({ SECRET_KEY: key }, shared);
    try {
      const { id } = await holder.ctx.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
      await holder.ctx.db.updateTable('users').set({ totpSecretSealed: other.seal('JBSWY3DPEHPK3PXP', `totp:${id}`) }).where('id', '=', id).execute();
    } finally {
      await holder.close();
    }
    const mixedLog: Array<{ level: number; msg?: string; [field: string]: unknown }> = [];
    const mixed = await startTestServer({ SECRET_KEY: key }, shared, mixedLog);
    await mixed.close();
    const partial = mixedLog.filter((line) => line.level >= 50 && line.msg?.startsWith('some of the secrets this database holds do not open'));
    expect(partial).toHaveLength(1);
    expect([partial[0]!.tried, partial[0]!.opened]).toEqual([2, 1]);
  });
});
