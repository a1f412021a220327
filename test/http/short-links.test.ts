import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createShortLink } from '../../src/links/short-links.ts';
import { PEOPLE, UNFURLERS } from '../support/user-agents.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
/** A non-administrator: its permissions come from the Everyone role only. */
let owner: Member;
let other: Member;

interface Member {
  id: string;
  client: Client;
}

const UNAUTHORIZED = { success: false, error: 'Unauthorized' };
const PERMISSION_DENIED = { success: false, error: 'You do not have permission to perform this action.' };
const SERVER_ERROR = { success: false, error: 'The operation could not be completed.' };
const NOT_FOUND = { success: false, error: 'URL not found' };

beforeAll(async () => {
  server = await startTestServer();
  admin = await signUp(server.baseUrl);
  owner = await createMember();
  other = await createMember();
});
afterAll(() => server.close());

async function createMember(): Promise<Member> {
  const email = uniqueEmail('links');
  const created = await admin.post('/api/users', { email, password: 'member password' });
  expect(created.status).toBe(201);
  const client = new Client(server.baseUrl);
  expect((await client.post('/api/auth/login', { email, password: 'member password' })).status).toBe(200);
  return { id: created.body.data.user.id, client };
}

async function namedToken(member: Member, scopes: string[]): Promise<string> {
  const response = await member.client.post('/api/tokens', { name: `links ${scopes.join(' ')}`, scopes });
  expect(response.status).toBe(201);
  return response.body.data.secret;
}

async function legacyToken(member: Member): Promise<string> {
  const response = await member.client.get('/api/profile/upload-token');
  expect(response.status).toBe(200);
  return response.body.data.uploadToken;
}

/** A client that sends nothing but the bearer token. */
const bare = () => new Client(server.baseUrl);

async function shorten(member: Member, url: string) {
  const response = await member.client.post('/api/urls', { url });
  expect(response.status).toBe(200);
  return response.body.data as { id: string; shortCode: string; targetUrl: string; clicks: number; createdAt: string; userId: string };
}

async function listOf(member: Member) {
  const response = await member.client.get('/api/urls');
  expect(response.status).toBe(200);
  return response.body.data.urls as Awaited<ReturnType<typeof shorten>>[];
}

/** Runs `body` with `permission` taken out of the Everyone role, then puts it back. */
async function withoutEveryonePermission(permission: string, body: () => Promise<void>) {
  const roles = await admin.get('/api/roles');
  const everyone = roles.body.data.roles.find((r: { systemKey: string | null }) => r.systemKey === 'everyone');
  const original: string[] = everyone.permissions;
  expect(original).toContain(permission);
  expect((await admin.patch(`/api/roles/${everyone.id}`, { permissions: original.filter((p) => p !== permission) })).status).toBe(200);
  try {
    await body();
  } finally {
    expect((await admin.patch(`/api/roles/${everyone.id}`, { permissions: original })).status).toBe(200);
  }
}

const redirect = (code: string, method = 'GET', headers: Record<string, string> = {}) => fetch(`${server.baseUrl}/u/${code}`, { method, redirect: 'manual', headers });

