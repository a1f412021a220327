/**
 * Throttles on password checks, registration, webhook test sends and short links: counted before the
 * work they limit (so parallel requests cannot slip past), keyed so that one attacker does not lock
 * out others, and their counters pruned by a job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { takeAttempt } from '../../src/auth/throttle.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
let ipCounter = 0;

beforeAll(async () => {
  // TRUST_PROXY lets each test speak from its own client address through X-Forwarded-For.
  server = await startTestServer({ TRUST_PROXY: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

/** A browser at its own client IP address. */
function clientAt(ip = `198.51.100.${++ipCounter}`): Client & { ip: string } {
  const client = new Client(server.baseUrl) as Client & { ip: string };
  client.ip = ip;
  const request = client.request.bind(client);
  client.request = (method, path, options = {}) => request(method, path, { ...options, headers: { ...options.headers, 'x-forwarded-for': ip } });
  return client;
}

async function createAccount(password = 'the right password') {
  const email = uniqueEmail('throttled');
  const created = await admin.post('/api/users', { email, password });
  expect(created.status).toBe(201);
  return { email, password };
}

async function signedIn(account: { email: string; password: string }) {
  const client = clientAt();
  expect((await client.post('/api/auth/login', account)).status).toBe(200);
  return client;
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

function expectRetryAfter(response: { headers: Headers }, atMost: number) {
  const seconds = Number(response.headers.get('retry-after'));
  expect(seconds).toBeGreaterThan(0);
  expect(seconds).toBeLessThanOrEqual(atMost);
}

describe('Retry-After', () => {
  // Parallel requests each read the clock before their turn at the database: one that read it
  // earlier may be counted after another opened the window, and must still not be told to wait
  // longer than the window lasts.
  it('never exceeds the window, also for an attempt counted after a later one opened it', async () => {
    const key = `retry-after-order:${uniqueEmail()}`;
    const opened = Date.now();
    await takeAttempt(server.ctx.db, key, 1, 900_000, 'too many', opened + 5);
    await expect(takeAttempt(server.ctx.db, key, 1, 900_000, 'too many', opened)).rejects.toMatchObject({ kind: 'rate_limited', retryAfter: 900 });
    // Half-way through the window, half of it is left.
    await expect(takeAttempt(server.ctx.db, key, 1, 900_000, 'too many', opened + 5 + 450_000)).rejects.toMatchObject({ retryAfter: 450 });
  });
});

describe('parallel wrong passwords', () => {
  it('let at most 10 sign-in attempts reach verification; the rest are 429', async () => {
    const victim = await createAccount();
    const attacker = clientAt();
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => attacker.post('/api/auth/login', { email: victim.email, password: `guess ${i}` })));
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: 10, 429: 15 });
    expectRetryAfter(answers.find((a) => a.status === 429)!, 900);
  });

  it('let at most 10 unlock attempts reach verification; the rest are 429', async () => {
    const uploaded = await uploadFile(admin, 'locked.txt', 'behind a password', { fields: { password: 'open sesame' } });
    expect(uploaded.status).toBe(200);
    const fileId = (uploaded.body.data.downloadUrl as string).split('/').at(-2);
    const visitor = clientAt();
    const answers = await Promise.all(Array.from({ length: 25 }, (_, i) => visitor.post(`/api/files/${fileId}/unlock`, { password: `guess ${i}` })));
    expect(tally(answers.map((a) => a.status))).toEqual({ 403: 10, 429: 15 });
    expectRetryAfter(answers.find((a) => a.status === 429)!, 900);
    // Another visitor is not locked out of the file.
    expect((await clientAt().post(`/api/files/${fileId}/unlock`, { password: 'open sesame' })).status).toBe(204);
  });

  it('counts an IPv6 network, not each of its addresses: a /64 is one client', async () => {
    const uploaded = await uploadFile(admin, 'locked-v6.txt', 'behind a password', { fields: { password: 'open sesame' } });
    const fileId = (uploaded.body.data.downloadUrl as string).split('/').at(-2);
    const statuses: number[] = [];
    for (const host of ['1', '2', 'abcd:1234:9abc']) {
      const visitor = clientAt(`2001:db8:77:${ipCounter}::${host}`);
      for (let i = 0; i < 5; i++) statuses.push((await visitor.post(`/api/files/${fileId}/unlock`, { password: `guess ${i}` })).status);
    }
    expect(statuses).toEqual([...Array(10).fill(403), ...Array(5).fill(429)]);
    // The next network is another client.
    expect((await clientAt(`2001:db8:77:${++ipCounter}::1`).post(`/api/files/${fileId}/unlock`, { password: 'open sesame' })).status).toBe(204);
    // A port some proxies add is no part of the client: two addresses with one port are two clients.
    const withPort = clientAt(`203.0.113.${++ipCounter}:61000`);
    for (let i = 0; i < 10; i++) expect((await withPort.post(`/api/files/${fileId}/unlock`, { password: `guess ${i}` })).status).toBe(403);
    expect((await withPort.post(`/api/files/${fileId}/unlock`, { password: 'open sesame' })).status).toBe(429);
    expect((await clientAt(`203.0.113.${++ipCounter}:61000`).post(`/api/files/${fileId}/unlock`, { password: 'open sesame' })).status).toBe(204);
  });

  it('let at most 10 password-change attempts reach verification; the rest are 429', async () => {
    const account = await createAccount();
    const session = await signedIn(account);
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) => session.patch('/api/account', { currentPassword: `guess ${i}`, newPassword: 'a brand new password' })),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 403: 10, 429: 15 });
    const limited = answers.find((a) => a.status === 429)!;
    expect(limited.body).toEqual({ success: false, error: expect.stringMatching(/^Too many wrong passwords; try again in \d+ (second|minute|hour)s?$/) });
    expectRetryAfter(limited, 900);
  });
});

