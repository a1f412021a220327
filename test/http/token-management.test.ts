import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { sha256Hex } from '../../src/auth/secrets.ts';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

let server: TestServer;
let owner: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer();
  owner = await signUp(server.baseUrl);
  await owner.patch('/api/settings', { registration: 'open' });
});
afterAll(() => server.close());

const create = (client: Client, body: Record<string, unknown>) => client.post('/api/tokens', body);

describe('creating named tokens', () => {
  it('returns the secret once and stores only its SHA-256', async () => {
    const response = await create(owner, { name: 'backup script', scopes: ['files:read', 'files:upload'] });
    expect(response.status).toBe(201);
    const { token, secret } = response.body.data;
    expect(secret).toMatch(/^svc_[A-Za-z0-9_-]{43,}$/);
    expect(Buffer.from(secret.slice(4), 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(Object.keys(token).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'profileId', 'revokedAt', 'scopes', 'status']);
    expect(token).toMatchObject({ name: 'backup script', scopes: ['files:read', 'files:upload'], profileId: null, expiresAt: null, revokedAt: null, lastUsedAt: null, status: 'active' });

    const row = await server.ctx.db.selectFrom('apiTokens').selectAll().where('id', '=', token.id).executeTakeFirstOrThrow();
    expect(row.secretHash).toBe(sha256Hex(secret));
    expect(JSON.stringify(row)).not.toContain(secret.slice(4));

    const list = await owner.get('/api/tokens');
    expect(list.text).not.toContain(secret.slice(4));
  });

  it.each([
    [{ name: '', scopes: ['files:read'] }, /^body\.name: /],
    [{ name: 'x'.repeat(81), scopes: ['files:read'] }, /^body\.name: /],
    [{ name: 'a\u0001b', scopes: ['files:read'] }, /^body\.name: must not contain control characters/],
    [{ name: '\u200b', scopes: ['files:read'] }, /^body\.name: must contain a visible character/],
    [{ name: 'ok', scopes: [] }, /^body\.scopes: /],
    [{ name: 'ok', scopes: ['files:read', 'files:read'] }, /^scopes: a scope is listed twice/],
    [{ name: 'ok', scopes: ['files:delete'] }, /^body\.scopes\.0: /],
    [{ name: 'ok', scopes: 'files:read' }, /^body\.scopes: /],
    [{ name: 'ok', scopes: ['files:read'], expiresAt: '2020-01-01T00:00:00Z' }, /^expiresAt: must be in the future/],
    [{ name: 'ok', scopes: ['files:read'], expiresAt: 'tomorrow' }, /^body\.expiresAt: /],
    // An offset can reach the year 10000, which no ISO parser reads back once stored.
    [{ name: 'ok', scopes: ['files:read'], expiresAt: '9999-12-31T23:59:59-23:59' }, /^body\.expiresAt: must be an ISO 8601 timestamp with a time zone, at the latest in the year 9999$/],
    [{ name: 'ok', scopes: ['files:read'], admin: true }, /^body: unknown field "admin"/],
  ])('rejects %j with 400', async (body, message) => {
    const response = await create(owner, body);
    expect(response.status).toBe(400);
    expect(response.body.success).toBe(false);
    expect(response.body.error).toMatch(message);
  });

  it('accepts 80-character names, a future expiry and null fields', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const response = await create(owner, { name: 'n'.repeat(80), scopes: ['urls:read'], expiresAt, profileId: null });
    expect(response.status).toBe(201);
    expect(response.body.data.token.expiresAt).toBe(expiresAt);
    // As a shell script writes it (`date +%Y-%m-%dT%H:%M%z`): read as the same instant.
    const minute = new Date(Math.floor((Date.now() + 86_400_000) / 60_000) * 60_000);
    const scripted = await create(owner, { name: 'scripted', scopes: ['urls:read'], expiresAt: `${minute.toISOString().slice(0, 16)}+0000` });
    expect([scripted.status, scripted.body.data?.token?.expiresAt]).toEqual([201, minute.toISOString()]);
    // Characters, not UTF-16 units: 80 emoji are 80 characters.
    const emoji = await create(owner, { name: '🔑'.repeat(80), scopes: ['urls:read'] });
    expect([emoji.status, emoji.body.data?.token?.name]).toEqual([201, '🔑'.repeat(80)]);
    expect((await create(owner, { name: '🔑'.repeat(81), scopes: ['urls:read'] })).status).toBe(400);
  });

  it('binds a profile only with files:upload and only a profile of the same account', async () => {
    const other = await signUp(server.baseUrl);
    const now = Date.now();
    await server.ctx.db.insertInto('uploadProfiles').values([
      { id: 'ownprofile', userId: owner.userId, name: 'Mine', options: '{}', createdAt: now, updatedAt: now },
      { id: 'foreignprofile', userId: other.userId, name: 'Theirs', options: '{}', createdAt: now, updatedAt: now },
    ]).execute();
    const bound = await create(owner, { name: 'bound', scopes: ['files:upload'], profileId: 'ownprofile' });
    expect(bound.status).toBe(201);
    expect(bound.body.data.token.profileId).toBe('ownprofile');
    const withoutUpload = await create(owner, { name: 'bound', scopes: ['files:read'], profileId: 'ownprofile' });
    expect(withoutUpload.status).toBe(400);
    expect(withoutUpload.body.error).toMatch(/^profileId: .*files:upload/);
    const foreign = await create(owner, { name: 'bound', scopes: ['files:upload'], profileId: 'foreignprofile' });
    expect(foreign.status).toBe(400);
    const missing = await create(owner, { name: 'bound', scopes: ['files:upload'], profileId: 'nosuchprofile' });
    expect(missing.status).toBe(400);
  });
});

