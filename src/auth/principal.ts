import type { PermissionSet } from './permissions.ts';
import type { RoleSummary } from './roles.ts';
import type { Scope } from './route-policy.ts';

/** An account as a request's principal carries it (the columns src/accounts/users.ts reads). */
export interface UserRow {
  id: string;
  email: string;
  name: string;
  urlId: string;
  emailVerified: number;
  quotaBytes: number | null;
  createdAt: number;
}

export interface TokenGrant {
  id: string;
  scopes: ReadonlySet<Scope>;
  /** The bound upload profile; it may since have been deleted. */
  profileId: string | null;
}

/** Who is making a request, and with what authority. */
export interface Principal {
  via: 'session' | 'token' | 'legacy';
  user: UserRow;
  /** The account's listing version when the request was authenticated (src/listing/listing-cache.ts). */
  listingVersion: number;
  permissions: PermissionSet;
  roles: RoleSummary[];
  sessionId?: string;
  /** The session's sign-in or latest password confirmation, whichever came last (RECENT_SIGN_IN_MS). */
  sessionProvedAt?: number;
  /** When this request moved the session's sliding expiry: the new expiry, for the cookie. */
  sessionRenewedUntil?: number;
  /** Only for named tokens. */
  token?: TokenGrant;
  /** Only for the legacy credential: the hash it was found by, checked again when an upload commits. */
  legacyCredentialHash?: string;
}