describe('sign-in lock-out', () => {
  it('holds only the attacking address on the attacked account', async () => {
    const a = await createAccount();
    const b = await createAccount();
    const attacker = clientAt();
    for (let i = 0; i < 10; i++) expect((await attacker.post('/api/auth/login', { email: a.email, password: `guess ${i}` })).status).toBe(401);
    const blocked = await attacker.post('/api/auth/login', a);
    expect(blocked.status).toBe(429);
    expectRetryAfter(blocked, 900);

    // Another account from the same address, and the attacked account from another address, sign in.
    expect((await clientAt(attacker.ip).post('/api/auth/login', b)).status).toBe(200);
    expect((await clientAt().post('/api/auth/login', a)).status).toBe(200);
    // The email address is the same account whatever its case.
    expect((await attacker.post('/api/auth/login', { email: a.email.toUpperCase(), password: a.password })).status).toBe(429);
  });

  it('counts addresses without an account per client IP; past the limit that IP is held for every address, answered alike', async () => {
    const account = await createAccount();
    const sprayer = clientAt();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await sprayer.post('/api/auth/login', { email: uniqueEmail('nobody'), password: 'nope nope' })).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(statuses[30]).toBe(429);
    // An address without an account, a wrong password and the right one are all refused alike before
    // any password is checked: neither the answers nor their time tell which addresses have an
    // account, and the right password is not told from a wrong one.
    const unknown = await sprayer.post('/api/auth/login', { email: uniqueEmail('nobody'), password: 'nope nope' });
    const wrong = await sprayer.post('/api/auth/login', { email: account.email, password: 'nope nope' });
    const right = await sprayer.post('/api/auth/login', account);
    expect([wrong.status, wrong.body]).toEqual([unknown.status, unknown.body]);
    expect([right.status, right.body]).toEqual([unknown.status, unknown.body]);
    expect(right.headers.get('set-cookie')).toBeNull();
    expect(wrong.status).toBe(429);
    expectRetryAfter(wrong, 900);
    // The owner elsewhere is not held.
    expect((await clientAt().post('/api/auth/login', account)).status).toBe(200);
  });

  it("gives a sign-in's count back once it succeeds, so people signing in behind one address do not use up its limit", async () => {
    const account = await createAccount();
    const office = clientAt();
    for (let i = 0; i < 29; i++) expect((await office.post('/api/auth/login', { email: uniqueEmail('nobody'), password: 'nope nope' })).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await clientAt(office.ip).post('/api/auth/login', account)).status).toBe(200);
    expect((await office.post('/api/auth/login', { email: uniqueEmail('nobody'), password: 'nope nope' })).status).toBe(401);
    expect((await office.post('/api/auth/login', { email: uniqueEmail('nobody'), password: 'nope nope' })).status).toBe(429);
  });

  it('counts failed sign-ins per client IP whatever the address: 30 wrong passwords on several accounts, then 429', async () => {
    const accounts = [await createAccount(), await createAccount(), await createAccount(), await createAccount()];
    const guesser = clientAt();
    const statuses: number[] = [];
    // 8 on each account: under each account's 10, over the address's 30.
    for (const account of accounts) for (let i = 0; i < 8; i++) statuses.push((await guesser.post('/api/auth/login', { email: account.email, password: `guess ${i}` })).status);
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
    expect(statuses.slice(30)).toEqual([429, 429]);
    // Past the limit the right password is refused there too, or the guessing would go on with 429
    // for a wrong password and 200 for the right one; the owner elsewhere is not held at all.
    expect((await guesser.post('/api/auth/login', accounts[3])).status).toBe(429);
    expect((await clientAt().post('/api/auth/login', { email: accounts[3]!.email, password: 'wrong again' })).status).toBe(401);
    expect((await clientAt().post('/api/auth/login', accounts[3])).status).toBe(200);
  });
});

