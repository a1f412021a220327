/**
 * Suspending an account (docs/decisions.md): an administrator stops an account from acting without
 * deleting anything of it. Suspended, it cannot sign in, and its sessions, named tokens and legacy
 * credential are refused; resumed, its tokens work again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, heldUpload, uploadFile } from '../support/uploads.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer();
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

const PASSWORD = 'a suspended password';
const SUSPENDED = 'This account is suspended: ask an administrator of this instance';

async function member(roleIds: string[] = []) {
  const email = uniqueEmail('suspended');
  const created = await admin.post('/api/users', { email, password: PASSWORD, roleIds });
  expect(created.status).toBe(201);
  const client = new Client(server.baseUrl);
  expect((await client.post('/api/auth/login', { email, password: PASSWORD })).status).toBe(200);
  return Object.assign(client, { email, userId: created.body.data.user.id as string });
}

const suspend = (id: string, suspended: boolean) => admin.patch(`/api/users/${id}`, { suspended });

describe('suspending an account', () => {
  it('refuses its sessions, tokens, legacy credential and sign-ins, keeps its files up, and lets all of it work again once resumed', async () => {
    const user = await member();
    const token = await createToken(user, ['files:read', 'files:upload']);
    const legacy = (await user.get('/api/profile/upload-token')).body.data.uploadToken as string;
    const upload = await uploadFile(user, 'kept.txt', 'kept while suspended', { fields: { visibility: 'PUBLIC' } });
    expect(upload.status).toBe(200);
    const script = new Client(server.baseUrl);

    const suspended = await suspend(user.userId, true);
    expect(suspended.status).toBe(200);
    expect(Date.parse(suspended.body.data.user.suspendedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await user.get('/api/auth/me')).status).toBe(401);
    expect((await script.request('GET', '/api/files', { token })).status).toBe(401);
    expect((await script.request('GET', '/api/files', { token: legacy })).status).toBe(401);
    expect((await uploadFile(script, 'no.txt', 'no', { token })).status).toBe(401);
    // The right password is told why; a wrong one learns nothing.
    const signIn = await new Client(server.baseUrl).post('/api/auth/login', { email: user.email, password: PASSWORD });
    expect([signIn.status, signIn.body.error]).toEqual([403, SUSPENDED]);
    expect((await new Client(server.baseUrl).post('/api/auth/login', { email: user.email, password: 'not it at all' })).status).toBe(401);
    // Nothing is deleted, and what it shared stays up.
    expect((await new Client(server.baseUrl).get(new URL(upload.body.data.rawUrl).pathname)).status).toBe(200);
    const listed = (await admin.get('/api/users')).body.data.users.find((u: { id: string }) => u.id === user.userId);
    expect(listed).toMatchObject({ suspendedAt: suspended.body.data.user.suspendedAt, usedBytes: 20 });
    // Suspending again keeps the first time.
    expect((await suspend(user.userId, true)).body.data.user.suspendedAt).toBe(suspended.body.data.user.suspendedAt);

    const resumed = await suspend(user.userId, false);
    expect([resumed.status, resumed.body.data.user.suspendedAt]).toEqual([200, null]);
    expect((await script.request('GET', '/api/files', { token })).status).toBe(200);
    expect((await script.request('GET', '/api/files', { token: legacy })).status).toBe(200);
    const again = new Client(server.baseUrl);
    expect((await again.post('/api/auth/login', { email: user.email, password: PASSWORD })).status).toBe(200);
    // The sessions it had stay ended.
    expect((await user.get('/api/auth/me')).status).toBe(401);
  });

  it('is refused for oneself, for an account holding the administrator permission, and without users.manage', async () => {
    expect([(await suspend(admin.userId, true)).status, (await suspend(admin.userId, true)).body.error]).toEqual([400, 'suspended: you cannot suspend your own account']);
    const roles = (await admin.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null }>;
    const second = await member([roles.find((r) => r.systemKey === 'administrator')!.id]);
    const refused = await suspend(second.userId, true);
    expect([refused.status, refused.body.error]).toEqual([409, 'suspended: this account holds the administrator permission; take its Administrator role away first']);
    expect((await second.get('/api/auth/me')).status).toBe(200);
    const plain = await member();
    const target = await member();
    expect((await plain.patch(`/api/users/${target.userId}`, { suspended: true })).status).toBe(403);
    expect((await target.get('/api/auth/me')).status).toBe(200);
  });

  it('refuses an upload whose account was suspended while its bytes arrived', async () => {
    const user = await member();
    const token = await createToken(user, ['files:upload']);
    const held = heldUpload(server.baseUrl, token);
    await held.begun;
    // Authenticated once the token shows a use.
    await expect.poll(async () => (await user.get('/api/tokens')).body.data.tokens[0].lastUsedAt).not.toBeNull();
    expect((await suspend(user.userId, true)).status).toBe(200);
    held.release();
    const refused = await held.answer;
    expect([refused.status, await refused.json()]).toEqual([403, { error: 'The account was suspended before the upload was finalized' }]);
    expect(await server.ctx.db.selectFrom('files').select('id').where('userId', '=', user.userId).execute()).toEqual([]);
  });
});
