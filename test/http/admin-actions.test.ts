import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { dialectUnderTest, startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { createToken, uploadFile } from '../support/uploads.ts';

/**
 * The administration log (docs/decisions.md, "The administration log"): every change an
 * administrator makes to what is not their own is recorded with who made it, what it was named
 * then, and what changed, and is read by whoever holds audit.read, in a browser session.
 */
describe('the administration log', () => {
  let server: TestServer;
  let admin: Awaited<ReturnType<typeof signUp>>;

  beforeAll(async () => {
    server = await startTestServer({ UPLOAD_RATE_LIMIT: '0' });
    admin = await signUp(server.baseUrl);
    expect((await admin.patch('/api/settings', { registration: 'open' })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  type Action = { id: string; at: string; actor: { id: string; email: string }; action: string; target: { id: string | null; label: string }; changes: Array<{ field: string; from?: unknown; to?: unknown }> };
  const actionsOf = async (client: Client, targetId: string): Promise<Action[]> => {
    const answer = await client.get(`/api/admin/actions?targetId=${encodeURIComponent(targetId)}`);
    expect(answer.status, answer.text).toBe(200);
    return answer.body.data.actions;
  };
  const byAdmin = () => ({ id: admin.userId, email: admin.email });

  it('records an account made, changed, reset and deleted, and keeps the record after the account is gone', async () => {
    const email = uniqueEmail('logged');
    const role = (await admin.post('/api/roles', { name: `Uploaders ${Date.now()}`, permissions: ['files.upload'] })).body.data.role;
    const made = await admin.post('/api/users', { email, password: 'a temporary password 1', name: 'Logged One', roleIds: [role.id] });
    expect(made.status, made.text).toBe(201);
    const id = made.body.data.user.id;

    const changed = await admin.patch(`/api/users/${id}`, { quotaBytes: 1_000_000, password: 'a new secret password 2', suspended: true, name: 'Logged Two' });
    expect(changed.status, changed.text).toBe(200);
    // The same values again change nothing, and record nothing.
    expect((await admin.patch(`/api/users/${id}`, { quotaBytes: 1_000_000, name: 'Logged Two' })).status).toBe(200);
    expect((await admin.delete(`/api/users/${id}/two-factor`)).status).toBe(204);
    expect((await admin.delete(`/api/users/${id}`)).status).toBe(204);

    const actions = await actionsOf(admin, id);
    expect(actions.map((a) => a.action)).toEqual(['account.delete', 'account.two-factor-reset', 'account.change', 'account.create']);
    for (const action of actions) {
      expect(action.actor).toEqual(byAdmin());
      expect(action.target).toEqual({ id, label: email });
      expect(Date.parse(action.at)).not.toBeNaN();
    }
    const [deleted, reset, change, create] = actions;
    expect(create!.changes).toEqual([
      { field: 'email', to: email },
      { field: 'name', to: 'Logged One' },
      { field: 'roles', to: [role.name] },
      { field: 'emailVerified', to: true },
    ]);
    expect(change!.changes).toEqual([
      { field: 'name', from: 'Logged One', to: 'Logged Two' },
      { field: 'quotaBytes', from: null, to: 1_000_000 },
      { field: 'suspended', from: false, to: true },
      { field: 'password' },
    ]);
    expect(reset!.changes).toEqual([]);
    expect(deleted!.changes).toEqual([
      { field: 'files', from: 0 },
      { field: 'usedBytes', from: 0 },
    ]);
    // No password, old or new, is ever in the log.
    const whole = (await admin.get('/api/admin/actions?limit=100')).text;
    expect(whole).not.toContain('a temporary password 1');
    expect(whole).not.toContain('a new secret password 2');
  });

  it('records roles, settings and invites, naming an invite by its note and never by its code', async () => {
    const role = (await admin.post('/api/roles', { name: `Editors ${Date.now()}`, permissions: ['files.read'] })).body.data.role;
    expect((await admin.patch(`/api/roles/${role.id}`, { name: `${role.name} B`, permissions: ['files.read', 'files.update'] })).status).toBe(200);
    expect((await admin.delete(`/api/roles/${role.id}`)).status).toBe(204);
    const roleActions = await actionsOf(admin, role.id);
    expect(roleActions.map((a) => [a.action, a.target.label, a.changes])).toEqual([
      ['role.delete', `${role.name} B`, [{ field: 'permissions', from: ['files.read', 'files.update'] }]],
      [
        'role.change',
        `${role.name} B`,
        [
          { field: 'name', from: role.name, to: `${role.name} B` },
          { field: 'permissions', from: ['files.read'], to: ['files.read', 'files.update'] },
        ],
      ],
      ['role.create', role.name, [{ field: 'name', to: role.name }, { field: 'permissions', to: ['files.read'] }]],
    ]);

    const settingsBefore = (await admin.get('/api/settings')).body.data;
    expect((await admin.patch('/api/settings', { defaultQuotaBytes: settingsBefore.defaultQuotaBytes + 1024, registration: 'open' })).status).toBe(200);
    const [settingsChange] = (await admin.get('/api/admin/actions?limit=1')).body.data.actions as Action[];
    expect(settingsChange).toMatchObject({ action: 'settings.change', actor: byAdmin(), target: { id: null, label: 'Instance settings' } });
    // Only what changed: registration was open already.
    expect(settingsChange!.changes).toEqual([{ field: 'defaultQuotaBytes', from: settingsBefore.defaultQuotaBytes, to: settingsBefore.defaultQuotaBytes + 1024 }]);

    const invite = (await admin.post('/api/invites', { note: 'for Alice' })).body.data;
    const plain = (await admin.post('/api/invites', {})).body.data;
    expect((await admin.delete(`/api/invites/${invite.id}`)).status).toBe(204);
    expect((await actionsOf(admin, invite.id)).map((a) => [a.action, a.target.label, a.changes])).toEqual([
      ['invite.withdraw', 'for Alice', []],
      ['invite.create', 'for Alice', [{ field: 'expiresAt', to: invite.expiresAt }, { field: 'note', to: 'for Alice' }]],
    ]);
    expect((await actionsOf(admin, plain.id))[0]!.target.label).toBe('An invite without a note');
    const whole = (await admin.get('/api/admin/actions?limit=100')).text;
    expect(whole).not.toContain(invite.code);
    expect(whole).not.toContain(plain.code);
  });

  it('records a take-down with the owner and what was taken down', async () => {
    const member = await signUp(server.baseUrl);
    const upload = await uploadFile(member, 'reported.txt', 'reported content');
    expect(upload.status, upload.text).toBe(200);
    const fileId = (await admin.get(`/api/moderation/lookup?address=${encodeURIComponent(upload.body.data.url)}`)).body.data.id;
    const link = (await member.post('/api/urls', { url: 'https://example.com/reported' })).body.data;
    expect((await admin.delete(`/api/moderation/files/${fileId}`)).status).toBe(204);
    expect((await admin.delete(`/api/moderation/links/${link.id}`)).status).toBe(204);
    expect(await actionsOf(admin, fileId)).toMatchObject([
      { action: 'file.take-down', actor: byAdmin(), target: { id: fileId, label: 'reported.txt' }, changes: [{ field: 'owner', from: member.email }, { field: 'size', from: 16 }] },
    ]);
    expect(await actionsOf(admin, link.id)).toMatchObject([
      { action: 'link.take-down', target: { id: link.id, label: `${server.baseUrl}/u/${link.shortCode}` }, changes: [{ field: 'owner', from: member.email }, { field: 'targetUrl', from: 'https://example.com/reported' }] },
    ]);
  });

  it("keeps an account's newest 100 notices of take-downs, however many there were", async () => {
    const member = await signUp(server.baseUrl);
    const links: Array<{ id: string; shortCode: string }> = [];
    for (let i = 0; i < 102; i++) links.push((await member.post('/api/urls', { url: `https://example.com/spam/${i}` })).body.data);
    for (const link of links) expect((await admin.delete(`/api/moderation/links/${link.id}`)).status).toBe(204);
    const notices = (await member.get('/api/account/notices')).body.data.notices as Array<{ subject: string }>;
    expect(notices.map((n) => n.subject)).toEqual(links.slice(2).reverse().map((link) => `${server.baseUrl}/u/${link.shortCode}`));
  });

  it('records nothing for a change that was refused', async () => {
    const member = await signUp(server.baseUrl);
    const moderators = (await admin.post('/api/roles', { name: `Moderators ${Date.now()}`, permissions: ['users.manage'] })).body.data.role;
    expect((await admin.patch(`/api/users/${member.userId}`, { roleIds: [moderators.id] })).status).toBe(200);
    // A moderator cannot touch an administrator, nor grant what it lacks.
    expect((await member.patch(`/api/users/${admin.userId}`, { name: 'Taken' })).status).toBe(403);
    expect((await member.delete(`/api/users/${admin.userId}`)).status).toBe(403);
    const adminRole = (await admin.get('/api/roles')).body.data.roles.find((r: { systemKey: string | null }) => r.systemKey === 'administrator');
    expect((await member.patch(`/api/users/${member.userId}`, { roleIds: [moderators.id, adminRole.id] })).status).toBe(403);
    expect((await admin.patch('/api/users/nobody-here', { name: 'x' })).status).toBe(404);
    expect(await actionsOf(admin, admin.userId)).toEqual([]);
    expect((await actionsOf(admin, member.userId)).map((a) => a.action)).toEqual(['account.change']);
    expect(await actionsOf(admin, 'nobody-here')).toEqual([]);
  });

  it("writes each record in its change's transaction: a record the database refuses leaves the change unmade", async () => {
    const member = await signUp(server.baseUrl);
    const invite = (await admin.post('/api/invites', { note: 'kept' })).body.data;
    const { registration } = (await admin.get('/api/settings')).body.data;
    // The database itself refuses every new record of the log, as a full disk or a lost connection would.
    if (dialectUnderTest === 'sqlite') {
      await sql`CREATE TRIGGER "refuseAdminActions" BEFORE INSERT ON "adminActions" BEGIN SELECT RAISE(ABORT, 'the administration log refuses records'); END`.execute(server.ctx.db);
    } else {
      await sql`CREATE FUNCTION "refuseAdminActions"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the administration log refuses records'; END $$`.execute(server.ctx.db);
      await sql`CREATE TRIGGER "refuseAdminActions" BEFORE INSERT ON "adminActions" FOR EACH ROW EXECUTE FUNCTION "refuseAdminActions"()`.execute(server.ctx.db);
    }
    try {
      const roleName = `Unrecorded ${Date.now()}`;
      const failed = [
        await admin.patch(`/api/users/${member.userId}`, { name: 'Never Renamed', quotaBytes: 5 }),
        await admin.patch('/api/settings', { registration: registration === 'open' ? 'invite' : 'open' }),
        await admin.post('/api/roles', { name: roleName, permissions: ['files.upload'] }),
        await admin.delete(`/api/invites/${invite.id}`),
        await admin.delete(`/api/users/${member.userId}`),
      ];
      expect(failed.map((answer) => answer.status >= 500), failed.map((answer) => answer.text).join('\n')).toEqual([true, true, true, true, true]);
      // Nothing of any of them was made.
      const user = (await admin.get('/api/users')).body.data.users.find((u: { id: string }) => u.id === member.userId);
      expect([user?.name, user?.quotaBytes]).toEqual([(await member.get('/api/auth/me')).body.data.user.name, null]);
      expect((await admin.get('/api/settings')).body.data.registration).toBe(registration);
      expect((await admin.get('/api/roles')).body.data.roles.map((r: { name: string }) => r.name)).not.toContain(roleName);
      expect((await admin.get('/api/invites')).body.data.invites.map((i: { id: string }) => i.id)).toContain(invite.id);
    } finally {
      await sql`DROP TRIGGER "refuseAdminActions"${dialectUnderTest === 'postgres' ? sql` ON "adminActions"` : sql``}`.execute(server.ctx.db);
      if (dialectUnderTest === 'postgres') await sql`DROP FUNCTION "refuseAdminActions"()`.execute(server.ctx.db);
    }
    expect(await actionsOf(admin, member.userId)).toEqual([]);
    // The same change goes through with its record once the log takes records again.
    expect((await admin.patch(`/api/users/${member.userId}`, { name: 'Renamed Now' })).status).toBe(200);
    expect((await actionsOf(admin, member.userId)).map((a) => a.changes)).toEqual([[{ field: 'name', from: expect.anything(), to: 'Renamed Now' }]]);
  });

  it('is read with audit.read in a browser session only, a page at a time', async () => {
    const reader = await signUp(server.baseUrl);
    // Without audit.read: refused, even holding users.manage.
    const managers = (await admin.post('/api/roles', { name: `Managers ${Date.now()}`, permissions: ['users.manage'] })).body.data.role;
    expect((await admin.patch(`/api/users/${reader.userId}`, { roleIds: [managers.id] })).status).toBe(200);
    expect((await reader.get('/api/admin/actions')).status).toBe(403);
    const auditors = (await admin.post('/api/roles', { name: `Auditors ${Date.now()}`, permissions: ['audit.read'] })).body.data.role;
    expect((await admin.patch(`/api/users/${reader.userId}`, { roleIds: [auditors.id] })).status).toBe(200);
    const first = await reader.get('/api/admin/actions?limit=2');
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('cache-control')).toBe('private, no-store');
    expect(first.body.data.actions).toHaveLength(2);
    // Newest first, and the pages meet without a gap or an overlap.
    const all = (await reader.get('/api/admin/actions?limit=100')).body.data.actions as Action[];
    expect(all[0]!.target).toEqual({ id: reader.userId, label: reader.email });
    const second = (await reader.get(`/api/admin/actions?limit=2&before=${first.body.data.nextBefore}`)).body.data;
    expect([...first.body.data.actions, ...second.actions].map((a: Action) => a.id)).toEqual(all.slice(0, 4).map((a) => a.id));
    const times = all.map((a) => Date.parse(a.at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    // Never a token, whatever its scopes (spec, Authentication 11).
    const token = await createToken(admin, ['files:read']);
    const byToken = await fetch(`${server.baseUrl}/api/admin/actions`, { headers: { authorization: `Bearer ${token}` } });
    expect(byToken.status).toBe(401);
    expect((await new Client(server.baseUrl).get('/api/admin/actions')).status).toBe(401);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'before=not-an-id']) {
      const bad = await reader.get(`/api/admin/actions?${query}`);
      expect(bad.status, query).toBe(400);
    }
  });

  it('is pruned with the audit records once older than their retention (90 days by default)', async () => {
    const old = (await admin.post('/api/invites', { note: 'long ago' })).body.data;
    const recent = (await admin.post('/api/invites', { note: 'lately' })).body.data;
    const [record] = await actionsOf(admin, old.id);
    await server.ctx.db.updateTable('adminActions').set({ createdAt: Date.now() - 91 * 86_400_000 }).where('id', '=', record!.id).execute();
    await server.ctx.db.updateTable('jobs').set({ runAt: Date.now() - 1000 }).where('dedupeKey', '=', 'audit-prune').execute();
    await server.jobs.runDueJobs();
    await expect.poll(async () => (await actionsOf(admin, old.id)).length, { timeout: 10_000 }).toBe(0);
    expect(await actionsOf(admin, recent.id)).toHaveLength(1);
  });
});
