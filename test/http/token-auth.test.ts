import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { routePolicies, scopes, type RoutePolicy } from '../../src/auth/route-policy.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;
let everyone: { id: string; permissions: string[] };

beforeAll(async () => {
  server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
  admin = await signUp(server.baseUrl);
  await admin.patch('/api/settings', { registration: 'open' });
  everyone = (await admin.get('/api/roles')).body.data.roles.find((r: { systemKey: string }) => r.systemKey === 'everyone');
});
afterAll(() => server.close());

const member = () => signUp(server.baseUrl, uniqueEmail('member'));
const apiRoutes = routePolicies.filter((p): p is RoutePolicy & { access: { kind: 'api'; scope: (typeof scopes)[number] } } => p.access.kind === 'api');

/** A request that reaches each named-token route; IDs are made up, so a 400 or 404 past authorization is fine. */
function sampleRequest(policy: RoutePolicy): { method: string; path: string; json?: unknown; form?: boolean } {
  const path = policy.path.replace(':uploadId', 'abc123').replace(':partNumber', '1').replace(':id', 'nosuchid');
  if (policy.method === 'POST' && policy.path === '/api/files') return { method: 'POST', path, form: true };
  if (policy.method === 'POST' && policy.path === '/api/files/chunks') return { method: 'POST', path, json: { filename: 'x.txt', size: 1 } };
  if (policy.method === 'POST' && policy.path === '/api/urls') return { method: 'POST', path, json: { url: 'https://example.com/' } };
  if (policy.path === '/api/files/chunks' && policy.method === 'GET') return { method: 'GET', path: `${path}?uploadId=abc123&partNumber=1` };
  if (policy.path === '/api/files/chunks' && policy.method === 'PUT') return { method: 'PUT', path, json: { uploadId: 'abc123', parts: [{ PartNumber: 1, ETag: 'x' }] } };
  if (policy.path.endsWith('/complete')) return { method: 'POST', path, json: { parts: [{ PartNumber: 1, ETag: 'x' }] } };
  if (policy.method === 'PUT') return { method: 'PUT', path };
  return { method: policy.method, path };
}

function send(client: Client, policy: RoutePolicy, token: string) {
  const sample = sampleRequest(policy);
  if (sample.form) return uploadFile(client, 'scope.txt', 'x', { token });
  return client.request(sample.method, sample.path, {
    token,
    ...(sample.json !== undefined ? { json: sample.json } : {}),
    ...(sample.method === 'PUT' && sample.json === undefined ? { body: 'x', headers: { 'content-type': 'application/octet-stream' } } : {}),
  });
}

const unauthorizedBody = (policy: RoutePolicy) => (policy.errors === 'ApiError' ? { success: false, error: 'Unauthorized' } : { error: 'Unauthorized' });