describe('POST /api/urls', () => {
  it('creates a link with a new six-character code and no clicks', async () => {
    const before = Date.now();
    const response = await owner.client.post('/api/urls', { url: 'https://example.com/some/page?q=1' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(response.body).toEqual({
      success: true,
      data: { id: expect.any(String), shortCode: expect.stringMatching(/^[A-Za-z0-9_]{6}$/), targetUrl: 'https://example.com/some/page?q=1', clicks: 0, createdAt: expect.any(String), userId: owner.id },
    });
    const createdAt = response.body.data.createdAt;
    expect(new Date(createdAt).toISOString()).toBe(createdAt);
    expect(Date.parse(createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(createdAt)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('makes another link, with another code, for the same target each time', async () => {
    const first = await shorten(owner, 'http://example.org/');
    const second = await shorten(owner, 'http://example.org/');
    expect(second.id).not.toBe(first.id);
    expect(second.shortCode).not.toBe(first.shortCode);
  });

  it('accepts a named token with urls:write and the legacy credential', async () => {
    const viaToken = await bare().post('/api/urls', { url: 'https://example.com/token' }, { token: await namedToken(owner, ['urls:write']) });
    expect(viaToken.status).toBe(200);
    expect(viaToken.body.data).toMatchObject({ targetUrl: 'https://example.com/token', userId: owner.id, clicks: 0 });
    const viaLegacy = await bare().post('/api/urls', { url: 'https://example.com/legacy' }, { token: await legacyToken(owner) });
    expect(viaLegacy.status).toBe(200);
    expect(viaLegacy.body.data).toMatchObject({ targetUrl: 'https://example.com/legacy', userId: owner.id });
  });

  it('accepts a target of exactly 2,048 characters', async () => {
    const url = 'https://example.com/' + 'x'.repeat(2048 - 'https://example.com/'.length);
    expect((await shorten(owner, url)).targetUrl).toBe(url);
  });

  it('refuses anything but an http(s) URL of at most 2,048 characters with 400', async () => {
    const cases: [unknown, RegExp][] = [
      [{ url: 'ftp://example.com/file' }, /^url: only http:\/\/ and https:\/\/ URLs/],
      [{ url: 'javascript:alert(1)' }, /^url: only http:\/\/ and https:\/\/ URLs/],
      [{ url: 'https://example.com/' + 'x'.repeat(2029) }, /^url: must be at most 2048 characters/],
      [{ url: 'not a url' }, /^url: must be an absolute http/],
      [{ url: '' }, /^url: must not be empty/],
      [{}, /^body\.url: required/],
      [{ url: 42 }, /^body\.url: required/],
      [{ url: 'https://example.com', code: 'mine12' }, /^body: unknown field "code"/],
      [['https://example.com'], /^body: /],
    ];
    for (const [json, message] of cases) {
      const response = await owner.client.post('/api/urls', json);
      expect(response.status, JSON.stringify(json).slice(0, 80)).toBe(400);
      expect(response.body).toEqual({ success: false, error: expect.stringMatching(message) });
    }
    const empty = await owner.client.request('POST', '/api/urls', { headers: { 'content-type': 'application/json' }, body: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.success).toBe(false);
  });

  it('answers malformed JSON with the documented 500, and only on this route', async () => {
    for (const body of ['{"url": "https://example.com"', '{url: 1}', 'not json']) {
      const response = await owner.client.request('POST', '/api/urls', { headers: { 'content-type': 'application/json' }, body });
      expect(response.status).toBe(500);
      expect(response.body).toEqual(SERVER_ERROR);
    }
    const viaToken = await bare().request('POST', '/api/urls', { headers: { 'content-type': 'application/json' }, body: '{', token: await namedToken(owner, ['urls:write']) });
    expect(viaToken.status).toBe(500);
    expect(viaToken.body).toEqual(SERVER_ERROR);
    // Everywhere else a malformed body stays a client error.
    const elsewhere = await owner.client.request('POST', '/api/tokens', { headers: { 'content-type': 'application/json' }, body: '{' });
    expect(elsewhere.status).toBe(400);
    // Authentication still comes first.
    const anonymous = await bare().request('POST', '/api/urls', { headers: { 'content-type': 'application/json' }, body: '{' });
    expect(anonymous.status).toBe(401);
  });

  it('answers 401 without a credential or with a token lacking urls:write', async () => {
    expect(await bare().post('/api/urls', { url: 'https://example.com' })).toMatchObject({ status: 401, body: UNAUTHORIZED });
    for (const scopes of [['urls:read'], ['files:read'], ['files:read', 'files:upload', 'urls:read']]) {
      const response = await bare().post('/api/urls', { url: 'https://example.com' }, { token: await namedToken(owner, scopes) });
      expect(response.status, scopes.join()).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    }
    expect((await bare().post('/api/urls', { url: 'https://example.com' }, { token: 'svc_not-a-real-token' })).status).toBe(401);
    // A browser session's state change must come from this instance's own pages.
    expect((await owner.client.post('/api/urls', { url: 'https://example.com' }, { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('answers 403 when the role lacks links.create, for every credential', async () => {
    const token = await namedToken(owner, ['urls:write']);
    const legacy = await legacyToken(owner);
    const before = (await listOf(owner)).length;
    await withoutEveryonePermission('links.create', async () => {
      for (const response of [
        await owner.client.post('/api/urls', { url: 'https://example.com' }),
        await bare().post('/api/urls', { url: 'https://example.com' }, { token }),
        await bare().post('/api/urls', { url: 'https://example.com' }, { token: legacy }),
      ]) {
        expect(response.status).toBe(403);
        expect(response.body).toEqual(PERMISSION_DENIED);
      }
      // The administrator holds every permission regardless of the Everyone role.
      expect((await admin.post('/api/urls', { url: 'https://example.com/admin' })).status).toBe(200);
    });
    expect((await listOf(owner)).length).toBe(before);
    expect((await bare().post('/api/urls', { url: 'https://example.com/again' }, { token })).status).toBe(200);
  });
});

describe('GET /api/urls', () => {
  it('lists the account’s links newest first with the documented shape', async () => {
    const member = await createMember();
    expect((await member.client.get('/api/urls')).body).toEqual({ success: true, data: { urls: [] } });
    const created = [];
    for (const n of [1, 2, 3]) {
      created.push(await shorten(member, `https://example.com/${n}`));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const response = await member.client.get('/api/urls');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: { urls: created.reverse() } });
    for (const link of response.body.data.urls) expect(Object.keys(link).sort()).toEqual(['clicks', 'createdAt', 'id', 'shortCode', 'targetUrl', 'userId']);
  });

  it('orders links made in the same millisecond by ID', async () => {
    const member = await createMember();
    await Promise.all(Array.from({ length: 12 }, (_, n) => shorten(member, `https://example.com/burst/${n}`)));
    const urls = await listOf(member);
    expect(urls).toHaveLength(12);
    const key = (l: { createdAt: string; id: string }) => [Date.parse(l.createdAt), l.id] as const;
    for (let i = 1; i < urls.length; i += 1) {
      const [prevTime, prevId] = key(urls[i - 1]!);
      const [time, id] = key(urls[i]!);
      expect(prevTime > time || (prevTime === time && prevId > id), `${prevTime}/${prevId} before ${time}/${id}`).toBe(true);
    }
  });

  it('never shows another account’s links', async () => {
    const mine = await shorten(owner, 'https://example.com/owner-only');
    const theirs = await shorten(other, 'https://example.com/other-only');
    const ownerIds = (await listOf(owner)).map((l) => l.id);
    const otherList = await listOf(other);
    expect(ownerIds).toContain(mine.id);
    expect(ownerIds).not.toContain(theirs.id);
    expect(otherList.map((l) => l.id)).toContain(theirs.id);
    expect(otherList.map((l) => l.id)).not.toContain(mine.id);
    expect(otherList.every((l) => l.userId === other.id)).toBe(true);
    // A token reads its own account's links only, whoever else is signed in.
    const viaToken = await owner.client.get('/api/urls', { token: await namedToken(other, ['urls:read']) });
    expect(viaToken.body.data.urls.every((l: { userId: string }) => l.userId === other.id)).toBe(true);
  });

  it('accepts a named token with urls:read and the legacy credential', async () => {
    const expected = await listOf(owner);
    for (const token of [await namedToken(owner, ['urls:read']), await legacyToken(owner)]) {
      const response = await bare().get('/api/urls', { token });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, data: { urls: expected } });
    }
  });

  it('answers 401 without a credential or with a token lacking urls:read', async () => {
    expect(await bare().get('/api/urls')).toMatchObject({ status: 401, body: UNAUTHORIZED });
    for (const scopes of [['urls:write'], ['files:read']]) {
      const response = await bare().get('/api/urls', { token: await namedToken(owner, scopes) });
      expect(response.status, scopes.join()).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    }
  });

  it('answers 403 when the role lacks links.read', async () => {
    const token = await namedToken(owner, ['urls:read']);
    await withoutEveryonePermission('links.read', async () => {
      expect(await owner.client.get('/api/urls')).toMatchObject({ status: 403, body: PERMISSION_DENIED });
      expect(await bare().get('/api/urls', { token })).toMatchObject({ status: 403, body: PERMISSION_DENIED });
    });
    expect((await bare().get('/api/urls', { token })).status).toBe(200);
  });
});

describe('DELETE /api/urls/{id}', () => {
  it('deletes the link with 204 and no body; the short address stops working', async () => {
    const link = await shorten(owner, 'https://example.com/to-delete');
    expect((await redirect(link.shortCode)).status).toBe(302);
    const response = await owner.client.delete(`/api/urls/${link.id}`);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect((await listOf(owner)).map((l) => l.id)).not.toContain(link.id);
    expect((await redirect(link.shortCode)).status).toBe(404);
    expect(await owner.client.delete(`/api/urls/${link.id}`)).toMatchObject({ status: 404, body: NOT_FOUND });
  });

  it('takes the record ID, not the short code', async () => {
    const link = await shorten(owner, 'https://example.com/by-id');
    expect(await owner.client.delete(`/api/urls/${link.shortCode}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await owner.client.delete(`/api/urls/${link.id}`)).status).toBe(204);
  });

  it('answers 404 with the documented body for a link that does not exist', async () => {
    const response = await owner.client.delete('/api/urls/nosuchlinkid');
    expect(response.status).toBe(404);
    expect(response.body).toEqual(NOT_FOUND);
  });

  it('refuses another account’s link with 403 and leaves it in place', async () => {
    const theirs = await shorten(other, 'https://example.com/not-yours');
    const response = await owner.client.delete(`/api/urls/${theirs.id}`);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: expect.stringMatching(/another account/) });
    const viaToken = await bare().delete(`/api/urls/${theirs.id}`, { token: await namedToken(owner, ['urls:write']) });
    expect(viaToken.status).toBe(403);
    expect((await listOf(other)).map((l) => l.id)).toContain(theirs.id);
    expect((await redirect(theirs.shortCode)).status).toBe(302);
  });

  it('accepts a named token with urls:write and the legacy credential', async () => {
    const a = await shorten(owner, 'https://example.com/a');
    const b = await shorten(owner, 'https://example.com/b');
    expect((await bare().delete(`/api/urls/${a.id}`, { token: await namedToken(owner, ['urls:write']) })).status).toBe(204);
    expect((await bare().delete(`/api/urls/${b.id}`, { token: await legacyToken(owner) })).status).toBe(204);
    const ids = (await listOf(owner)).map((l) => l.id);
    expect(ids).not.toContain(a.id);
    expect(ids).not.toContain(b.id);
  });

  it('answers 401 without a credential or with a token lacking urls:write', async () => {
    const link = await shorten(owner, 'https://example.com/keep');
    expect(await bare().delete(`/api/urls/${link.id}`)).toMatchObject({ status: 401, body: UNAUTHORIZED });
    for (const scopes of [['urls:read'], ['files:read']]) {
      const response = await bare().delete(`/api/urls/${link.id}`, { token: await namedToken(owner, scopes) });
      expect(response.status, scopes.join()).toBe(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    }
    expect((await listOf(owner)).map((l) => l.id)).toContain(link.id);
  });

  it('answers 403 when the role lacks links.delete', async () => {
    const link = await shorten(owner, 'https://example.com/protected');
    const token = await namedToken(owner, ['urls:write']);
    await withoutEveryonePermission('links.delete', async () => {
      expect(await owner.client.delete(`/api/urls/${link.id}`)).toMatchObject({ status: 403, body: PERMISSION_DENIED });
      expect(await bare().delete(`/api/urls/${link.id}`, { token })).toMatchObject({ status: 403, body: PERMISSION_DENIED });
      // Creating needs links.create only, which is still granted.
      expect((await owner.client.post('/api/urls', { url: 'https://example.com/still' })).status).toBe(200);
    });
    expect((await bare().delete(`/api/urls/${link.id}`, { token })).status).toBe(204);
  });
});

describe('GET /u/{shortCode}', () => {
  it('redirects with 302, the target in Location, no caching, and counts the click', async () => {
    const link = await shorten(owner, 'https://example.com/landing?from=short#top');
    const response = await redirect(link.shortCode);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://example.com/landing?from=short#top');
    expect(response.headers.get('cache-control')).toBe('no-store');
    await redirect(link.shortCode);
    expect((await listOf(owner)).find((l) => l.id === link.id)?.clicks).toBe(2);
  });

  it('sends a URL with spaces or non-ASCII characters in encoded form', async () => {
    const link = await shorten(owner, 'https://bücher.example/ä b');
    expect(link.targetUrl).toBe('https://xn--bcher-kva.example/%C3%A4%20b');
    expect((await redirect(link.shortCode)).headers.get('location')).toBe('https://xn--bcher-kva.example/%C3%A4%20b');
  });

  it('sends a URL written without its // in the form it was read as, so the browser leaves the instance', async () => {
    // `http:example.com/page` is read as http://example.com/page, but a browser given it as written
    // in Location resolves it against the short address and stays on this host.
    for (const [written, read] of [
      ['http:example.com/page', 'http://example.com/page'],
      ['http:/example.com', 'http://example.com/'],
      ['https:\\\\example.com\\a', 'https://example.com/a'],
      ['HTTPS://Example.com/Path', 'HTTPS://Example.com/Path'],
      ['https://example.com\\a\\b', 'https://example.com/a/b'],
    ]) {
      const link = await shorten(owner, written!);
      expect(link.targetUrl, written).toBe(read);
      expect((await redirect(link.shortCode)).headers.get('location'), written).toBe(read);
    }
  });

  it('does not count a HEAD request', async () => {
    const link = await shorten(owner, 'https://example.com/head');
    const response = await redirect(link.shortCode, 'HEAD');
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('https://example.com/head');
    expect((await listOf(owner)).find((l) => l.id === link.id)?.clicks).toBe(0);
  });

  it('does not count the chat apps and crawlers that follow a pasted link to preview it', async () => {
    const link = await shorten(owner, 'https://example.com/unfurled');
    for (const agent of UNFURLERS) {
      const response = await redirect(link.shortCode, 'GET', { 'user-agent': agent });
      expect([response.status, response.headers.get('location')], agent).toEqual([302, 'https://example.com/unfurled']);
    }
    expect((await listOf(owner)).find((l) => l.id === link.id)?.clicks).toBe(0);
    // A person's browser, or a script, counts.
    await redirect(link.shortCode, 'GET', { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36' });
    await redirect(link.shortCode, 'GET', { 'user-agent': 'curl/8.14.1' });
    for (const agent of PEOPLE) await redirect(link.shortCode, 'GET', { 'user-agent': agent });
    expect((await listOf(owner)).find((l) => l.id === link.id)?.clicks).toBe(2 + PEOPLE.length);
  });

  it('answers an unknown or malformed code with an HTML 404 page', async () => {
    for (const code of ['zzzzzz', 'ab', 'abcdefg', 'ab-cd!', '%3Cscript%3E']) {
      const response = await redirect(code);
      expect(response.status, code).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const html = await response.text();
      expect(html).toMatch(/<title>Link not found · Hoard<\/title>/);
      expect(html).not.toMatch(/script/);
    }
  });

  it('needs no credential and ignores one', async () => {
    const link = await shorten(owner, 'https://example.com/public');
    const response = await fetch(`${server.baseUrl}/u/${link.shortCode}`, { redirect: 'manual', headers: { authorization: 'Bearer svc_garbage' } });
    expect(response.status).toBe(302);
  });

  it('counts 200 concurrent clicks exactly', async () => {
    const link = await shorten(owner, 'https://example.com/popular');
    const responses = await Promise.all(Array.from({ length: 200 }, () => redirect(link.shortCode)));
    expect(responses.map((r) => r.status)).toEqual(Array(200).fill(302));
    expect((await listOf(owner)).find((l) => l.id === link.id)?.clicks).toBe(200);
  });
});

describe('short-code uniqueness', () => {
  it('retries with a new code when the generated one is taken', async () => {
    const taken = await shorten(owner, 'https://example.com/taken');
    const fresh = 'Fr3sh_';
    const codes = [taken.shortCode, taken.shortCode, fresh];
    const link = await createShortLink(server.ctx.db, owner.id, 'https://example.com/retry', () => codes.shift()!);
    expect(link.shortCode).toBe(fresh);
    expect(codes).toEqual([]);
    expect((await redirect(taken.shortCode)).headers.get('location')).toBe('https://example.com/taken');
    expect((await redirect(fresh)).headers.get('location')).toBe('https://example.com/retry');
  });

  it('gives up after a few collisions instead of looping forever', async () => {
    const taken = await shorten(owner, 'https://example.com/always-taken');
    let calls = 0;
    const attempt = createShortLink(server.ctx.db, owner.id, 'https://example.com/never', () => {
      calls += 1;
      return taken.shortCode;
    });
    await expect(attempt).rejects.toThrow();
    expect(calls).toBe(5);
    expect((await listOf(owner)).some((l) => l.targetUrl === 'https://example.com/never')).toBe(false);
  });
});
