import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';
import { fileRow } from '../support/file-rows.ts';
import { expectAnsweredMeanwhile, waitsDuring } from '../support/responsiveness.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer({ MAX_UPLOAD_SIZE: '5000000', DEFAULT_QUOTA: '7000000' });
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

async function signIn(email: string, password: string): Promise<Client> {
  const client = new Client(server.baseUrl);
  const response = await client.post('/api/auth/login', { email, password });
  expect(response.status).toBe(200);
  return client;
}

async function createMember(roleIds: string[] = []) {
  const email = uniqueEmail('member');
  const created = await admin.post('/api/users', { email, password: 'member password', roleIds });
  expect(created.status).toBe(201);
  return { id: created.body.data.user.id as string, client: await signIn(email, 'member password'), email };
}

async function roleBySystemKey(key: string) {
  const roles = await admin.get('/api/roles');
  return roles.body.data.roles.find((r: { systemKey: string | null }) => r.systemKey === key);
}

describe('settings', () => {
  it('start from the environment and can be changed', async () => {
    const initial = await admin.get('/api/settings');
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({
      success: true,
      data: { registration: 'closed', requireEmailVerification: false, maxUploadSizeBytes: 5000000, defaultQuotaBytes: 7000000, thumbnailsEnabled: true, ocrEnabled: true },
    });
    const changed = await admin.patch('/api/settings', { requireEmailVerification: true, maxUploadSizeBytes: 1234, defaultQuotaBytes: 0 });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ registration: 'closed', requireEmailVerification: true, maxUploadSizeBytes: 1234, defaultQuotaBytes: 0 });
    expect((await admin.get('/api/settings')).body.data.maxUploadSizeBytes).toBe(1234);
    await admin.patch('/api/settings', { requireEmailVerification: false });
  });

  it('reject invalid values naming the field', async () => {
    for (const [body, field] of [
      [{ registration: 'sometimes' }, 'body.registration'],
      [{ maxUploadSizeBytes: -5 }, 'body.maxUploadSizeBytes'],
      [{ defaultQuotaBytes: 'lots' }, 'body.defaultQuotaBytes'],
      [{ theme: 'dark' }, 'body'],
    ] as const) {
      const response = await admin.patch('/api/settings', body);
      expect(response.status).toBe(400);
      expect(response.body.error.startsWith(`${field}:`)).toBe(true);
    }
  });

  it('need settings.manage', async () => {
    const member = await createMember();
    expect((await member.client.get('/api/settings')).body).toEqual({ success: false, error: 'You do not have permission to perform this action.' });
    expect((await member.client.patch('/api/settings', { registration: 'open' })).status).toBe(403);
  });
});

