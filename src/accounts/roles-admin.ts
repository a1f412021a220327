import type { Db, Dialect } from '../db/database.ts';
import type { AlsoInTransaction } from '../db/also.ts';
import { newId } from '../db/ids.ts';
import { parsePermissions } from '../auth/roles.ts';
import { hasPermission, type Permission, type PermissionSet } from '../auth/permissions.ts';
import { assertAdministratorRemains, assertCanGrant, serializeAdministration } from './users.ts';
import { conflict, forbidden, invalid, notFound } from '../errors.ts';
import type { Role } from '../api/admin.ts';
import { rolesInOrder, sameName } from '../shared/name-order.ts';

type RoleRow = { id: string; name: string; systemKey: string | null; permissions: string; createdAt: number; updatedAt: number };

function toView(row: RoleRow): Role {
  return {
    id: row.id,
    name: row.name,
    systemKey: row.systemKey,
    builtin: row.systemKey !== null,
    permissions: parsePermissions(row.permissions),
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString(),
  };
}

export async function listRoles(db: Db): Promise<Role[]> {
  const rows = await db.selectFrom('roles').selectAll().execute();
  return rows.map(toView).sort(rolesInOrder);
}

/**
 * Role names differ in more than case, as tag names do: a role "administrator" beside the built-in
 * Administrator would be a decoy an administrator could assign by mistake.
 */
async function assertNameFree(db: Db, name: string, exceptId?: string): Promise<void> {
  const roles = await db.selectFrom('roles').select(['id', 'name']).execute();
  if (roles.some((role) => role.id !== exceptId && sameName(role.name, name))) throw conflict('A role with this name already exists');
}

export async function createRole(db: Db, actor: PermissionSet, input: { name: string; permissions: Permission[] }, also?: AlsoInTransaction<Role>): Promise<Role> {
  assertCanGrant(actor, input.permissions);
  const name = input.name.trim();
  await assertNameFree(db, name);
  const now = Date.now();
  const row = { id: newId(), name, systemKey: null, permissions: JSON.stringify([...new Set(input.permissions)].sort()), createdAt: now, updatedAt: now };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('roles').values(row).execute();
    if (also) await also(trx, toView(row));
  });
  return toView(row);
}

export async function updateRole(
  db: Db,
  dialect: Dialect,
  actor: PermissionSet,
  id: string,
  changes: { name?: string | undefined; permissions?: Permission[] | undefined },
  also?: AlsoInTransaction<{ before: Role; after: Role }>,
): Promise<Role> {
  const row = await db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Role not found');
  const set: Partial<RoleRow> = { updatedAt: Date.now() };
  if (changes.name !== undefined && changes.name.trim() !== row.name) {
    // A new name changes what every holder's role reads as: the actor must hold what it grants, as
    // for deleting it. Otherwise the built-in Administrator could be renamed to make room for a
    // decoy of that name (docs/decisions.md, "Roles").
    assertHoldsAll(actor, row.permissions, 'rename');
    set.name = changes.name.trim();
    await assertNameFree(db, set.name, id);
  }
  if (changes.permissions !== undefined) {
    const before = new Set(parsePermissions(row.permissions));
    const after = new Set(changes.permissions);
    assertCanGrant(actor, [...after].filter((p) => !before.has(p)), [...before].filter((p) => !after.has(p)));
    set.permissions = JSON.stringify([...after].sort());
  }
  await db.transaction().execute(async (trx) => {
    if (set.permissions !== undefined) await serializeAdministration(trx, dialect);
    // What this change replaces, for `also`: another change may have come since the read above.
    const replaced = also ? ((await trx.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst()) ?? row) : row;
    await trx.updateTable('roles').set(set).where('id', '=', id).execute();
    if (set.permissions !== undefined) await assertAdministratorRemains(trx);
    if (also) await also(trx, { before: toView(replaced), after: toView({ ...replaced, ...set }) });
  });
  return toView({ ...row, ...set });
}

/**
 * Deleting a role takes its permissions away from its holders: the actor must hold them all.
 * Returns the role as it was.
 */
export async function deleteRole(db: Db, dialect: Dialect, actor: PermissionSet, id: string, also?: AlsoInTransaction<Role>): Promise<Role> {
  const row = await db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Role not found');
  if (row.systemKey !== null) throw invalid('Built-in roles cannot be deleted');
  assertHoldsAll(actor, row.permissions, 'delete');
  await db.transaction().execute(async (trx) => {
    await serializeAdministration(trx, dialect);
    await trx.deleteFrom('roles').where('id', '=', id).execute();
    await assertAdministratorRemains(trx);
    if (also) await also(trx, toView(row));
  });
  return toView(row);
}

/** Renaming or deleting a role: the actor must hold every permission it grants. */
function assertHoldsAll(actor: PermissionSet, permissions: string, action: 'rename' | 'delete'): void {
  for (const permission of parsePermissions(permissions)) {
    if (!hasPermission(actor, permission)) throw forbidden(`You cannot ${action} a role granting the permission ${permission}, which you do not have`);
  }
}