describe('the scope table (spec, Authentication 3)', () => {
  it('lists the thirteen routes of the specification, and the one Hoard adds (docs/decisions.md, "Cancelling a chunked upload")', () => {
    expect(apiRoutes.map((p) => `${p.method} ${p.path} ${p.access.scope} ${p.access.permission}`).sort()).toEqual(
      [
        'GET /api/files files:read files.read',
        'POST /api/files files:upload files.upload',
        'GET /api/files/types files:read files.read',
        'GET /api/files/timeline files:read files.read',
        'POST /api/files/chunks files:upload files.upload',
        'GET /api/files/chunks files:upload files.upload',
        'PUT /api/files/chunks files:upload files.upload',
        'GET /api/files/chunks/:uploadId/part/:partNumber files:upload files.upload',
        'PUT /api/files/chunks/:uploadId/part/:partNumber files:upload files.upload',
        'POST /api/files/chunks/:uploadId/complete files:upload files.upload',
        'DELETE /api/files/chunks/:uploadId files:upload files.upload',
        'GET /api/urls urls:read links.read',
        'POST /api/urls urls:write links.create',
        'DELETE /api/urls/:id urls:write links.delete',
      ].sort(),
    );
  });

  it.each(apiRoutes.map((p) => [`${p.method} ${p.path}`, p] as const))('%s: its scope passes, every other scope is the generic 401', async (_name, policy) => {
    const owner = await member();
    const script = new Client(server.baseUrl);
    const withScope = await createToken(owner, [policy.access.scope]);
    const passed = await send(script, policy, withScope);
    expect(passed.status, passed.text).not.toBe(401);
    expect(passed.status).not.toBe(403);

    const others = scopes.filter((s) => s !== policy.access.scope);
    const withoutScope = await createToken(owner, [...others]);
    const refused = await send(script, policy, withoutScope);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(unauthorizedBody(policy));
  });

  it.each(apiRoutes.map((p) => [`${p.method} ${p.path}`, p] as const))('%s: the owner must hold the permission now, or 403', async (_name, policy) => {
    const owner = await member();
    const token = await createToken(owner, [policy.access.scope]);
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== policy.access.permission) });
    try {
      const refused = await send(new Client(server.baseUrl), policy, token);
      expect(refused.status).toBe(403);
      const message = 'You do not have permission to perform this action.';
      expect(refused.body).toEqual(policy.errors === 'ApiError' ? { success: false, error: message } : { error: message });
    } finally {
      await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
    expect((await send(new Client(server.baseUrl), policy, token)).status).not.toBe(403);
  });
});

