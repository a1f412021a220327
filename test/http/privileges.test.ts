/**
 * Nobody takes away what they do not hold: an account managing users and roles, but without
 * `administrator`, cannot change or delete an account holding more than it does, nor delete a role
 * granting what it lacks. And the last account holding `administrator` cannot lose it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { Client, signUp, uniqueEmail } from '../support/client.ts';
import { uploadFile } from '../support/uploads.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof signUp>>;

beforeAll(async () => {
  server = await startTestServer();
  admin = await signUp(server.baseUrl);
});
afterAll(() => server.close());

async function createRole(name: string, permissions: string[]): Promise<string> {
  const created = await admin.post('/api/roles', { name, permissions });
  expect(created.status).toBe(201);
  return created.body.data.role.id;
}

async function createAccount(roleIds: string[] = []) {
  const email = uniqueEmail('account');
  const created = await admin.post('/api/users', { email, password: 'account password', roleIds });
  expect(created.status).toBe(201);
  const client = new Client(server.baseUrl);
  expect((await client.post('/api/auth/login', { email, password: 'account password' })).status).toBe(200);
  return { id: created.body.data.user.id as string, client };
}

async function adminRoleId(): Promise<string> {
  const roles = (await admin.get('/api/roles')).body.data.roles as Array<{ id: string; systemKey: string | null }>;
  return roles.find((r) => r.systemKey === 'administrator')!.id;
}

const userOf = async (id: string) => ((await admin.get('/api/users')).body.data.users as Array<{ id: string }>).find((u) => u.id === id);

describe('a manager without administrator', () => {
  let manager: Awaited<ReturnType<typeof createAccount>>;
  let auditRole: string;

  beforeAll(async () => {
    manager = await createAccount([await createRole('Managers', ['users.manage', 'roles.manage'])]);
    auditRole = await createRole('Auditors', ['audit.read']);
  });

  it('cannot delete an administrator', async () => {
    const response = await manager.client.delete(`/api/users/${admin.userId}`);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: 'You cannot change an account holding the permission administrator, which you do not have' });
    expect(await userOf(admin.userId)).toBeDefined();
  });

  it("cannot change an administrator's name, verification or quota", async () => {
    const before = await userOf(admin.userId);
    for (const change of [{ name: 'Demoted' }, { emailVerified: false }, { quotaBytes: 1 }]) {
      const response = await manager.client.patch(`/api/users/${admin.userId}`, change);
      expect(response.status).toBe(403);
    }
    expect(await userOf(admin.userId)).toEqual(before);
  });

  it('cannot change or delete an account holding a permission it lacks', async () => {
    const auditor = await createAccount([auditRole]);
    expect((await manager.client.patch(`/api/users/${auditor.id}`, { name: 'Renamed' })).status).toBe(403);
    expect((await manager.client.delete(`/api/users/${auditor.id}`)).status).toBe(403);
    expect(await userOf(auditor.id)).toBeDefined();
  });

  it('is told it cannot take away a permission it lacks, not that it cannot grant it', async () => {
    const response = await manager.client.patch(`/api/roles/${auditRole}`, { permissions: [] });
    expect([response.status, response.body.error]).toEqual([403, 'You cannot take away the permission audit.read, which you do not have']);
    const granting = await manager.client.post('/api/roles', { name: 'Would-be auditors', permissions: ['audit.read'] });
    expect([granting.status, granting.body.error]).toEqual([403, 'You cannot grant the permission audit.read, which you do not have']);
  });

  it('cannot delete a role granting a permission it lacks', async () => {
    const response = await manager.client.delete(`/api/roles/${auditRole}`);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: 'You cannot delete a role granting the permission audit.read, which you do not have' });
    const roles = (await admin.get('/api/roles')).body.data.roles as Array<{ id: string }>;
    expect(roles.map((r) => r.id)).toContain(auditRole);
  });

  it('cannot rename a role granting a permission it lacks: no built-in Administrator renamed to make room for a decoy', async () => {
    const administrator = await adminRoleId();
    const renamed = await manager.client.patch(`/api/roles/${administrator}`, { name: 'Guests' });
    expect([renamed.status, renamed.body.error]).toEqual([403, 'You cannot rename a role granting the permission administrator, which you do not have']);
    expect((await manager.client.patch(`/api/roles/${auditRole}`, { name: 'Readers' })).status).toBe(403);
    const roles = (await admin.get('/api/roles')).body.data.roles as Array<{ id: string; name: string }>;
    expect(roles.find((r) => r.id === administrator)!.name).toBe('Administrator');
    expect(roles.find((r) => r.id === auditRole)!.name).toBe('Auditors');
    // A role within its permissions it renames.
    const own = await createRole('Uploaders', ['files.upload']);
    expect((await manager.client.patch(`/api/roles/${own}`, { name: 'Senders' })).status).toBe(200);
  });

  it('cannot change its own quota without quotas.bypass: a quota is set on it, not by it', async () => {
    // A quota of 0 is no quota: lifting its own would be quotas.bypass, which it does not hold.
    await admin.patch(`/api/users/${manager.id}`, { quotaBytes: 5000 });
    for (const quotaBytes of [0, null, 10_000]) {
      const response = await manager.client.patch(`/api/users/${manager.id}`, { quotaBytes });
      expect([response.status, response.body.error]).toEqual([403, 'You cannot change your own quota without the permission quotas.bypass']);
    }
    expect(await userOf(manager.id)).toMatchObject({ quotaBytes: 5000 });
    // Its name, though, it may change here as in its own settings.
    expect((await manager.client.patch(`/api/users/${manager.id}`, { name: 'Manager' })).status).toBe(200);
    // An administrator changes its own quota as any other.
    expect((await admin.patch(`/api/users/${admin.userId}`, { quotaBytes: 0 })).status).toBe(200);
  });

  it("cannot lift another account's quota to none, or above the default, without quotas.bypass: it would grant the exemption it lacks", async () => {
    // Otherwise it could make an account of its own choosing (it sets the password) and give it
    // unlimited storage.
    await admin.patch('/api/settings', { defaultQuotaBytes: 100 });
    try {
      const puppet = await createAccount();
      const lifted = await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: 0 });
      expect([lifted.status, lifted.body.error]).toEqual([403, 'You cannot remove the quota of an account without the permission quotas.bypass']);
      expect(await userOf(puppet.id)).toMatchObject({ quotaBytes: null });
      const upload = await uploadFile(puppet.client, 'big.bin', new Uint8Array(500));
      expect(upload.status).toBe(413);
      // Nor raise it above the instance default: a limit of 2^53 - 1 bytes lifts it as surely as 0 does.
      for (const quotaBytes of [101, 10_000, Number.MAX_SAFE_INTEGER]) {
        const raised = await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes });
        expect([raised.status, raised.body.error], String(quotaBytes)).toEqual([403, 'You cannot set a quota above the instance default (100 bytes) without the permission quotas.bypass']);
      }
      expect(await userOf(puppet.id)).toMatchObject({ quotaBytes: null });
      // A quota up to the default, and back to the instance default, it may set.
      expect((await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: 100 })).status).toBe(200);
      expect((await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: 40 })).status).toBe(200);
      expect((await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: null })).status).toBe(200);
      // An administrator may lift it, or raise it; a manager may then lower it, to the default or
      // to any limit below the larger one (or none) the administrator set, but not raise it again.
      expect((await admin.patch(`/api/users/${puppet.id}`, { quotaBytes: 0 })).status).toBe(200);
      expect((await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: 20_000 })).status).toBe(200);
      expect((await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: 5_000 })).status).toBe(200);
      expect((await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: 6_000 })).status).toBe(403);
      expect((await manager.client.patch(`/api/users/${puppet.id}`, { quotaBytes: 100 })).status).toBe(200);
      expect(await userOf(puppet.id)).toMatchObject({ quotaBytes: 100 });
    } finally {
      await admin.patch('/api/settings', { defaultQuotaBytes: 0 });
    }
  });

  it('with settings.manage but not quotas.bypass, lowers the default quota but neither raises nor removes it', async () => {
    const settingsManager = await createAccount([await createRole('Settings managers', ['settings.manage'])]);
    await admin.patch('/api/settings', { defaultQuotaBytes: 1000 });
    try {
      for (const defaultQuotaBytes of [0, 1001, Number.MAX_SAFE_INTEGER]) {
        const refused = await settingsManager.client.patch('/api/settings', { defaultQuotaBytes });
        expect([refused.status, refused.body.error], String(defaultQuotaBytes)).toEqual([403, 'You cannot raise or remove the default quota without the permission quotas.bypass']);
      }
      expect((await admin.get('/api/settings')).body.data.defaultQuotaBytes).toBe(1000);
      // The same value again (a form sending what was not edited), or less, it may.
      expect((await settingsManager.client.patch('/api/settings', { defaultQuotaBytes: 1000, registration: 'closed' })).status).toBe(200);
      expect((await settingsManager.client.patch('/api/settings', { defaultQuotaBytes: 500 })).status).toBe(200);
      // Where there is no default quota, any limit restricts, and sending none again changes nothing.
      await admin.patch('/api/settings', { defaultQuotaBytes: 0 });
      expect((await settingsManager.client.patch('/api/settings', { defaultQuotaBytes: 0, registration: 'closed' })).status).toBe(200);
      expect((await settingsManager.client.patch('/api/settings', { defaultQuotaBytes: 5000 })).status).toBe(200);
    } finally {
      await admin.patch('/api/settings', { defaultQuotaBytes: 0 });
    }
  });

  it('still manages ordinary accounts and roles within its own permissions', async () => {
    const ordinary = await createAccount();
    const changed = await manager.client.patch(`/api/users/${ordinary.id}`, { name: 'Renamed', emailVerified: false, quotaBytes: 1000 });
    expect(changed.status).toBe(200);
    expect(changed.body.data.user).toMatchObject({ name: 'Renamed', emailVerified: false, quotaBytes: 1000 });
    const ownRole = await manager.client.post('/api/roles', { name: 'Helpers', permissions: ['users.manage'] });
    expect(ownRole.status).toBe(201);
    expect((await manager.client.patch(`/api/users/${ordinary.id}`, { roleIds: [ownRole.body.data.role.id] })).status).toBe(200);
    expect((await manager.client.delete(`/api/roles/${ownRole.body.data.role.id}`)).status).toBe(204);
    expect((await manager.client.delete(`/api/users/${ordinary.id}`)).status).toBe(204);
    expect(await userOf(ordinary.id)).toBeUndefined();
  });
});

describe('the last administrator', () => {
  const LAST = { success: false, error: 'This would remove the last Administrator: at least one account must keep the administrator permission' };

  it('cannot lose the Administrator role, nor the role its administrator permission', async () => {
    const role = await adminRoleId();
    const demoted = await admin.patch(`/api/users/${admin.userId}`, { roleIds: [] });
    expect(demoted.status).toBe(409);
    expect(demoted.body).toEqual(LAST);
    const emptied = await admin.patch(`/api/roles/${role}`, { permissions: ['users.manage'] });
    expect(emptied.status).toBe(409);
    expect(emptied.body).toEqual(LAST);
    expect((await admin.get('/api/auth/me')).body.data.user.permissions).toContain('administrator');
    // Renaming the role changes nobody's permissions.
    expect((await admin.patch(`/api/roles/${role}`, { name: 'Administrators' })).status).toBe(200);
    expect((await admin.patch(`/api/roles/${role}`, { name: 'Administrator' })).status).toBe(200);
  });

  it('with two administrators, one can be demoted or deleted, but not the last one', async () => {
    const role = await adminRoleId();
    const secondRole = await createRole('Second administrators', ['administrator']);
    const second = await createAccount([secondRole]);

    // Two administrators: the second takes the Administrator role away from the first.
    expect((await second.client.patch(`/api/users/${admin.userId}`, { roleIds: [] })).status).toBe(200);
    // Now the second is the last: neither its role nor that role's permission can go.
    expect((await second.client.delete(`/api/roles/${secondRole}`)).body).toEqual(LAST);
    expect((await second.client.patch(`/api/roles/${secondRole}`, { permissions: ['users.manage'] })).body).toEqual(LAST);
    expect((await second.client.patch(`/api/users/${second.id}`, { roleIds: [] })).body).toEqual(LAST);

    // Back to two, and one is deleted.
    expect((await second.client.patch(`/api/users/${admin.userId}`, { roleIds: [role] })).status).toBe(200);
    expect((await admin.delete(`/api/users/${second.id}`)).status).toBe(204);
    expect((await admin.delete(`/api/roles/${secondRole}`)).status).toBe(204);
    expect((await admin.get('/api/auth/me')).body.data.user.permissions).toContain('administrator');
  });

  it('survives two administrators demoting each other at the same time', async () => {
    const role = await adminRoleId();
    const secondRole = await createRole('Rival administrators', ['administrator']);
    const second = await createAccount([secondRole]);
    const answers = await Promise.all([
      admin.patch(`/api/users/${second.id}`, { roleIds: [] }),
      second.client.patch(`/api/users/${admin.userId}`, { roleIds: [] }),
    ]);
    // The loser is refused as the last administrator (409), or, when the winner committed before
    // the loser's request was authorised, as an account that no longer manages users (403).
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const holders = ((await (answers[0]!.status === 200 ? admin : second.client).get('/api/users')).body.data.users as Array<{ roleIds: string[] }>).filter(
      (u) => u.roleIds.includes(role) || u.roleIds.includes(secondRole),
    );
    expect(holders).toHaveLength(1);
    // Put the first administrator back in charge and tidy up.
    if (answers[1]!.status === 200) expect((await second.client.patch(`/api/users/${admin.userId}`, { roleIds: [role] })).status).toBe(200);
    expect((await admin.delete(`/api/users/${second.id}`)).status).toBe(204);
    expect((await admin.delete(`/api/roles/${secondRole}`)).status).toBe(204);
  });
});