describe('the 50-active-token limit', () => {
  it('refuses the 51st active token with 409; revoked and expired ones do not count', async () => {
    const user = await signUp(server.baseUrl);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) {
      const response = await create(user, { name: `t${i}`, scopes: ['files:read'] });
      expect(response.status).toBe(201);
      ids.push(response.body.data.token.id);
    }
    const over = await create(user, { name: 'one too many', scopes: ['files:read'] });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatch(/50/);

    expect((await user.delete(`/api/tokens/${ids[0]}`)).status).toBe(204);
    expect((await create(user, { name: 'replacement', scopes: ['files:read'] })).status).toBe(201);
    expect((await create(user, { name: 'again too many', scopes: ['files:read'] })).status).toBe(409);

    // Expiry happens with time; move one token's expiry into the past as time would.
    await server.ctx.db.updateTable('apiTokens').set({ expiresAt: Date.now() - 1000 }).where('id', '=', ids[1]!).execute();
    const list = await user.get('/api/tokens');
    expect(list.body.data.activeCount).toBe(49);
    expect(list.body.data.limit).toBe(50);
    expect(list.body.data.tokens.find((t: { id: string }) => t.id === ids[1]).status).toBe('expired');
    expect(list.body.data.tokens.find((t: { id: string }) => t.id === ids[0]).status).toBe('revoked');
    expect((await create(user, { name: 'after expiry', scopes: ['files:read'] })).status).toBe(201);
  });

  it('is race-free: two concurrent creations at 49 active tokens cannot both succeed', async () => {
    for (let round = 0; round < 3; round++) {
      const user = await signUp(server.baseUrl);
      for (let i = 0; i < 49; i++) expect((await create(user, { name: `t${i}`, scopes: ['urls:read'] })).status).toBe(201);
      const results = await Promise.all(Array.from({ length: 4 }, (_, i) => create(user, { name: `racer${i}`, scopes: ['urls:read'] })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      expect((await user.get('/api/tokens')).body.data.activeCount).toBe(50);
    }
  });
});

describe('listing, rotating and revoking', () => {
  it('lists the latest 100 records newest first, revoked and expired included', async () => {
    const user = await signUp(server.baseUrl);
    const created: string[] = [];
    for (let i = 0; i < 105; i++) {
      const response = await create(user, { name: `t${i}`, scopes: ['urls:read'] });
      expect(response.status).toBe(201);
      created.push(response.body.data.token.id);
      // Keep under the active limit while making more than 100 records.
      if (i < 60) expect((await user.delete(`/api/tokens/${response.body.data.token.id}`)).status).toBe(204);
    }
    const list = await user.get('/api/tokens');
    expect(list.status).toBe(200);
    expect(list.body.data.tokens.map((t: { id: string }) => t.id)).toEqual(created.slice(5).reverse());
    expect(list.body.data.olderActive).toEqual([]);
    expect(list.body.data.activeCount).toBe(45);
    expect(list.body.data.tokens.filter((t: { status: string }) => t.status === 'revoked')).toHaveLength(55);
  });

  it('lists every active token, however many newer records were revoked: the older ones apart from the latest 100', async () => {
    const user = await signUp(server.baseUrl);
    const kept: string[] = [];
    for (let i = 0; i < 3; i++) kept.push((await create(user, { name: `kept${i}`, scopes: ['files:read'] })).body.data.token.id);
    const churned: string[] = [];
    for (let i = 0; i < 100; i++) {
      const response = await create(user, { name: `c${i}`, scopes: ['urls:read'] });
      churned.push(response.body.data.token.id);
      expect((await user.delete(`/api/tokens/${response.body.data.token.id}`)).status).toBe(204);
    }
    const list = await user.get('/api/tokens');
    expect(list.status).toBe(200);
    // The latest 100 records (contract §3), then the active tokens older than those, newest first: the
    // owner must be able to find every token that still works in order to revoke it.
    expect(list.body.data.tokens.map((t: { id: string }) => t.id)).toEqual([...churned].reverse());
    expect(list.body.data.olderActive.map((t: { id: string; status: string }) => [t.id, t.status])).toEqual([...kept].reverse().map((id) => [id, 'active']));
    expect(list.body.data.activeCount).toBe(3);
    // Revoked, the oldest one leaves that list and the latest 100 stay as they were.
    expect((await user.delete(`/api/tokens/${kept[0]}`)).status).toBe(204);
    const after = (await user.get('/api/tokens')).body.data;
    expect(after.olderActive.map((t: { id: string }) => t.id)).toEqual([kept[2], kept[1]]);
    expect(after.tokens.map((t: { id: string }) => t.id)).toEqual([...churned].reverse());
    expect(after.activeCount).toBe(2);
  });

  it('rotates: a new secret with the same settings, and the old token revoked', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const original = (await create(owner, { name: 'rotating', scopes: ['urls:read', 'urls:write'], expiresAt })).body.data;
    const rotated = await owner.post(`/api/tokens/${original.token.id}/rotate`);
    expect(rotated.status).toBe(201);
    const { token, secret } = rotated.body.data;
    expect(secret).not.toBe(original.secret);
    expect(token).toMatchObject({ name: 'rotating', scopes: ['urls:read', 'urls:write'], expiresAt, profileId: null, status: 'active' });
    expect(token.id).not.toBe(original.token.id);
    const list = (await owner.get('/api/tokens')).body.data.tokens;
    expect(list.find((t: { id: string }) => t.id === original.token.id).status).toBe('revoked');
    expect((await owner.post(`/api/tokens/${original.token.id}/rotate`)).status).toBe(409);
  });

  it('refuses to rotate a token bound to a profile deleted since: the new secret could never upload', async () => {
    const profile = (await owner.post('/api/upload-profiles', { name: 'going away', options: {} })).body.data.profile;
    const bound = (await create(owner, { name: 'bound', scopes: ['files:upload'], profileId: profile.id })).body.data;
    expect((await owner.delete(`/api/upload-profiles/${profile.id}`)).status).toBe(204);
    const refused = await owner.post(`/api/tokens/${bound.token.id}/rotate`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('The upload profile this token is bound to no longer exists: create a new token instead, bound to another profile or to none');
    // The token stays as it was.
    const listed = (await owner.get('/api/tokens')).body.data.tokens.find((t: { id: string }) => t.id === bound.token.id);
    expect(listed.status).toBe('active');
  });

  it('revokes idempotently and keeps the record', async () => {
    const { token } = (await create(owner, { name: 'short-lived', scopes: ['urls:read'] })).body.data;
    expect((await owner.delete(`/api/tokens/${token.id}`)).status).toBe(204);
    const first = (await owner.get('/api/tokens')).body.data.tokens.find((t: { id: string }) => t.id === token.id);
    expect(first.revokedAt).not.toBeNull();
    expect((await owner.delete(`/api/tokens/${token.id}`)).status).toBe(204);
    const second = (await owner.get('/api/tokens')).body.data.tokens.find((t: { id: string }) => t.id === token.id);
    expect(second.revokedAt).toBe(first.revokedAt);
  });

  it('never touches another account’s tokens', async () => {
    const other = await signUp(server.baseUrl);
    const { token } = (await create(other, { name: 'theirs', scopes: ['urls:read'] })).body.data;
    expect((await owner.delete(`/api/tokens/${token.id}`)).status).toBe(404);
    expect((await owner.post(`/api/tokens/${token.id}/rotate`)).status).toBe(404);
    expect((await owner.get('/api/tokens')).body.data.tokens.map((t: { id: string }) => t.id)).not.toContain(token.id);
    expect((await other.get('/api/tokens')).body.data.tokens[0].status).toBe('active');
  });
});

describe('who may manage tokens', () => {
  it('needs a browser session: named tokens and the legacy credential get the generic 401', async () => {
    const { secret } = (await create(owner, { name: 'all scopes', scopes: ['files:read', 'files:upload', 'urls:read', 'urls:write'] })).body.data;
    const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
    const script = new Client(server.baseUrl);
    for (const credential of [secret, legacy]) {
      for (const [method, path] of [
        ['GET', '/api/tokens'],
        ['POST', '/api/tokens'],
        ['POST', '/api/tokens/x/rotate'],
        ['DELETE', '/api/tokens/x'],
        ['GET', '/api/profile/upload-token'],
        ['POST', '/api/profile/upload-token'],
        ['GET', '/api/auth/me'],
        ['GET', '/api/users'],
        ['GET', '/api/settings'],
      ] as const) {
        const response = await script.request(method, path, { token: credential, json: method === 'POST' ? { name: 'x', scopes: ['files:read'] } : undefined });
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(response.body).toEqual({ success: false, error: 'Unauthorized' });
      }
    }
  });

  it('needs tokens.manage; losing it does not disable existing tokens', async () => {
    const member = await signUp(server.baseUrl, uniqueEmail('member'));
    const { token } = (await create(member, { name: 'kept', scopes: ['urls:read'] })).body.data;
    const roles = (await owner.get('/api/roles')).body.data.roles;
    const everyone = roles.find((r: { systemKey: string }) => r.systemKey === 'everyone');
    await owner.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p: string) => p !== 'tokens.manage') });
    try {
      for (const [method, path] of [
        ['GET', '/api/tokens'],
        ['POST', '/api/tokens'],
        ['DELETE', `/api/tokens/${token.id}`],
        ['POST', `/api/tokens/${token.id}/rotate`],
      ] as const) {
        const response = await member.request(method, path, method === 'POST' && path === '/api/tokens' ? { json: { name: 'x', scopes: ['files:read'] } } : {});
        expect(response.status, `${method} ${path}`).toBe(403);
        expect(response.body).toEqual({ success: false, error: 'You do not have permission to perform this action.' });
      }
      const stored = await server.ctx.db.selectFrom('apiTokens').select('revokedAt').where('id', '=', token.id).executeTakeFirstOrThrow();
      expect(stored.revokedAt).toBeNull();
    } finally {
      await owner.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
  });
});

