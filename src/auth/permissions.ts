import { permissionGroups, type Permission } from '../api/permissions.ts';

// The vocabulary is part of the API's shapes (src/api/), which the web app shares.
export { allPermissions, isPermission, permissionGroups, type Permission } from '../api/permissions.ts';

/** The built-in roles. Both can be edited; neither can be deleted. */
export const builtinRoles = [
  {
    systemKey: 'everyone',
    name: 'Everyone',
    permissions: [...permissionGroups.files, ...permissionGroups.organisation, ...permissionGroups.links, ...permissionGroups.account] as Permission[],
  },
  { systemKey: 'administrator', name: 'Administrator', permissions: ['administrator'] as Permission[] },
] as const;

export type PermissionSet = ReadonlySet<Permission>;

/** `administrator` satisfies every permission check. */
export function hasPermission(permissions: PermissionSet, needed: Permission): boolean {
  return permissions.has('administrator') || permissions.has(needed);
}
