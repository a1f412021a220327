import type { Generated } from 'kysely';

/**
 * Row types of every table. Times are Unix epoch milliseconds (bigint) on both databases, so
 * range queries, ordering and calendar bucketing behave identically on SQLite and PostgreSQL.
 * Flags are 0/1 integers for the same reason.
 */
export interface UsersTable {
  id: string;
  email: string;
  name: string;
  passwordHash: string;
  urlId: string;
  emailVerified: number;
  quotaBytes: number | null;
  uploadToken: string | null;
  uploadTokenHash: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface RolesTable {
  id: string;
  name: string;
  systemKey: string | null;
  /** JSON array of permission names. */
  permissions: string;
  createdAt: number;
  updatedAt: number;
}

export interface UserRolesTable {
  userId: string;
  roleId: string;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the cookie secret: a leaked database row cannot be replayed as a cookie. */
  id: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  ip: string | null;
  userAgent: string | null;
}

export interface SettingsTable {
  key: string;
  /** JSON value. */
  value: string;
}

export interface InvitesTable {
  id: string;
  code: string;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedBy: string | null;
}

export interface RateLimitsTable {
  key: string;
  windowStart: number;
  count: number;
}

export interface UploadProfilesTable {
  id: string;
  userId: string;
  name: string;
  /** JSON object of upload options. */
  options: string;
  createdAt: number;
  updatedAt: number;
}

export interface ApiTokensTable {
  id: string;
  userId: string;
  name: string;
  /** JSON array of scopes. */
  scopes: string;
  profileId: string | null;
  /** SHA-256 (hex) of the secret; the secret itself is never stored. */
  secretHash: string;
  expiresAt: number | null;
  revokedAt: number | null;
  lastUsedAt: number | null;
  createdAt: number;
}

export interface AuditEventsTable {
  id: string;
  userId: string;
  tokenId: string | null;
  credential: 'token' | 'legacy';
  operation: string;
  route: string;
  status: number;
  ip: string | null;
  createdAt: number;
}

export interface Database {
  users: UsersTable;
  roles: RolesTable;
  userRoles: UserRolesTable;
  sessions: SessionsTable;
  settings: SettingsTable;
  invites: InvitesTable;
  rateLimits: RateLimitsTable;
  uploadProfiles: UploadProfilesTable;
  apiTokens: ApiTokensTable;
  auditEvents: AuditEventsTable;
}

export type { Generated };