describe('Authentication rules', () => {
  it('1: the scheme word is case-insensitive, the secret case-sensitive, and a token in the URL is never read', async () => {
    const owner = await member();
    const token = await createToken(owner, ['urls:read']);
    const client = new Client(server.baseUrl);
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      expect((await client.get('/api/urls', { headers: { authorization: `${scheme} ${token}` } })).status, scheme).toBe(200);
    }
    const letter = token.slice(4).search(/[A-Za-z]/) + 4;
    const swap = (c: string) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase());
    const flipped = token.slice(0, letter) + swap(token[letter]!) + token.slice(letter + 1);
    const wrongCase = await client.get('/api/urls', { token: flipped });
    expect(wrongCase.status).toBe(401);
    for (const query of [`access_token=${token}`, `token=${token}`, `apiKey=${token}`]) {
      expect((await client.get(`/api/urls?${query}`)).status).toBe(401);
    }
    expect((await client.get('/api/urls', { headers: { authorization: `Basic ${token}` } })).status).toBe(401);
    expect((await client.get('/api/urls', { headers: { authorization: token } })).status).toBe(401);
  });

  it('2: a named token acts with its own authority even with an administrator cookie', async () => {
    const owner = await member();
    const token = await createToken(owner, ['urls:read']);
    await owner.post('/api/urls', { url: 'https://owner.example/' });
    await admin.post('/api/urls', { url: 'https://admin.example/' });
    const mixed = await admin.get('/api/urls', { token });
    expect(mixed.status).toBe(200);
    expect(mixed.body.data.urls.map((u: { targetUrl: string }) => u.targetUrl)).toEqual(['https://owner.example/']);
    // The cookie does not widen the token's scopes either.
    expect((await admin.post('/api/urls', { url: 'https://x.example/' }, { token })).status).toBe(401);
    expect((await admin.get('/api/users', { token })).status).toBe(401);
  });

  it('4: files:read does not open the raw bytes of a private file', async () => {
    const owner = await member();
    const upload = await uploadFile(owner, 'secret.txt', 'top secret', { fields: { visibility: 'PRIVATE' } });
    const token = await createToken(owner, ['files:read', 'files:upload']);
    const raw = await new Client(server.baseUrl).get(new URL(upload.body.data.rawUrl).pathname, { token });
    expect(raw.status).toBe(404);
    // Private downloads are outside named-token access: the generic 401 (contract §10).
    const download = await new Client(server.baseUrl).get(new URL(upload.body.data.downloadUrl).pathname, { token });
    expect(download.status).toBe(401);
    expect((await owner.get(new URL(upload.body.data.rawUrl).pathname)).text).toBe('top secret');
  });

  it('5: a role change applies to the next request; Administrator satisfies permissions but never widens scopes', async () => {
    const owner = await member();
    const token = await createToken(owner, ['urls:read']);
    const script = new Client(server.baseUrl);
    expect((await script.get('/api/urls', { token })).status).toBe(200);
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== 'links.read') });
    try {
      expect((await script.get('/api/urls', { token })).status).toBe(403);
      const adminRole = (await admin.get('/api/roles')).body.data.roles.find((r: { systemKey: string }) => r.systemKey === 'administrator');
      await admin.patch(`/api/users/${owner.userId}`, { roleIds: [adminRole.id] });
      expect((await script.get('/api/urls', { token })).status).toBe(200);
      expect((await script.post('/api/urls', { url: 'https://x.example/' }, { token })).status).toBe(401);
      expect((await script.get('/api/users', { token })).status).toBe(401);
      await admin.patch(`/api/users/${owner.userId}`, { roleIds: [] });
      expect((await script.get('/api/urls', { token })).status).toBe(403);
    } finally {
      await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
  });

  it('7: an account that must verify its email cannot use named tokens or the legacy credential', async () => {
    const owner = await member();
    const token = await createToken(owner, ['urls:read']);
    const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
    const script = new Client(server.baseUrl);
    const unknown = await script.get('/api/urls', { token: 'svc_unknown' });
    await admin.patch('/api/settings', { requireEmailVerification: true });
    try {
      for (const credential of [token, legacy]) {
        const response = await script.get('/api/urls', { token: credential });
        expect(response.status).toBe(401);
        expect(response.body).toEqual(unknown.body);
      }
      // The browser session still works; verifying the address restores the credentials.
      expect((await owner.get('/api/urls')).status).toBe(200);
      await admin.patch(`/api/users/${owner.userId}`, { emailVerified: true });
      expect((await script.get('/api/urls', { token })).status).toBe(200);
      expect((await script.get('/api/urls', { token: legacy })).status).toBe(200);
    } finally {
      await admin.patch('/api/settings', { requireEmailVerification: false });
    }
  });

  it('9: the legacy credential works on named-token routes without a scope allowlist, within current permissions', async () => {
    const owner = await member();
    const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
    const script = new Client(server.baseUrl);
    expect((await uploadFile(script, 'legacy.txt', 'x', { token: legacy })).status).toBe(200);
    expect((await script.post('/api/urls', { url: 'https://legacy.example/' }, { token: legacy })).status).toBe(200);
    expect((await script.get('/api/urls', { token: legacy })).status).toBe(200);
    expect((await script.get('/api/files/tags', { token: legacy })).status).toBe(200);
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== 'links.create') });
    try {
      expect((await script.post('/api/urls', { url: 'https://legacy.example/' }, { token: legacy })).status).toBe(403);
    } finally {
      await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    }
    // Regenerating it invalidates the old value.
    await owner.post('/api/profile/upload-token');
    expect((await script.get('/api/urls', { token: legacy })).status).toBe(401);
  });

  it('10: ending browser sessions does not revoke tokens or the legacy credential', async () => {
    const password = 'first password';
    const owner = await signUp(server.baseUrl, uniqueEmail('sessions'), password);
    const token = await createToken(owner, ['urls:read']);
    const legacy = (await owner.get('/api/profile/upload-token')).body.data.uploadToken;
    const other = new Client(server.baseUrl);
    await other.post('/api/auth/login', { email: owner.email, password });
    expect((await owner.patch('/api/account', { currentPassword: password, newPassword: 'second password' })).status).toBe(200);
    expect((await other.get('/api/auth/me')).status).toBe(401);
    await owner.post('/api/auth/logout');
    const script = new Client(server.baseUrl);
    expect((await script.get('/api/urls', { token })).status).toBe(200);
    expect((await script.get('/api/urls', { token: legacy })).status).toBe(200);
  });

  it('11: token activity is audited by account, token and operation, never the secret', async () => {
    const owner = await member();
    const token = await createToken(owner, ['urls:read', 'urls:write']);
    const tokenId = (await owner.get('/api/tokens')).body.data.tokens[0].id;
    const script = new Client(server.baseUrl);
    await script.get('/api/urls', { token });
    await script.post('/api/urls', { url: 'https://audited.example/' }, { token });
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== 'links.read') });
    await script.get('/api/urls', { token });
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    await server.ctx.audit.flush();
    const rows = await server.ctx.db.selectFrom('auditEvents').selectAll().where('userId', '=', owner.userId).orderBy('createdAt').execute();
    expect(rows.map((r) => [r.credential, r.tokenId, r.operation, r.route, r.status])).toEqual([
      ['token', tokenId, 'links.read', 'GET /api/urls', 200],
      ['token', tokenId, 'links.create', 'POST /api/urls', 200],
      ['token', tokenId, 'links.read', 'GET /api/urls', 403],
    ]);
    expect(JSON.stringify(rows)).not.toContain(token.slice(4, 20));
  });
});