describe('registration', () => {
  it('is refused while closed without counting or hashing, then limited to 100 per hour per client IP', async () => {
    const registrant = clientAt();
    const attempt = () => registrant.post('/api/auth/register', { email: uniqueEmail('reg'), password: 'a good password' });
    // Closed: every attempt is answered 403 and none of them is counted.
    for (let i = 0; i < 35; i++) expect((await attempt()).status).toBe(403);

    expect((await admin.patch('/api/settings', { registration: 'open' })).status).toBe(200);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 100; i++) statuses.push((await attempt()).status);
      expect(statuses).toEqual(Array(100).fill(201));
      const limited = await attempt();
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ success: false, error: expect.stringMatching(/^Too many registrations from this address; try again in \d+ (second|minute|hour)s?$/) });
      expectRetryAfter(limited, 3600);
      // Another address still registers.
      expect((await clientAt().post('/api/auth/register', { email: uniqueEmail('reg'), password: 'a good password' })).status).toBe(201);
    } finally {
      await admin.patch('/api/settings', { registration: 'closed' });
    }
  });

  it('refuses an unusable invite code before counting', async () => {
    const registrant = clientAt();
    for (let i = 0; i < 35; i++) {
      const response = await registrant.post('/api/auth/register', { email: uniqueEmail('inv'), password: 'a good password', inviteCode: 'no-such-code' });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatch(/^inviteCode:/);
    }
    const invite = await admin.post('/api/invites', {});
    expect(invite.status).toBe(201);
    const accepted = await registrant.post('/api/auth/register', { email: uniqueEmail('inv'), password: 'a good password', inviteCode: invite.body.data.code });
    expect(accepted.status).toBe(201);
  });
});