describe('users', () => {
  it('are listed, created, changed and deleted by an administrator', async () => {
    const email = uniqueEmail('new');
    const created = await admin.post('/api/users', { email, password: 'a good password', name: 'New Person', emailVerified: false });
    expect(created.status).toBe(201);
    const user = created.body.data.user;
    expect(user).toMatchObject({ email, name: 'New Person', emailVerified: false, quotaBytes: null, roleIds: [] });
    expect(user).not.toHaveProperty('passwordHash');

    const list = await admin.get('/api/users');
    expect(list.body.data.users.map((u: { email: string }) => u.email)).toContain(email);
    expect(JSON.stringify(list.body)).not.toMatch(/argon2|passwordHash/);

    const adminRole = await roleBySystemKey('administrator');
    const patched = await admin.patch(`/api/users/${user.id}`, { name: 'Renamed', emailVerified: true, quotaBytes: 1000, roleIds: [adminRole.id] });
    expect(patched.status).toBe(200);
    expect(patched.body.data.user).toMatchObject({ name: 'Renamed', emailVerified: true, quotaBytes: 1000, roleIds: [adminRole.id] });

    const cleared = await admin.patch(`/api/users/${user.id}`, { quotaBytes: null, roleIds: [] });
    expect(cleared.body.data.user).toMatchObject({ quotaBytes: null, roleIds: [] });

    expect((await admin.delete(`/api/users/${user.id}`)).status).toBe(204);
    expect((await admin.delete(`/api/users/${user.id}`)).status).toBe(404);
    expect((await admin.patch(`/api/users/${user.id}`, { name: 'x' })).status).toBe(404);
  });

  it('says which quota holds each account now: its own, else the default, which quotas.bypass is exempt from', async () => {
    expect((await admin.patch('/api/settings', { defaultQuotaBytes: 1000 })).status).toBe(200);
    try {
      const plain = await createMember();
      const own = await createMember();
      const none = await createMember();
      const bypassRole = await admin.post('/api/roles', { name: `Exempt ${uniqueEmail('r')}`, permissions: ['quotas.bypass'] });
      expect(bypassRole.status).toBe(201);
      const exempt = await createMember([bypassRole.body.data.role.id]);
      expect((await admin.patch(`/api/users/${own.id}`, { quotaBytes: 500 })).status).toBe(200);
      expect((await admin.patch(`/api/users/${none.id}`, { quotaBytes: 0 })).status).toBe(200);
      // Over its quota: the list says so by the figures.
      expect((await uploadFile(plain.client, 'big.txt', 'x'.repeat(900))).status).toBe(200);
      expect((await admin.patch('/api/settings', { defaultQuotaBytes: 800 })).status).toBe(200);

      const users = (await admin.get('/api/users')).body.data.users as Array<{ id: string; quotaBytes: number | null; quotaAppliedBytes: number | null; usedBytes: number; twoFactorEnabled: boolean }>;
      const of = (id: string) => users.find((u) => u.id === id)!;
      expect([plain, own, none, exempt].map(({ id }) => [of(id).quotaBytes, of(id).quotaAppliedBytes])).toEqual([
        [null, 800],
        [500, 500],
        [0, null],
        [null, null],
      ]);
      expect(of(plain.id).usedBytes).toBeGreaterThan(of(plain.id).quotaAppliedBytes!);
      // The administrator holds quotas.bypass: no default binds it.
      expect(of(admin.userId).quotaAppliedBytes).toBeNull();
      expect(of(plain.id).twoFactorEnabled).toBe(false);
      // One account, as PATCH answers it, says the same.
      const patched = await admin.patch(`/api/users/${own.id}`, { quotaBytes: 600 });
      expect(patched.body.data.user.quotaAppliedBytes).toBe(600);
    } finally {
      await admin.patch('/api/settings', { defaultQuotaBytes: 7000000 });
    }
  });

  it('takes an email with surrounding spaces as sign-in does (a phone keyboard adds one)', async () => {
    const email = uniqueEmail('padded');
    const created = await admin.post('/api/users', { email: ` ${email}  `, password: 'a good password' });
    expect([created.status, created.body.data?.user?.email]).toEqual([201, email]);
    expect((await new Client(admin.baseUrl).post('/api/auth/login', { email, password: 'a good password' })).status).toBe(200);
  });

  it('refuses duplicates, unknown roles and deleting oneself', async () => {
    expect((await admin.post('/api/users', { email: admin.email, password: 'a good password' })).status).toBe(409);
    const unknownRole = await admin.post('/api/users', { email: uniqueEmail(), password: 'a good password', roleIds: ['nosuchrole'] });
    expect(unknownRole.status).toBe(400);
    expect(unknownRole.body.error).toMatch(/roleIds/);
    expect((await admin.delete(`/api/users/${admin.userId}`)).status).toBe(400);
  });

  it('does not assign Everyone, which applies to every account without being assigned', async () => {
    const roles = (await admin.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null }>;
    const everyone = roles.find((r) => r.systemKey === 'everyone')!.id;
    const created = await admin.post('/api/users', { email: uniqueEmail(), password: 'a good password', roleIds: [everyone] });
    expect([created.status, created.body.error]).toEqual([400, 'roleIds: Everyone applies to every account without being assigned']);
    const member = await createMember();
    const changed = await admin.patch(`/api/users/${member.id}`, { roleIds: [everyone] });
    expect([changed.status, changed.body.error]).toEqual([400, 'roleIds: Everyone applies to every account without being assigned']);
    const listed = ((await admin.get('/api/users')).body.data.users as Array<{ id: string; roleIds: string[] }>).find((u) => u.id === member.id)!;
    expect(listed.roleIds).toEqual([]);
  });

  it('refuses control characters in account and role names, as an account\'s own settings do', async () => {
    const member = await createMember();
    const controlled = 'a\u001b[31mred\u0007';
    const answers = [
      await admin.post('/api/users', { email: uniqueEmail(), password: 'a good password', name: controlled }),
      await admin.patch(`/api/users/${member.id}`, { name: controlled }),
      await admin.patch(`/api/users/${member.id}`, { name: 'tab\tname' }),
      await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'a good password', name: controlled }),
    ];
    for (const answer of answers) expect([answer.status, answer.body.error]).toEqual([400, 'body.name: must not contain control characters']);
    const role = await admin.post('/api/roles', { name: 'Role\u0001', permissions: [] });
    expect([role.status, role.body.error]).toEqual([400, 'body.name: must not contain control characters']);
  });

  it('deleting an account removes its files, bytes included', async () => {
    const member = await createMember();
    const upload = await uploadFile(member.client, 'mine.txt', 'bytes of a deleted account');
    expect(upload.status).toBe(200);
    const file = await server.ctx.db.selectFrom('files').select(['id', 'storageKey']).where('userId', '=', member.id).executeTakeFirstOrThrow();
    expect(await server.ctx.storage.stat(file.storageKey)).not.toBeNull();
    expect((await admin.delete(`/api/users/${member.id}`)).status).toBe(204);
    await server.jobs.runDueJobs();
    expect(await server.ctx.db.selectFrom('files').select('id').where('id', '=', file.id).executeTakeFirst()).toBeUndefined();
    expect(await server.ctx.storage.stat(file.storageKey)).toBeNull();
    expect((await new Client(server.baseUrl).get(new URL(upload.body.data.rawUrl).pathname)).status).toBe(404);
  });

  it('deleting an account of many files holds up no other request for long, and removes every file', async () => {
    const member = await createMember();
    const other = await createMember();
    const kept = await uploadFile(other.client, 'theirs.txt', 'not the deleted account\'s');
    expect(kept.status).toBe(200);
    const count = 6000;
    const rows = Array.from({ length: count }, (_, i) => fileRow(member.id, `manyfiles${member.id.slice(0, 8)}${i}`, { name: `file ${i}.txt`, ocrText: i % 3 ? null : `recognised text of file ${i}`, createdAt: Date.now() - i * 1000 }));
    for (let i = 0; i < rows.length; i += 500) await server.ctx.db.insertInto('files').values(rows.slice(i, i + 500)).execute();
    for (const name of ['one.txt', 'two.txt', 'three.txt']) expect((await uploadFile(member.client, name, `bytes of ${name}`)).status).toBe(200);
    const storedKeys = (await server.ctx.db.selectFrom('files').select('storageKey').where('userId', '=', member.id).where('name', 'in', ['one.txt', 'two.txt', 'three.txt']).execute()).map((f) => f.storageKey);
    expect(storedKeys).toHaveLength(3);
    for (const key of storedKeys) expect(await server.ctx.storage.stat(key)).not.toBeNull();
    const keptKey = (await server.ctx.db.selectFrom('files').select('storageKey').where('userId', '=', other.id).executeTakeFirstOrThrow()).storageKey;
    const during = await waitsDuring(server.baseUrl, () => admin.delete(`/api/users/${member.id}`));
    const deleted = during.result;
    expect(deleted.status).toBe(204);
    expect(await server.ctx.db.selectFrom('files').select('id').where('userId', '=', member.id).executeTakeFirst()).toBeUndefined();
    expect((await other.client.get('/api/files')).body.pagination.total).toBe(1);
    // The uploaded files' bytes go too, by the jobs committed with their records (about 6,000 of
    // them here, which the background runner shares with runDueJobs).
    for (let round = 0; round < 50; round++) {
      await server.jobs.runDueJobs();
      if ((await Promise.all(storedKeys.map((key) => server.ctx.storage.stat(key)))).every((stat) => stat === null)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const key of storedKeys) expect(await server.ctx.storage.stat(key)).toBeNull();
    expect(await server.ctx.storage.stat(keptKey)).not.toBeNull();
    expectAnsweredMeanwhile(during);
  });

  it('two administrators deleting each other at once: one is refused, and its deletion took nothing of the other', async () => {
    const instance = await startTestServer();
    try {
      const first = await signUp(instance.baseUrl);
      const adminRole = (await first.get('/api/roles')).body.data.roles.find((r: { systemKey: string | null }) => r.systemKey === 'administrator');
      const pair = [];
      for (const name of ['x1', 'x2']) {
        const email = uniqueEmail(name);
        const created = await first.post('/api/users', { email, password: 'administrator password', roleIds: [adminRole.id] });
        expect(created.status, created.text).toBe(201);
        const client = new Client(instance.baseUrl);
        expect((await client.post('/api/auth/login', { email, password: 'administrator password' })).status).toBe(200);
        const id = created.body.data.user.id as string;
        const rows = Array.from({ length: 300 }, (_, i) => fileRow(id, `pair${id.slice(0, 10)}${i}`, { name: `file ${i}.txt`, size: 5 }));
        for (let i = 0; i < rows.length; i += 100) await instance.ctx.db.insertInto('files').values(rows.slice(i, i + 100)).execute();
        await instance.ctx.db.updateTable('users').set({ usedBytes: 1500 }).where('id', '=', id).execute();
        pair.push({ id, client });
      }
      // The two are the only administrators left.
      expect((await first.patch(`/api/users/${first.userId}`, { roleIds: [] })).status).toBe(200);
      const [one, two] = pair as [(typeof pair)[0], (typeof pair)[0]];
      const answers = await Promise.all([one.client.delete(`/api/users/${two.id}`), two.client.delete(`/api/users/${one.id}`)]);
      // The second is refused: 409 when it is checked after the first gave up its roles, or 403 when
      // its own administrator role was already gone when it was authorized.
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join(' ')).toEqual([204, expect.toBeOneOf([403, 409])]);
      const survivor = answers[0]!.status === 204 ? one : two;
      const kept = await instance.ctx.db.selectFrom('users').select(['usedBytes', 'fileCount']).where('id', '=', survivor.id).executeTakeFirstOrThrow();
      expect([Number(kept.fileCount), Number(kept.usedBytes)]).toEqual([300, 1500]);
      expect((await survivor.client.get('/api/files')).body.pagination.total).toBe(300);
      // It is still an administrator.
      expect((await survivor.client.get('/api/users')).status).toBe(200);
    } finally {
      await instance.close();
    }
  });

  it('deleting an account ends its sessions', async () => {
    const member = await createMember();
    expect((await member.client.get('/api/auth/me')).status).toBe(200);
    expect((await admin.delete(`/api/users/${member.id}`)).status).toBe(204);
    expect((await member.client.get('/api/auth/me')).status).toBe(401);
  });
});

