import type { Client } from './client.ts';

export interface EveryoneRole {
  id: string;
  permissions: string[];
}

/** The built-in Everyone role, as the administration API shows it. */
export async function everyoneRole(admin: Client): Promise<EveryoneRole> {
  const roles = (await admin.get('/api/roles')).body.data.roles as Array<EveryoneRole & { systemKey: string | null }>;
  const role = roles.find((r) => r.systemKey === 'everyone');
  if (!role) throw new Error('no Everyone role');
  return { id: role.id, permissions: role.permissions };
}

/** Runs `work` while the Everyone role lacks `permission`, and restores the role afterwards. */
export async function withoutEveryonePermission<T>(admin: Client, everyone: EveryoneRole, permission: string, work: () => Promise<T>): Promise<T> {
  const removed = await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions.filter((p) => p !== permission) });
  if (removed.status !== 200) throw new Error(`could not remove ${permission}: ${removed.status} ${removed.text}`);
  try {
    return await work();
  } finally {
    const restored = await admin.patch(`/api/roles/${everyone.id}`, { permissions: everyone.permissions });
    if (restored.status !== 200) throw new Error(`could not restore the Everyone role: ${restored.status}`);
  }
}
