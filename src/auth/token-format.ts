import { scopes as allScopes, type Scope } from './route-policy.ts';
import type { TokenStatus } from '../api/tokens.ts';

// What authenticating a request needs to know of named API tokens, below both authorize.ts and
// src/tokens/ (which creates, lists, rotates and revokes them).

export const SECRET_PREFIX = 'svc_';

// The states are part of the API's shapes (src/api/), which the web app shares.
export type { TokenStatus } from '../api/tokens.ts';

export function tokenStatus(row: { expiresAt: number | null; revokedAt: number | null }, now = Date.now()): TokenStatus {
  if (row.revokedAt !== null) return 'revoked';
  if (row.expiresAt !== null && row.expiresAt <= now) return 'expired';
  return 'active';
}

/** The stored scopes JSON, keeping only scopes the route policy knows. */
export function parseScopes(json: string): Scope[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((s): s is Scope => (allScopes as readonly string[]).includes(s)) : [];
}