describe('roles', () => {
  it('has the two built-in roles with the contract permissions', async () => {
    const everyone = await roleBySystemKey('everyone');
    expect(everyone.name).toBe('Everyone');
    expect([...everyone.permissions].sort()).toEqual(
      ['files.read', 'files.upload', 'files.update', 'files.delete', 'files.share', 'folders.manage', 'tags.manage', 'uploadProfiles.manage', 'links.read', 'links.create', 'links.delete', 'tokens.manage', 'webhooks.manage', 'profile.update'].sort(),
    );
    const administrator = await roleBySystemKey('administrator');
    expect(administrator).toMatchObject({ name: 'Administrator', permissions: ['administrator'] });
  });

  it('are created, assigned, and take effect on the next request', async () => {
    const member = await createMember();
    expect((await member.client.get('/api/users')).status).toBe(403);

    const created = await admin.post('/api/roles', { name: 'Moderators', permissions: ['users.manage'] });
    expect(created.status).toBe(201);
    const role = created.body.data.role;
    expect(role).toMatchObject({ name: 'Moderators', permissions: ['users.manage'], systemKey: null });

    await admin.patch(`/api/users/${member.id}`, { roleIds: [role.id] });
    expect((await member.client.get('/api/users')).status).toBe(200);

    await admin.patch(`/api/roles/${role.id}`, { permissions: ['audit.read'] });
    expect((await member.client.get('/api/users')).status).toBe(403);

    await admin.patch(`/api/roles/${role.id}`, { name: 'Helpers', permissions: ['users.manage'] });
    expect((await member.client.get('/api/users')).status).toBe(200);
    expect((await admin.delete(`/api/roles/${role.id}`)).status).toBe(204);
    expect((await member.client.get('/api/users')).status).toBe(403);
    expect((await admin.delete(`/api/roles/${role.id}`)).status).toBe(404);
  });

  it("lists an account's roles in the role list's order", async () => {
    const made: string[] = [];
    for (const name of ['role 10', 'Zeta role', 'alpha role', 'role 2', 'Émigré role']) {
      const created = await admin.post('/api/roles', { name, permissions: ['audit.read'] });
      expect(created.status, created.text).toBe(201);
      made.push(created.body.data.role.id as string);
    }
    const adminRole = (await roleBySystemKey('administrator')).id as string;
    const member = await createMember([...made, adminRole]);
    const order = (await admin.get('/api/roles')).body.data.roles.map((r: { id: string }) => r.id).filter((id: string) => [...made, adminRole].includes(id));
    const user = (await admin.patch(`/api/users/${member.id}`, { name: 'Many Roles' })).body.data.user;
    expect(user.roleIds).toEqual(order);
    expect(user.roles.map((r: { name: string }) => r.name)).toEqual(['Administrator', 'alpha role', 'Émigré role', 'role 2', 'role 10', 'Zeta role']);
    const listed = (await admin.get('/api/users')).body.data.users.find((u: { id: string }) => u.id === member.id);
    expect(listed.roleIds).toEqual(order);
    // The account's own view lists Everyone too, in the same order.
    const everyoneRoleId = (await roleBySystemKey('everyone')).id as string;
    const all = (await admin.get('/api/roles')).body.data.roles.map((r: { id: string }) => r.id).filter((id: string) => [...made, adminRole, everyoneRoleId].includes(id));
    const me = (await member.client.get('/api/auth/me')).body.data.user;
    expect(me.roles.map((r: { id: string }) => r.id)).toEqual(all);
    for (const id of made) expect((await admin.delete(`/api/roles/${id}`)).status).toBe(204);
  });

  it('applies an edit of the Everyone role to every account at once', async () => {
    const member = await createMember();
    const everyone = await roleBySystemKey('everyone');
    const before = (await member.client.get('/api/auth/me')).body.data.user.permissions;
    expect(before).toContain('links.create');
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p: string) => p !== 'links.create') });
    expect((await member.client.get('/api/auth/me')).body.data.user.permissions).not.toContain('links.create');
    await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    expect((await member.client.get('/api/auth/me')).body.data.user.permissions).toContain('links.create');
  });

  it('protects built-in roles from deletion and validates permissions', async () => {
    const everyone = await roleBySystemKey('everyone');
    const administrator = await roleBySystemKey('administrator');
    expect((await admin.delete(`/api/roles/${everyone.id}`)).status).toBe(400);
    expect((await admin.delete(`/api/roles/${administrator.id}`)).status).toBe(400);
    const bad = await admin.post('/api/roles', { name: 'Bad', permissions: ['files.fly'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^body\.permissions\.0: /);
    expect((await admin.post('/api/roles', { name: 'Everyone', permissions: [] })).status).toBe(409);
  });

  it('keeps role names apart however they are written: no second "administrator" beside Administrator', async () => {
    for (const name of ['administrator', 'EVERYONE', 'eVeRyOnE']) {
      const decoy = await admin.post('/api/roles', { name, permissions: [] });
      expect([decoy.status, decoy.body.error], name).toEqual([409, 'A role with this name already exists']);
    }
    const helpers = await admin.post('/api/roles', { name: 'Helpers', permissions: [] });
    expect(helpers.status).toBe(201);
    const id = helpers.body.data.role.id as string;
    expect((await admin.patch(`/api/roles/${id}`, { name: 'ADMINISTRATOR' })).status).toBe(409);
    // Its own name in other letters is still its own.
    expect((await admin.patch(`/api/roles/${id}`, { name: 'helpers' })).status).toBe(200);
    expect((await admin.delete(`/api/roles/${id}`)).status).toBe(204);
  });

  it('never lets an account grant a permission it does not hold', async () => {
    const managers = (await admin.post('/api/roles', { name: 'User managers', permissions: ['users.manage', 'roles.manage'] })).body.data.role;
    const manager = await createMember([managers.id]);
    const escalate = await manager.client.post('/api/roles', { name: 'Sneaky', permissions: ['administrator'] });
    expect(escalate.status).toBe(403);
    const administrator = await roleBySystemKey('administrator');
    const selfPromote = await manager.client.patch(`/api/users/${manager.id}`, { roleIds: [managers.id, administrator.id] });
    expect(selfPromote.status).toBe(403);
    const fine = await manager.client.post('/api/roles', { name: 'Readers', permissions: ['users.manage'] });
    expect(fine.status).toBe(201);
  });
});