describe('the generic 401 and routes outside the table', () => {
  it('unknown, expired, revoked, out-of-scope and malformed credentials all get the identical body', async () => {
    const owner = await member();
    const expiring = await createToken(owner, ['urls:read'], { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    const revoked = await createToken(owner, ['urls:read']);
    const revokedId = (await owner.get('/api/tokens')).body.data.tokens[0].id;
    await owner.delete(`/api/tokens/${revokedId}`);
    await server.ctx.db.updateTable('apiTokens').set({ expiresAt: Date.now() - 1 }).where('userId', '=', owner.userId).where('revokedAt', 'is', null).execute();
    const outOfScope = await createToken(owner, ['files:read']);
    const script = new Client(server.baseUrl);
    const bodies = [];
    for (const credential of ['svc_nope', expiring, revoked, outOfScope, 'nonsense', '']) {
      const response = await script.get('/api/urls', { token: credential });
      expect(response.status).toBe(401);
      bodies.push(response.text);
    }
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toEqual({ success: false, error: 'Unauthorized' });
  });

  it('every route outside the named-token table refuses a named token with every scope', async () => {
    const owner = await member();
    const token = await createToken(owner, [...scopes]);
    const script = new Client(server.baseUrl);
    const outside = routePolicies.filter((p) => p.access.kind === 'session' || p.access.kind === 'sessionOrLegacy');
    expect(outside.length).toBeGreaterThan(40);
    for (const policy of outside) {
      const path = policy.path.replace(/:(\w+)/g, 'x');
      const response = await script.request(policy.method, path, { token, ...(policy.method === 'GET' || policy.method === 'DELETE' ? {} : { json: {} }) });
      expect(response.status, `${policy.method} ${policy.path}`).toBe(401);
    }
  });

  it('records lastUsedAt at most once a minute', async () => {
    const owner = await member();
    const token = await createToken(owner, ['urls:read']);
    const script = new Client(server.baseUrl);
    // The use is recorded after the request is answered (src/auth/authorize.ts: recording it must
    // not slow the request down), on another connection than the next request's: wait for it.
    const lastUsed = async () => (await owner.get('/api/tokens')).body.data.tokens[0].lastUsedAt as string | null;
    await script.get('/api/urls', { token });
    const first = await vi.waitFor(async () => {
      const value = await lastUsed();
      expect(value).not.toBeNull();
      return value;
    }, { timeout: 5_000, interval: 20 });
    for (let i = 0; i < 5; i++) await script.get('/api/urls', { token });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lastUsed()).toBe(first);
    const old = Date.now() - 61_000;
    await server.ctx.db.updateTable('apiTokens').set({ lastUsedAt: old }).where('userId', '=', owner.userId).execute();
    await script.get('/api/urls', { token });
    await vi.waitFor(async () => expect(Date.parse((await lastUsed())!)).toBeGreaterThan(old), { timeout: 5_000, interval: 20 });
    expect(Date.parse((await lastUsed())!)).toBeGreaterThan(Date.now() - 5_000);
  });
});
