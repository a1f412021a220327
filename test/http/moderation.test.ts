import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';
import { providers, storageUnderTest, type StorageUnderTest } from '../support/stored-objects.ts';

/**
 * An administrator handed an address in an abuse report finds what it leads to and whose it is, and
 * takes that one file or short link down, leaving the rest of the account as it was
 * (docs/decisions.md, "Taking down content").
 */
describe.each(providers)('taking down a file or short link of another account, on %s storage', (provider) => {
  let storage: StorageUnderTest;
  let server: TestServer;
  let admin: Awaited<ReturnType<typeof signUp>>;
  let member: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    storage = await storageUnderTest(provider);
    server = await startTestServer({ ...storage.env, UPLOAD_RATE_LIMIT: '0' });
    admin = await signUp(server.baseUrl);
    expect((await admin.patch('/api/settings', { registration: 'open' })).status).toBe(200);
    member = await signUp(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
    await storage?.stop();
  });

  const lookup = (client: Client, address: string) => client.get(`/api/moderation/lookup?address=${encodeURIComponent(address)}`);

  it('finds a file by each of its addresses and a link by its short address, and names the owner', async () => {
    const upload = await uploadFile(member, 'reported.txt', 'reported content');
    expect(upload.status, upload.text).toBe(200);
    const { url, rawUrl, downloadUrl } = upload.body.data;
    for (const address of [url, rawUrl, downloadUrl, new URL(url).pathname, url.replace(/^http:\/\/[^/]+/, 'https://files.example.com')]) {
      const found = await lookup(admin, address);
      expect(found.status, `${address}: ${found.text}`).toBe(200);
      expect(found.body.data).toMatchObject({ kind: 'file', label: 'reported.txt', mimeType: 'text/plain', sizeBytes: 16, visibility: 'PUBLIC', hasPassword: false, owner: { id: member.userId, email: member.email } });
    }
    const link = (await member.post('/api/urls', { url: 'https://example.com/reported' })).body.data;
    for (const address of [`${server.baseUrl}/u/${link.shortCode}`, `/u/${link.shortCode}`]) {
      const found = await lookup(admin, address);
      expect(found.status, found.text).toBe(200);
      expect(found.body.data).toEqual({ kind: 'link', id: link.id, label: 'https://example.com/reported', shortCode: link.shortCode, clicks: 0, createdAt: link.createdAt, owner: { id: member.userId, email: member.email } });
    }
    // A file named like a route: its raw address still finds it.
    const named = await uploadFile(member, 'download', 'named download');
    expect(named.status, named.text).toBe(200);
    expect((await lookup(admin, named.body.data.rawUrl)).body.data).toMatchObject({ kind: 'file', label: 'download' });
  });

  it('says plainly when an address leads nowhere or is no address of the instance', async () => {
    for (const address of [`${server.baseUrl}/u/Zz9_Zz`, `${server.baseUrl}/app/files`, `${server.baseUrl}/nobody/nothing.txt`]) {
      const answer = await lookup(admin, address);
      expect(answer.status, address).toBe(404);
      expect(answer.body.error).toMatch(/^Nothing at this address/);
    }
    for (const address of ['', '   ', `${server.baseUrl}/`, `${server.baseUrl}/a/b/c`, `${server.baseUrl}/api/files/x/y/z`, '/%E0%A4%A/x']) {
      const answer = await lookup(admin, address);
      expect(answer.status, address).toBe(400);
      expect(answer.body.error).toMatch(/^address: /);
    }
    const missing = await admin.get('/api/moderation/lookup');
    expect(missing.status).toBe(400);
  });

  it('removes the file with its bytes and gives the quota back; the rest of the account stays', async () => {
    const owner = await signUp(server.baseUrl);
    const kept = await uploadFile(owner, 'kept.txt', 'kept');
    const reported = await uploadFile(owner, 'abuse.txt', 'abusive bytes here');
    expect(reported.status).toBe(200);
    const { data } = (await lookup(admin, reported.body.data.url)).body;
    const before = await storage.keys(server.dataDir, `files/${owner.userId}/`);
    expect(before).toHaveLength(2);

    const removed = await admin.delete(`/api/moderation/files/${data.id}`);
    expect(removed.status, removed.text).toBe(204);
    expect((await fetch(reported.body.data.rawUrl)).status).toBe(404);
    expect((await fetch(reported.body.data.url)).status).toBe(404);
    expect((await fetch(kept.body.data.rawUrl)).status).toBe(200);
    const listing = await owner.get('/api/files');
    expect(listing.body.data.map((f: { name: string }) => f.name)).toEqual(['kept.txt']);
    const user = await server.ctx.db.selectFrom('users').select('usedBytes').where('id', '=', owner.userId).executeTakeFirstOrThrow();
    expect(Number(user.usedBytes)).toBe(4);
    expect(await storage.keys(server.dataDir, `files/${owner.userId}/`)).toHaveLength(1);
    // Done already: a second take-down and a look-up say so.
    expect((await admin.delete(`/api/moderation/files/${data.id}`)).status).toBe(404);
    expect((await lookup(admin, reported.body.data.url)).status).toBe(404);
  });

  it('removes a short link; its address leads nowhere after', async () => {
    const owner = await signUp(server.baseUrl);
    const link = (await owner.post('/api/urls', { url: 'https://example.com/spam' })).body.data;
    const other = (await owner.post('/api/urls', { url: 'https://example.com/fine' })).body.data;
    expect((await admin.delete(`/api/moderation/links/${link.id}`)).status).toBe(204);
    expect((await fetch(`${server.baseUrl}/u/${link.shortCode}`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/u/${other.shortCode}`, { redirect: 'manual' })).status).toBe(302);
    expect((await owner.get('/api/urls')).body.data.urls.map((u: { id: string }) => u.id)).toEqual([other.id]);
    expect((await admin.delete(`/api/moderation/links/${link.id}`)).status).toBe(404);
  });

  it('tells the owner what was taken down, and why where the administrator said; the owner dismisses it', async () => {
    const owner = await signUp(server.baseUrl);
    const other = await signUp(server.baseUrl);
    expect((await owner.get('/api/account/notices')).body.data.notices).toEqual([]);
    const file = await uploadFile(owner, 'infringing.mp3', 'not theirs to share');
    const fileId = (await lookup(admin, file.body.data.url)).body.data.id;
    const link = (await owner.post('/api/urls', { url: 'https://example.com/phish' })).body.data;

    // A reason too long, or with control characters, is refused and nothing is taken down.
    for (const reason of ['x'.repeat(501), 'bad\u0007reason']) {
      const refused = await admin.delete(`/api/moderation/files/${fileId}`, { json: { reason } });
      expect(refused.status, reason).toBe(400);
      expect(refused.body.error).toMatch(/^body\.reason: /);
    }
    expect((await fetch(file.body.data.rawUrl)).status).toBe(200);

    expect((await admin.delete(`/api/moderation/files/${fileId}`, { json: { reason: '  Reported as copyright infringement  ' } })).status).toBe(204);
    // No body, or a blank reason: no reason given.
    expect((await admin.delete(`/api/moderation/links/${link.id}`, { json: { reason: '   ' } })).status).toBe(204);
    const notices = (await owner.get('/api/account/notices')).body.data.notices as Array<{ id: string; kind: string; subject: string; reason: string | null; createdAt: string }>;
    expect(notices.map(({ kind, subject, reason }) => ({ kind, subject, reason }))).toEqual([
      { kind: 'link.take-down', subject: `${server.baseUrl}/u/${link.shortCode}`, reason: null },
      { kind: 'file.take-down', subject: 'infringing.mp3', reason: 'Reported as copyright infringement' },
    ]);
    // The administration log has the reason too.
    const logged = (await admin.get(`/api/admin/actions?targetId=${fileId}`)).body.data.actions;
    expect(logged[0].changes).toContainEqual({ field: 'reason', to: 'Reported as copyright infringement' });

    // Only the owner sees and dismisses them.
    expect((await other.get('/api/account/notices')).body.data.notices).toEqual([]);
    expect((await other.delete(`/api/account/notices/${notices[0]!.id}`)).status).toBe(404);
    expect((await admin.delete(`/api/account/notices/${notices[0]!.id}`)).status).toBe(404);
    expect((await owner.delete(`/api/account/notices/${notices[0]!.id}`)).status).toBe(204);
    expect((await owner.delete(`/api/account/notices/${notices[0]!.id}`)).status).toBe(404);
    expect((await owner.get('/api/account/notices')).body.data.notices.map((n: { id: string }) => n.id)).toEqual([notices[1]!.id]);
    // Never through a token.
    const token = await createToken(owner, ['files:read']);
    expect((await new Client(server.baseUrl).request('GET', '/api/account/notices', { token })).status).toBe(401);
  });

  it("leaves alone what belongs to an account holding a permission the moderator lacks", async () => {
    // A moderator holds users.manage alone; the first account is the administrator.
    const role = await admin.post('/api/roles', { name: `Moderators ${provider}`, permissions: ['users.manage'] });
    expect(role.status, role.text).toBe(201);
    const moderator = await signUp(server.baseUrl);
    expect((await admin.patch(`/api/users/${moderator.userId}`, { roleIds: [role.body.data.role.id] })).status).toBe(200);
    const adminsFile = await uploadFile(admin, 'admins.txt', 'the administrator');
    const adminsLink = (await admin.post('/api/urls', { url: 'https://example.com/admin' })).body.data;
    const found = await lookup(moderator, adminsFile.body.data.url);
    expect(found.body.data.owner.id).toBe(admin.userId);
    for (const path of [`/api/moderation/files/${found.body.data.id}`, `/api/moderation/links/${adminsLink.id}`]) {
      const refused = await moderator.delete(path);
      expect(refused.status, path).toBe(403);
      expect(refused.body.error).toBe('You cannot change an account holding the permission administrator, which you do not have');
    }
    expect((await fetch(adminsFile.body.data.rawUrl)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/u/${adminsLink.shortCode}`, { redirect: 'manual' })).status).toBe(302);
    // A member's file is the moderator's to take down.
    const membersFile = await uploadFile(member, 'members.txt', 'a member');
    const membersId = (await lookup(moderator, membersFile.body.data.url)).body.data.id;
    expect((await moderator.delete(`/api/moderation/files/${membersId}`)).status).toBe(204);
  });

  it('is for users.manage in a browser session alone: a member is refused, a token or the upload credential gets the generic 401', async () => {
    const target = await uploadFile(member, 'target.txt', 'target');
    const fileId = (await lookup(admin, target.body.data.url)).body.data.id;
    const link = (await member.post('/api/urls', { url: 'https://example.com/target' })).body.data;
    const attempts = (client: Client, token?: string) => [
      client.request('GET', `/api/moderation/lookup?address=${encodeURIComponent(target.body.data.url)}`, token ? { token } : {}),
      client.request('DELETE', `/api/moderation/files/${fileId}`, token ? { token } : {}),
      client.request('DELETE', `/api/moderation/links/${link.id}`, token ? { token } : {}),
    ];
    for (const answer of await Promise.all(attempts(member))) expect(answer.status).toBe(403);
    const adminToken = await createToken(admin, ['files:read', 'files:upload', 'urls:read', 'urls:write']);
    const credential = (await admin.get('/api/profile/upload-token')).body.data.uploadToken as string;
    for (const token of [adminToken, credential]) {
      for (const answer of await Promise.all(attempts(new Client(server.baseUrl), token))) {
        expect(answer.status).toBe(401);
        expect(answer.body.error).toBe('Unauthorized');
      }
    }
    // Still there.
    expect((await fetch(target.body.data.rawUrl)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/u/${link.shortCode}`, { redirect: 'manual' })).status).toBe(302);
  });
});