describe('invites', () => {
  it('are created, listed and withdrawn with users.manage', async () => {
    const created = await admin.post('/api/invites', { expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    expect(created.status).toBe(201);
    const list = await admin.get('/api/invites');
    expect(list.body.data.invites.map((i: { code: string }) => i.code)).toContain(created.body.data.code);
    expect((await admin.delete(`/api/invites/${created.body.data.id}`)).status).toBe(204);
    const withdrawn = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail(), password: 'long enough pw', inviteCode: created.body.data.code });
    expect(withdrawn.status).toBe(400);
    expect((await admin.post('/api/invites', { expiresAt: '2001-01-01T00:00:00Z' })).status).toBe(400);
    const member = await createMember();
    expect((await member.client.post('/api/invites')).status).toBe(403);
  });

  it('keep the note they were made with, to tell open codes apart; a blank one is none', async () => {
    const noted = await admin.post('/api/invites', { note: '  For Alice (sent by email)  ' });
    expect(noted.status, noted.text).toBe(201);
    expect(noted.body.data.note).toBe('For Alice (sent by email)');
    const blank = await admin.post('/api/invites', { note: ' \u200b ' });
    expect(blank.body.data.note).toBeNull();
    expect((await admin.post('/api/invites')).body.data.note).toBeNull();
    const listed = (await admin.get('/api/invites')).body.data.invites as Array<{ id: string; note: string | null }>;
    expect(listed.find((i) => i.id === noted.body.data.id)?.note).toBe('For Alice (sent by email)');
    expect(listed.find((i) => i.id === blank.body.data.id)?.note).toBeNull();
    for (const [note, problem] of [['n'.repeat(201), 'must be at most 200 characters'], ['line\nbreak', 'must not contain control characters'], [42, 'expected string, received number']] as const) {
      const refused = await admin.post('/api/invites', { note });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/^body\.note: /);
      if (typeof note === 'string') expect(refused.body.error).toBe(`body.note: ${problem}`);
    }
  });

  it('say who made each and who registered with it; the unused ones of a deleted account stop working', async () => {
    const moderators = await admin.post('/api/roles', { name: `Moderators ${uniqueEmail('m')}`, permissions: ['users.manage'] });
    const moderator = await createMember([moderators.body.data.role.id]);
    const used = (await moderator.client.post('/api/invites')).body.data as { id: string; code: string; createdBy: { id: string; email: string } };
    const unused = (await moderator.client.post('/api/invites')).body.data as { id: string; code: string };
    expect(used.createdBy).toEqual({ id: moderator.id, email: moderator.email });
    const inviteeEmail = uniqueEmail('invitee');
    const registered = await new Client(server.baseUrl).post('/api/auth/register', { email: inviteeEmail, password: 'long enough pw', inviteCode: used.code });
    expect(registered.status).toBe(201);
    const listed = async () => (await admin.get('/api/invites')).body.data.invites as Array<{ id: string; createdBy: { id: string; email: string } | null; usedBy: { id: string; email: string } | null }>;
    const before = await listed();
    expect(before.find((i) => i.id === used.id)).toMatchObject({ createdBy: { id: moderator.id, email: moderator.email }, usedBy: { id: registered.body.data.user.id, email: inviteeEmail } });
    expect(before.find((i) => i.id === unused.id)).toMatchObject({ createdBy: { id: moderator.id, email: moderator.email }, usedBy: null });

    expect((await admin.delete(`/api/users/${moderator.id}`)).status).toBe(204);
    const after = await listed();
    // The used one stays as the record of how the account came in; the unused one is gone, and its code with it.
    expect(after.find((i) => i.id === used.id)).toMatchObject({ createdBy: null, usedBy: { email: inviteeEmail } });
    expect(after.find((i) => i.id === unused.id)).toBeUndefined();
    const late = await new Client(server.baseUrl).post('/api/auth/register', { email: uniqueEmail('late'), password: 'long enough pw', inviteCode: unused.code });
    expect([late.status, late.body.error]).toEqual([400, 'inviteCode: the invite code is unknown, used or expired']);
  });
});
