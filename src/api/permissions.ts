import { z } from 'zod';

/** The permission vocabulary (contract §2), grouped as the administration screen shows it. */
export const permissionGroups = {
  files: ['files.read', 'files.upload', 'files.update', 'files.delete', 'files.share'],
  organisation: ['folders.manage', 'tags.manage', 'uploadProfiles.manage'],
  links: ['links.read', 'links.create', 'links.delete'],
  account: ['tokens.manage', 'webhooks.manage', 'profile.update'],
  instance: ['quotas.bypass', 'audit.read', 'users.manage', 'roles.manage', 'settings.manage', 'administrator'],
} as const;

export type Permission = (typeof permissionGroups)[keyof typeof permissionGroups][number];

export const allPermissions: readonly Permission[] = Object.values(permissionGroups).flat();

export function isPermission(value: string): value is Permission {
  return (allPermissions as readonly string[]).includes(value);
}

export const permissionSchema = z.enum(allPermissions as [Permission, ...Permission[]]).meta({ id: 'Permission', description: 'A permission of the vocabulary (contract §2)' });
