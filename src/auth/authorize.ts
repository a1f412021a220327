import { prepared, type Db } from '../db/database.ts';
import { forAccount } from '../db/account-scope.ts';
import { compiledOnce } from '../db/compiled-query.ts';
import { readSettings } from '../settings/instance-settings.ts';
import { AppError, forbidden, unauthorized } from '../errors.ts';
import { hasPermission } from './permissions.ts';
import { foldRoles, loadAccess } from './roles.ts';
import type { Principal, UserRow } from './principal.ts';
import { permissionsOf, type RoutePolicy } from './route-policy.ts';
import { findSession, RECENT_SIGN_IN_MS } from './sessions.ts';
import { sha256Hex } from './secrets.ts';
import { parseScopes, SECRET_PREFIX, tokenStatus } from './token-format.ts';

export interface Credentials {
  /** The raw Authorization header, if any. */
  authorization: string | undefined;
  sessionCookie: string | undefined;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
// The scheme word is case-insensitive (RFC 9110); the secret is taken exactly as sent.
const bearer = /^bearer[ ]+([^\s]+)[ ]*$/i;
// Last-used timestamp: best-effort metadata (spec, Named API token), written at most this often per token.
const LAST_USED_RESOLUTION_MS = 60 * 1000;

// With the account, its listing version (the listing cache's validator): read here, in the query
// that runs anyway, it costs nothing.
const userColumns = ['users.id', 'users.email', 'users.name', 'users.urlId', 'users.emailVerified', 'users.quotaBytes', 'users.createdAt', 'users.listingVersion'] as const;

/**
 * Step one of the single authorization point: who is calling, judged against the route's policy.
 * Anything wrong with a credential (unknown, expired, revoked, a scope or route it does not cover,
 * an unverified account) is the same generic 401, so the cause is never revealed (spec, Errors: 401,
 * error `Unauthorized`).
 */
export async function authenticate(db: Db, policy: RoutePolicy, credentials: Credentials): Promise<Principal | null> {
  const { access } = policy;
  if (access.kind === 'public') return null;
  if (access.kind === 'browser') {
    if (credentials.authorization !== undefined) throw unauthorized();
    return null;
  }
  if (access.kind === 'publicWithSession') return credentials.sessionCookie ? sessionPrincipal(db, credentials.sessionCookie) : null;

  // A request that carries an Authorization header is judged by it alone; cookies add nothing.
  if (credentials.authorization !== undefined) {
    const secret = bearer.exec(credentials.authorization)?.[1];
    if (!secret) throw unauthorized();
    let principal: Principal | null;
    if (secret.startsWith(SECRET_PREFIX)) {
      if (access.kind !== 'api') throw unauthorized();
      principal = await namedTokenPrincipal(db, secret, policy.finalizesUpload === true);
      // Token scope (spec, Authentication 3); the current role permission is checkAccess's.
      if (!principal || !principal.token!.scopes.has(access.scope)) throw unauthorized();
    } else {
      if (access.kind !== 'api' && access.kind !== 'sessionOrLegacy') throw unauthorized();
      principal = await legacyPrincipal(db, secret);
      if (!principal) throw unauthorized();
    }
    if (principal.user.emailVerified !== 1 && (await readSettings(db)).requireEmailVerification) throw unauthorized();
    return principal;
  }

  const principal = credentials.sessionCookie ? await sessionPrincipal(db, credentials.sessionCookie) : null;
  if (!principal) throw unauthorized();
  return principal;
}

async function sessionPrincipal(db: Db, cookie: string): Promise<Principal | null> {
  const session = await findSession(db, cookie);
  if (!session) return null;
  // A suspended account's sessions are refused (docs/decisions.md, "Suspending an account").
  const row = await db.selectFrom('users').select(userColumns).where('id', '=', session.userId).where('suspendedAt', 'is', null).executeTakeFirst();
  if (!row) return null;
  return { ...(await withAccess(db, 'session', row)), sessionId: session.id, sessionProvedAt: session.provedAt, ...(session.renewedUntil === null ? {} : { sessionRenewedUntil: session.renewedUntil }) };
}

/**
 * Step two: may this principal do this, now. Throws 403 when not. The owner's current role permission,
 * checked on each request alongside the token scope (spec, Authentication 5).
 */
export function checkAccess(policy: RoutePolicy, principal: Principal | null, request: { method: string; origin: string | undefined }, expectedOrigin: string): void {
  if (!principal) return;
  // Browsers attach cookies to cross-site requests; the Origin header is how a state change proves
  // it came from this instance's own pages.
  if (principal.via === 'session' && STATE_CHANGING.has(request.method) && request.origin !== expectedOrigin) {
    // Said with both addresses: an instance opened at another address than its BASE_URL (its IP on
    // the LAN, before BASE_URL is set) signs in and then refuses every change, and the operator
    // must learn which setting that is. BASE_URL is no secret: every link Hoard returns holds it.
    throw new AppError(
      'forbidden',
      request.origin === undefined
        ? // A script is pointed at a named token only where one is taken: the browser-session routes refuse it.
          `Cross-origin request refused: a change made with a browser session needs an Origin header of ${expectedOrigin}${policy.access.kind === 'api' ? ' (scripts use a named token instead)' : ''}`
        : `Cross-origin request refused: its Origin header is ${request.origin.slice(0, 200)}, but this instance is at ${expectedOrigin} (its BASE_URL); open it there, or set BASE_URL to the address you use`,
    );
  }
  for (const needed of permissionsOf(policy.access)) if (!hasPermission(principal.permissions, needed)) throw forbidden();
  if (policy.recentSignIn && principal.via === 'session' && Date.now() - (principal.sessionProvedAt ?? 0) > RECENT_SIGN_IN_MS) {
    throw new AppError('forbidden', `Confirm your password first (POST /api/auth/confirm): adding a passkey or turning on two-factor needs a sign-in or a confirmed password within the last ${RECENT_SIGN_IN_MS / 60_000} minutes`);
  }
}

async function withAccess(db: Db, via: Principal['via'], { listingVersion, ...user }: UserRow & { listingVersion: number }): Promise<Principal> {
  const { permissions, roles } = await loadAccess(db, user.id);
  return { via, user, listingVersion, permissions, roles };
}

/**
 * The token, its owner and the owner's roles in one round trip: one row per role that applies
 * (Everyone, and each assigned role), so a database on the network costs one query per request.
 */
function tokenWithAccess(db: Db, secretHash: string) {
  return db
    .selectFrom('apiTokens')
    .innerJoin('users', 'users.id', 'apiTokens.userId')
    .crossJoin('roles')
    .leftJoin('userRoles', (join) => join.onRef('userRoles.roleId', '=', 'roles.id').onRef('userRoles.userId', '=', 'users.id'))
    .select([
      ...userColumns,
      'apiTokens.id as tokenId',
      'apiTokens.scopes',
      'apiTokens.profileId',
      'apiTokens.expiresAt',
      'apiTokens.revokedAt',
      'apiTokens.lastUsedAt',
      'roles.id as roleId',
      'roles.name as roleName',
      'roles.systemKey as roleSystemKey',
      'roles.permissions as rolePermissions',
    ])
    .where('apiTokens.secretHash', '=', secretHash)
    .where('users.suspendedAt', 'is', null)
    .where((eb) => eb.or([eb('roles.systemKey', '=', 'everyone'), eb('userRoles.userId', 'is not', null)]));
}

/**
 * Only a token neither revoked nor expired at `now`, as the database finds it: a lapsed secret then
 * costs what an unknown one does, no rows sent or read, and the time of its 401 does not tell that
 * it was once real.
 */
const usableToken = compiledOnce((db: Db, secretHash: string, now: number) =>
  tokenWithAccess(db, secretHash)
    .where('apiTokens.revokedAt', 'is', null)
    .where((eb) => eb.or([eb('apiTokens.expiresAt', 'is', null), eb('apiTokens.expiresAt', '>', now)]))
    .modifyEnd(prepared),
);

/** A token in any state, for the completion routes, whose 403 names a lapsed one (spec, Errors). */
const anyToken = compiledOnce((db: Db, secretHash: string) => tokenWithAccess(db, secretHash).modifyEnd(prepared));

async function namedTokenPrincipal(db: Db, secret: string, finalizesUpload: boolean): Promise<Principal | null> {
  const now = Date.now();
  const { rows } = await db.executeQuery(finalizesUpload ? anyToken(db, sha256Hex(secret)) : usableToken(db, sha256Hex(secret), now));
  const row = rows[0];
  if (!row) return null;
  if (tokenStatus(row, now) !== 'active') {
    if (finalizesUpload && parseScopes(row.scopes).includes('files:upload') && (await uploadBegunBefore(db, row.id, Math.min(row.revokedAt ?? Infinity, row.expiresAt ?? Infinity)))) {
      throw forbidden('The token was revoked or expired before the upload was finalized');
    }
    return null;
  }
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    // Not awaited: recording use must not slow down or fail the request.
    void db
      .updateTable('apiTokens')
      .set({ lastUsedAt: now })
      .where('id', '=', row.tokenId)
      .execute()
      .catch(() => undefined);
  }
  const { permissions, roles } = foldRoles(rows.map((r) => ({ id: r.roleId, name: r.roleName, systemKey: r.roleSystemKey, permissions: r.rolePermissions })));
  const user = { id: row.id, email: row.email, name: row.name, urlId: row.urlId, emailVerified: row.emailVerified, quotaBytes: row.quotaBytes, createdAt: row.createdAt };
  return { via: 'token', user, listingVersion: row.listingVersion, permissions, roles, token: { id: row.tokenId, scopes: new Set(parseScopes(row.scopes)), profileId: row.profileId } };
}

/**
 * Whether the account has a chunked upload begun before `lapsedAt`, when its token was revoked or
 * expired: only then did the token become invalid "before upload finalization" (spec, Errors: 403).
 * With none, a completion with a lapsed token is the generic 401 of any unknown one, which says
 * nothing of whether the secret was ever real (the upload ID is not looked at: the wrapped
 * completion carries it in a body not read yet).
 */
async function uploadBegunBefore(db: Db, accountId: string, lapsedAt: number): Promise<boolean> {
  const session = await forAccount(db, accountId).selectFrom('chunkSessions').select('id').where('createdAt', '<', lapsedAt).limit(1).executeTakeFirst();
  return session !== undefined;
}

/** Legacy upload credential (spec, Authentication 9): no scope allowlist, still limited by current role permissions. */
async function legacyPrincipal(db: Db, secret: string): Promise<Principal | null> {
  // Looked up by hash: the database comparison then leaks nothing about the secret's characters.
  const hash = sha256Hex(secret);
  const row = await db.selectFrom('users').select(userColumns).where('uploadTokenHash', '=', hash).where('suspendedAt', 'is', null).executeTakeFirst();
  return row ? { ...(await withAccess(db, 'legacy', row)), legacyCredentialHash: hash } : null;
}
