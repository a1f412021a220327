/**
 * Leaving an instance (docs/decisions.md): an account deletes itself with its password, and with it
 * everything it owns; the last administrator cannot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { SESSION_COOKIE } from '../../src/auth/sessions.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer();
  admin = await signUp(server.baseUrl);
  await admin.patch('/api/settings', { registration: 'open' });
});
afterAll(() => server.close());

const PASSWORD = 'a leaving password';

async function member() {
  const email = uniqueEmail('leaving');
  const client = new Client(server.baseUrl);
  const registered = await client.post('/api/auth/register', { email, password: PASSWORD });
  expect(registered.status).toBe(201);
  return Object.assign(client, { email, userId: registered.body.data.user.id as string });
}

describe('DELETE /api/account', () => {
  it('deletes the account with its password: files and their bytes, links, tokens, sessions; the email is free again', async () => {
    const user = await member();
    const upload = await uploadFile(user, 'mine.txt', 'bytes of a leaving account');
    expect(upload.status).toBe(200);
    const file = await server.ctx.db.selectFrom('files').select(['storageKey']).where('userId', '=', user.userId).executeTakeFirstOrThrow();
    const token = await createToken(user, ['files:read', 'urls:write']);
    const script = new Client(server.baseUrl);
    const link = await script.request('POST', '/api/urls', { token, json: { url: 'https://example.com/a-page' } });
    expect(link.status).toBe(200);
    expect((await new Client(server.baseUrl).get(`/u/${link.body.data.shortCode}`)).status).toBe(302);
    const other = new Client(server.baseUrl);
    expect((await other.post('/api/auth/login', { email: user.email, password: PASSWORD })).status).toBe(200);

    // A wrong password changes nothing.
    const wrong = await user.request('DELETE', '/api/account', { json: { password: 'not it' } });
    expect([wrong.status, wrong.body]).toEqual([403, { success: false, error: 'The password is not right' }]);
    expect((await user.get('/api/auth/me')).status).toBe(200);

    const deleted = await user.request('DELETE', '/api/account', { json: { password: PASSWORD } });
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=;`));
    await server.jobs.runDueJobs();

    expect((await other.get('/api/auth/me')).status).toBe(401);
    expect((await script.request('GET', '/api/files', { token })).status).toBe(401);
    expect((await new Client(server.baseUrl).get(new URL(upload.body.data.rawUrl).pathname)).status).toBe(404);
    expect((await new Client(server.baseUrl).get(`/u/${link.body.data.shortCode}`)).status).toBe(404);
    expect(await server.ctx.storage.stat(file.storageKey)).toBeNull();
    expect(await server.ctx.db.selectFrom('users').select('id').where('id', '=', user.userId).executeTakeFirst()).toBeUndefined();
    // The email may register again, as a new account.
    const again = await new Client(server.baseUrl).post('/api/auth/register', { email: user.email, password: PASSWORD });
    expect(again.status).toBe(201);
    expect(again.body.data.user.id).not.toBe(user.userId);
  });

  it('refuses the last administrator, a token, a signed-out browser and a body without the password', async () => {
    const last = await admin.request('DELETE', '/api/account', { json: { password: admin.password } });
    expect([last.status, last.body.error]).toEqual([409, 'This would remove the last Administrator: at least one account must keep the administrator permission']);
    expect((await admin.get('/api/auth/me')).status).toBe(200);

    const user = await member();
    const token = await createToken(user, ['files:read']);
    expect((await new Client(server.baseUrl).request('DELETE', '/api/account', { token, json: { password: PASSWORD } })).status).toBe(401);
    expect((await new Client(server.baseUrl).request('DELETE', '/api/account', { json: { password: PASSWORD } })).status).toBe(401);
    expect((await user.request('DELETE', '/api/account', { json: {} })).status).toBe(400);
    expect((await user.request('DELETE', '/api/account')).status).toBe(400);
    // From another site: refused before anything is read.
    expect((await user.request('DELETE', '/api/account', { origin: 'https://elsewhere.example', json: { password: PASSWORD } })).status).toBe(403);
    expect((await user.get('/api/auth/me')).status).toBe(200);
  });
});

describe('an account deleted by an administrator while it confirms its password or deletes itself', () => {
  it('answers the generic 401 or success, never a 500 nor "User not found"', async () => {
    const statuses: Array<[number, number]> = [];
    for (let i = 0; i < 8; i++) {
      const user = await member();
      const [own, other] = await Promise.all([
        i % 2 === 0 ? user.request('DELETE', '/api/account', { json: { password: PASSWORD } }) : user.post('/api/auth/confirm', { password: PASSWORD }),
        admin.delete(`/api/users/${user.userId}`),
      ]);
      statuses.push([own.status, other.status]);
      expect([204, 200, 401], `${own.status} ${own.text}`).toContain(own.status);
      expect([204, 404], other.text).toContain(other.status);
      expect(await server.ctx.db.selectFrom('users').select('id').where('id', '=', user.userId).executeTakeFirst()).toBeUndefined();
    }
    // Two tabs deleting the same account at once: one deletes it, the other finds no account.
    const user = await member();
    const twice = await Promise.all([user.request('DELETE', '/api/account', { json: { password: PASSWORD } }), user.request('DELETE', '/api/account', { json: { password: PASSWORD } })]);
    expect(twice.map((r) => r.status).sort()).toEqual([204, 401]);
  });
});