describe('rate-limit counters', () => {
  it('are pruned by a job once their window has closed', async () => {
    const now = Date.now();
    const hour = 60 * 60 * 1000;
    await server.ctx.db
      .insertInto('rateLimits')
      .values([
        { key: 'prune-test:old', windowStart: now - hour - 1000, count: 3 },
        { key: 'prune-test:older', windowStart: now - 5 * hour, count: 1 },
        { key: 'prune-test:fresh', windowStart: now - 1000, count: 2 },
      ])
      .execute();
    await server.ctx.db.updateTable('jobs').set({ runAt: Date.now() - 1000 }).where('dedupeKey', '=', 'rate-limit-prune').execute();
    // The server's own runner polls the job table too and may take the job first: whichever
    // process runs it, the closed windows go and the next prune is about an hour away.
    await server.jobs.runDueJobs();
    const left = async () => (await server.ctx.db.selectFrom('rateLimits').select('key').where('key', 'like', 'prune-test:%').execute()).map((r) => r.key);
    await expect.poll(left, { timeout: 10_000 }).toEqual(['prune-test:fresh']);
    const nextPrune = async () => Number((await server.ctx.db.selectFrom('jobs').select('runAt').where('dedupeKey', '=', 'rate-limit-prune').executeTakeFirstOrThrow()).runAt);
    await expect.poll(nextPrune, { timeout: 10_000 }).toBeGreaterThan(Date.now() + hour - 60_000);
  });
});

describe('per-account limits', () => {
  it('allow 10 webhook test sends per minute per account', async () => {
    const account = await createAccount();
    const session = await signedIn(account);
    const created = await session.post('/api/webhooks', { name: 'nowhere', url: 'http://127.0.0.1:9/hook' });
    expect(created.status).toBe(201);
    const id = created.body.data.webhook.id;
    for (let i = 0; i < 10; i++) expect((await session.post(`/api/webhooks/${id}/test`)).status).toBe(202);
    const limited = await session.post(`/api/webhooks/${id}/test`);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, error: expect.stringMatching(/^Too many test sends; try again in \d+ (second|minute|hour)s?$/) });
    expectRetryAfter(limited, 60);
    // Another account is not limited by this one.
    const other = await signedIn(await createAccount());
    const itsHook = await other.post('/api/webhooks', { name: 'nowhere', url: 'http://127.0.0.1:9/hook' });
    expect((await other.post(`/api/webhooks/${itsHook.body.data.webhook.id}/test`)).status).toBe(202);
  });

  it('allow 120 short links per minute per account, then answer 429 in the ApiError shape', async () => {
    const session = await signedIn(await createAccount());
    for (let i = 0; i < 120; i++) expect((await session.post('/api/urls', { url: `https://example.com/${i}` })).status).toBe(200);
    const limited = await session.post('/api/urls', { url: 'https://example.com/one-too-many' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, error: expect.stringMatching(/^Too many short links created; try again in \d+ (second|minute|hour)s?$/) });
    expectRetryAfter(limited, 60);
    const other = await signedIn(await createAccount());
    expect((await other.post('/api/urls', { url: 'https://example.com/other' })).status).toBe(200);
  });
});

describe('behind a proxy (TRUST_PROXY)', () => {
  // A proxy appends the address it saw to whatever X-Forwarded-For the client sent, so only the
  // last entry is the proxy's word; the entries before it are the client's own and prove nothing.
  it('takes the client address from the entry the proxy added, so a client cannot pick its own', async () => {
    const proxied = `203.0.113.${++ipCounter}`;
    const answers = [];
    for (let i = 0; i < 32; i++) {
      answers.push(await new Client(server.baseUrl).post('/api/files/chunks', { filename: 'a.txt', mimeType: 'text/plain', size: 1 }, { headers: { 'x-forwarded-for': `10.77.${ipCounter}.${i}, ${proxied}` } }));
    }
    // Thirty upload starts a minute per client address (the specification's limit), counted before
    // the credential is read.
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: 30, 429: 2 });

    const account = await createAccount();
    const browser = new Client(server.baseUrl);
    const forwarded = (options: { headers?: Record<string, string> } = {}) => ({ ...options, headers: { ...options.headers, 'x-forwarded-for': `192.0.2.1, ${proxied}` } });
    expect((await browser.post('/api/auth/login', account, forwarded())).status).toBe(200);
    const sessions = await browser.get('/api/auth/sessions', forwarded());
    expect(sessions.body.data.sessions.map((s: { ip: string }) => s.ip)).toEqual([proxied]);
  });
});