describe('legacy upload credential', () => {
  it('is created once, shown again, and regenerating it replaces it', async () => {
    const first = await owner.get('/api/profile/upload-token');
    expect(first.status).toBe(200);
    const value = first.body.data.uploadToken;
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await owner.get('/api/profile/upload-token')).body.data.uploadToken).toBe(value);
    const regenerated = await owner.post('/api/profile/upload-token');
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.data.uploadToken).not.toBe(value);
    expect((await owner.get('/api/profile/upload-token')).body.data.uploadToken).toBe(regenerated.body.data.uploadToken);
  });

  it('answers every response that carries a credential with Cache-Control: no-store', async () => {
    const answers: Record<string, Awaited<ReturnType<Client['get']>>> = {
      uploadToken: await owner.get('/api/profile/upload-token'),
      regenerated: await owner.post('/api/profile/upload-token'),
      sharex: await owner.get('/api/profile/sharex'),
      sharexShortener: await owner.get('/api/profile/sharex-shortener'),
      bash: await owner.get('/api/profile/bash'),
      flameshot: await owner.get('/api/profile/flameshot'),
      token: await owner.post('/api/tokens', { name: 'cached?', scopes: ['files:read'] }),
      webhook: await owner.post('/api/webhooks', { name: 'cached?', url: 'https://example.com/hook' }),
    };
    answers.tokenList = await owner.get('/api/tokens');
    for (const [name, answer] of Object.entries(answers)) {
      expect(answer.status, name).toBeLessThan(300);
      expect(answer.headers.get('cache-control'), name).toBe('no-store');
    }
  });

  it('uploads with the generated bash script, run for real against this server', async () => {
    const script = await owner.get('/api/profile/bash');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-bash-'));
    const file = path.join(dir, 'hoard-upload.sh');
    fs.writeFileSync(file, script.text, { mode: 0o755 });
    const payload = path.join(dir, 'from bash.txt');
    fs.writeFileSync(payload, 'uploaded by the bash script');
    // Asynchronously: the server answering the script runs in this very process.
    const bash = (...args: string[]) =>
      new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile('bash', args, { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
      });
    const run = await bash(file, payload);
    expect(run.status, run.stderr).toBe(0);
    const url = run.stdout.trim();
    const urlId = (await owner.get('/api/auth/me')).body.data.user.urlId;
    expect(url).toBe(`${server.baseUrl}/${urlId}/from_bash.txt`);
    const raw = await new Client(server.baseUrl).get(`/api/files/${urlId}/from_bash.txt`);
    expect(raw.text).toBe('uploaded by the bash script');
    // Names curl's -F would read as its own syntax (`;type=`, `,` lists), or trim, go up too.
    const awkward = ['Invoice, March.txt', 'notes;type=text.txt', ' lead.txt', 'say "hi".txt', 'back\\slash.txt'];
    for (const name of awkward) fs.writeFileSync(path.join(dir, name), `bytes of ${name}`);
    const many = await bash(file, ...awkward.map((name) => path.join(dir, name)));
    expect(many.status, many.stderr).toBe(0);
    const links = many.stdout.trim().split('\n');
    expect(links).toHaveLength(awkward.length);
    for (const [i, link] of links.entries()) {
      const bytes = await new Client(server.baseUrl).get(new URL(link).pathname.replace(/^\//, '/api/files/'));
      expect(bytes.text, link).toBe(`bytes of ${awkward[i]}`);
    }
    const missing = await bash(file, path.join(dir, 'nope.txt'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/not a file/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the bash script waits as long as a 429 says (Retry-After) and tries again, rather than failing the rest of a batch', async () => {
    const script = await owner.get('/api/profile/bash');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-bash-429-'));
    // A stand-in for a server past its upload-start limit (30 a minute, spec Limits): the first
    // upload is refused with Retry-After: 1, the rest answered. Waiting out the real limit would
    // take a minute of the test's time.
    let seen = 0;
    const stand = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        seen += 1;
        if (seen === 1) {
          response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"error":"Too many requests"}');
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end(`{"success":true,"data":{"url":"http://example.test/u/${seen}"}}`);
      });
    });
    await new Promise<void>((resolve) => stand.listen(0, '127.0.0.1', resolve));
    try {
      const file = path.join(dir, 'hoard-upload.sh');
      const address = `http://127.0.0.1:${(stand.address() as AddressInfo).port}`;
      fs.writeFileSync(file, script.text.replace(/^HOARD_URL=.*$/m, `HOARD_URL='${address}'`), { mode: 0o755 });
      for (const name of ['one.txt', 'two.txt']) fs.writeFileSync(path.join(dir, name), name);
      const started = Date.now();
      const run = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile('bash', [file, path.join(dir, 'one.txt'), path.join(dir, 'two.txt')], { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.trim().split('\n')).toEqual(['http://example.test/u/2', 'http://example.test/u/3']);
      expect(run.stderr).toBe(`${path.join(dir, 'one.txt')}: too many uploads a minute; trying again in 1 s\n`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    } finally {
      stand.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uploads with the generated Flameshot script, and says why when the server refuses', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hoard-flameshot-'));
    const file = path.join(dir, 'hoard-flameshot.sh');
    fs.writeFileSync(file, (await owner.get('/api/profile/flameshot')).text, { mode: 0o755 });
    // A stand-in for Flameshot that "takes" a screenshot: a PNG on its standard output.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    fs.writeFileSync(path.join(dir, 'shot.png'), png);
    fs.writeFileSync(path.join(dir, 'flameshot'), `#!/bin/sh\ncat '${path.join(dir, 'shot.png')}'\n`, { mode: 0o755 });
    const run = () =>
      new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
        execFile('bash', [file], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, PATH: `${dir}:/usr/bin:/bin` } }, (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
      });
    const done = await run();
    expect(done.status, done.stderr).toBe(0);
    const raw = await new Client(server.baseUrl).get(new URL(done.stdout.trim()).pathname.replace(/^\//, '/api/files/'));
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('image/png');
    // Regenerated since: the script's credential is refused, and the script says so.
    expect((await owner.post('/api/profile/upload-token')).status).toBe(200);
    const refused = await run();
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/upload failed \(401\): .*Unauthorized/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('is embedded in the ShareX, Flameshot and bash configurations', async () => {
    const token = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
    const sharex = await owner.get('/api/profile/sharex');
    expect(sharex.status).toBe(200);
    expect(sharex.headers.get('content-disposition')).toMatch(/attachment; filename=".*\.sxcu"/);
    const config = JSON.parse(sharex.text);
    expect(config).toMatchObject({ RequestMethod: 'POST', RequestURL: `${server.baseUrl}/api/files`, Body: 'MultipartFormData', FileFormName: 'file', URL: '{json:data.url}' });
    expect(config.Headers.Authorization).toBe(`Bearer ${token}`);
    for (const path of ['/api/profile/flameshot', '/api/profile/bash']) {
      const script = await owner.get(path);
      expect(script.status).toBe(200);
      expect(script.text.startsWith('#!/usr/bin/env bash')).toBe(true);
      expect(script.text).toContain(token);
      expect(script.text).toContain(server.baseUrl);
    }
  });

  it('shortens a URL with the ShareX URL shortener configuration, as ShareX applies it', async () => {
    const answer = await owner.get('/api/profile/sharex-shortener');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-disposition')).toMatch(/attachment; filename=".*-links\.sxcu"/);
    const config = JSON.parse(answer.text);
    expect(config).toMatchObject({ DestinationType: 'URLShortener', RequestMethod: 'POST', Body: 'JSON' });
    // ShareX: {input} JSON-escaped into the body, the headers as given, then {json:…} read from the answer.
    const shareX = async (input: string) => {
      const response = await fetch(config.RequestURL, {
        method: config.RequestMethod,
        headers: { ...config.Headers, 'content-type': 'application/json' },
        body: config.Data.replace('{input}', JSON.stringify(input).slice(1, -1)),
      });
      const json = await response.json();
      const fill = (template: string) => template.replace(/\{json:([^}]+)\}/g, (_, path: string) => path.split('.').reduce((value: any, key) => value?.[key], json));
      return { status: response.status, url: response.ok ? fill(config.URL) : null, error: response.ok ? null : fill(config.ErrorMessage) };
    };
    const target = 'https://example.com/a path?q="quoted"&x=1#end';
    const shortened = await shareX(target);
    expect(shortened.status).toBe(200);
    expect(shortened.url).toMatch(new RegExp(`^${server.baseUrl}/u/[A-Za-z0-9_]{6}$`));
    const visit = await fetch(shortened.url!, { redirect: 'manual' });
    expect(visit.status).toBe(302);
    expect(visit.headers.get('location')).toBe(new URL(target).href);
    // What ShareX shows when the server refuses.
    expect(await shareX('not a url')).toMatchObject({ status: 400, error: expect.stringMatching(/http/) });
    expect((await owner.post('/api/profile/upload-token')).status).toBe(200);
    expect(await shareX('https://example.com/')).toMatchObject({ status: 401, error: 'Unauthorized' });
  });
});
