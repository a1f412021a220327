/**
 * The permission vocabulary (contract §2) and the named-token scopes (spec, Authentication 3) as
 * plain values, without zod: the web app imports them at run time (`@api/vocabulary.ts`) and must
 * not carry the schema library into its bundle; src/api/permissions.ts and scopes.ts build their
 * schemas on them.
 */

/** The permissions, grouped as the administration screen shows them. */
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

export const scopes = ['files:read', 'files:upload', 'urls:read', 'urls:write'] as const;
export type Scope = (typeof scopes)[number];

/**
 * Archive limits (contract §9) the web app shows before it asks: files one new archive may hold,
 * and entries a manifest lists.
 */
export const archiveLimits = { files: 500, manifestEntries: 10_000 } as const;

/**
 * A file's MIME type is at most 255 characters (RFC 6838: 127 for the type and the subtype each):
 * what an upload may declare and what the listing's `types` filter takes.
 */
export const MIME_TYPE_MAX_LENGTH = 255;
