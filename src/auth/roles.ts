import { rolesInOrder } from '../shared/name-order.ts';
import type { Db } from '../db/database.ts';
import type { Executor } from '../db/account-scope.ts';
import { builtinRoles, isPermission, type Permission, type PermissionSet } from './permissions.ts';
import { newId } from '../db/ids.ts';
import type { RoleSummary } from '../api/accounts.ts';

export type { RoleSummary };

/**
 * Effective permissions: the Everyone role plus the account's assigned roles, read fresh on every
 * request so a role change applies to the account's next request.
 */
export async function loadAccess(db: Executor, userId: string): Promise<{ permissions: PermissionSet; roles: RoleSummary[] }> {
  const rows = await db
    .selectFrom('roles')
    .leftJoin('userRoles', (join) => join.onRef('userRoles.roleId', '=', 'roles.id').on('userRoles.userId', '=', userId))
    .select(['roles.id', 'roles.name', 'roles.systemKey', 'roles.permissions'])
    .where((eb) => eb.or([eb('roles.systemKey', '=', 'everyone'), eb('userRoles.userId', 'is not', null)]))
    .execute();
  return foldRoles(rows);
}

/** Permissions and role summaries from the rows of the roles that apply to an account. */
export function foldRoles(rows: Array<{ id: string; name: string; systemKey: string | null; permissions: string }>): { permissions: PermissionSet; roles: RoleSummary[] } {
  const permissions = new Set<Permission>();
  for (const row of rows) for (const p of parsePermissions(row.permissions)) permissions.add(p);
  // In the role list's order (built-in first, then by name), not the database's row order.
  return { permissions, roles: rows.map(({ id, name, systemKey }) => ({ id, name, systemKey })).sort(rolesInOrder) };
}

export function parsePermissions(json: string): Permission[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((p): p is Permission => typeof p === 'string' && isPermission(p)) : [];
}

/** Creates the built-in roles when missing; an edited built-in role is left as the administrator made it. */
export async function ensureBuiltinRoles(db: Db): Promise<void> {
  const now = Date.now();
  // Read first: a start with the roles in place writes nothing, so it does not wait for the write
  // lock another program may hold (a worker that cannot start at the first start stops them all).
  const present = new Set((await db.selectFrom('roles').select('systemKey').where('systemKey', 'is not', null).execute()).map((r) => r.systemKey));
  for (const role of builtinRoles.filter((r) => !present.has(r.systemKey))) {
    await db
      .insertInto('roles')
      .values({ id: newId(), name: role.name, systemKey: role.systemKey, permissions: JSON.stringify(role.permissions), createdAt: now, updatedAt: now })
      .onConflict((oc) => oc.column('systemKey').doNothing())
      .execute();
  }
}

export async function roleIdBySystemKey(db: Executor, systemKey: string): Promise<string> {
  const row = await db.selectFrom('roles').select('id').where('systemKey', '=', systemKey).executeTakeFirstOrThrow();
  return row.id;
}
