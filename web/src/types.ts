/** Shapes of the Hoard HTTP API the app uses (contract §3–§4, named-token-api.md). */

export type Permission =
  | 'files.read' | 'files.upload' | 'files.update' | 'files.delete' | 'files.share'
  | 'folders.manage' | 'tags.manage' | 'uploadProfiles.manage'
  | 'links.read' | 'links.create' | 'links.delete'
  | 'tokens.manage' | 'webhooks.manage' | 'profile.update'
  | 'quotas.bypass' | 'audit.read' | 'users.manage' | 'roles.manage' | 'settings.manage' | 'administrator';

export const permissionGroups: Record<string, Permission[]> = {
  Files: ['files.read', 'files.upload', 'files.update', 'files.delete', 'files.share'],
  Organisation: ['folders.manage', 'tags.manage', 'uploadProfiles.manage'],
  Links: ['links.read', 'links.create', 'links.delete'],
  Account: ['tokens.manage', 'webhooks.manage', 'profile.update'],
  Instance: ['quotas.bypass', 'audit.read', 'users.manage', 'roles.manage', 'settings.manage', 'administrator'],
};

export interface RoleSummary { id: string; name: string; systemKey: string | null }

export interface Me {
  id: string;
  email: string;
  name: string;
  urlId: string;
  emailVerified: boolean;
  permissions: Permission[];
  roles: RoleSummary[];
}

export type Registration = 'open' | 'closed' | 'invite';
export interface SetupStatus { needsAdministrator: boolean; registration: Registration }

export interface Tag { id: string; name: string; createdAt?: string }

export interface FileRecord {
  id: string;
  name: string;
  urlPath: string;
  mimeType: string;
  /** MiB */
  size: number;
  uploadedAt: string;
  visibility: 'PUBLIC' | 'PRIVATE';
  views: number;
  downloads: number;
  folderId: string | null;
  user: { urlId: string };
  tags: Tag[];
  hasPassword: boolean;
  expiresAt: string | null;
}

export interface Pagination { total: number; pageCount: number; page: number; limit: number; offset?: number }

export interface TimelineBucket { key: string; from: string; to: string; count: number }
export interface Timeline {
  total: number;
  snapshot: string;
  groupBy: 'none' | 'month' | 'week' | 'year';
  timezone: string;
  order: 'newest' | 'oldest';
  buckets: TimelineBucket[];
}

export interface UploadLinks {
  url: string;
  pageUrl: string;
  rawUrl: string;
  downloadUrl: string;
  copyText: string;
  name: string;
  size: number;
  type: string;
}

export interface ShortLink { id: string; shortCode: string; targetUrl: string; clicks: number; createdAt: string; userId: string }

export type Scope = 'files:read' | 'files:upload' | 'urls:read' | 'urls:write';
export const allScopes: Scope[] = ['files:read', 'files:upload', 'urls:read', 'urls:write'];

export interface TokenRecord {
  id: string;
  name: string;
  scopes: Scope[];
  profileId: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
  status: 'active' | 'expired' | 'revoked';
}

export interface Webhook { id: string; name: string; url: string; enabled: boolean; createdAt: string; updatedAt: string }
export interface Delivery {
  id: string;
  eventId: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export type Expiration = 'DISABLED' | 'HOUR' | 'DAY' | 'WEEK' | 'MONTH';
export type ShareStyle = 'minimal' | 'framed' | 'delivery';
export interface ProfileOptions {
  visibility?: 'PUBLIC' | 'PRIVATE';
  expiration?: Expiration;
  expiryAction?: 'DELETE' | 'SET_PRIVATE';
  randomizeFileUrls?: boolean;
  shareStyle?: ShareStyle;
  tagIds?: string[];
}
export interface UploadProfile { id: string; name: string; options: ProfileOptions; createdAt: string; updatedAt: string; isDefault: boolean }
export interface Folder { id: string; name: string; parentId: string | null; createdAt: string; updatedAt: string }

export interface Account {
  id: string;
  email: string;
  name: string;
  urlId: string;
  defaultProfileId: string | null;
  uploadDefaults: ProfileOptions;
  usedBytes: number;
  quotaBytes: number | null;
}

export interface AdminUser {
  id: string;
  email: string;
  name: string;
  urlId: string;
  emailVerified: boolean;
  quotaBytes: number | null;
  roles: RoleSummary[];
  roleIds: string[];
  createdAt: string;
}

export interface Role { id: string; name: string; systemKey: string | null; builtin: boolean; permissions: Permission[]; createdAt: string; updatedAt: string }

export interface InstanceSettings {
  registration: Registration;
  requireEmailVerification: boolean;
  maxUploadSizeBytes: number;
  defaultQuotaBytes: number;
}

export interface Invite { id: string; code: string; createdAt: string; expiresAt: string; usedAt: string | null }

/** A record of a token- or legacy-authorized request (GET /api/audit). */
export interface AuditRecord {
  id: string;
  at: string;
  user: { id: string; email: string };
  credential: 'token' | 'legacy';
  token: { id: string; name: string | null } | null;
  operation: string;
  route: string;
  status: number;
  ip: string | null;
}
