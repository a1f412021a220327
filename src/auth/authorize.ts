import type { Db } from '../db/database.ts';
import { findUserById } from '../accounts/users.ts';
import { readSettings } from '../settings/instance-settings.ts';
import { AppError, forbidden, unauthorized } from '../errors.ts';
import { hasPermission } from './permissions.ts';
import { loadAccess } from './roles.ts';
import type { Principal } from './principal.ts';
import type { RoutePolicy } from './route-policy.ts';
import { findSession } from './sessions.ts';

export interface Credentials {
  /** The raw Authorization header, if any. */
  authorization: string | undefined;
  sessionCookie: string | undefined;
  method: string;
  origin: string | undefined;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const bearer = /^bearer +(\S+) *$/i;

/**
 * The single authentication and authorization step: every request passes here with its route's
 * policy. Resolves to the principal (null on public routes) or throws the error to answer with.
 */
export async function authorize(db: Db, policy: RoutePolicy, credentials: Credentials, expectedOrigin: string): Promise<Principal | null> {
  const { access } = policy;
  if (access.kind === 'public') return null;

  // A request that carries an Authorization header is judged by it alone; cookies add nothing.
  if (credentials.authorization !== undefined) {
    // Named tokens and the legacy credential arrive with the token-management issue; until then no
    // bearer credential is valid anywhere.
    throw unauthorized();
  }

  if (!credentials.sessionCookie) throw unauthorized();
  const session = await findSession(db, credentials.sessionCookie);
  if (!session) throw unauthorized();
  if (STATE_CHANGING.has(credentials.method) && credentials.origin !== expectedOrigin) {
    throw new AppError('forbidden', 'Cross-origin request refused: the Origin header must match this instance');
  }
  const principal = await loadPrincipal(db, 'session', session.userId);
  if (!principal) throw unauthorized();
  principal.sessionId = session.id;

  const needed = 'permission' in access ? access.permission : undefined;
  if (needed && !hasPermission(principal.permissions, needed)) throw forbidden();
  return principal;
}

async function loadPrincipal(db: Db, via: Principal['via'], userId: string): Promise<Principal | null> {
  const user = await findUserById(db, userId);
  if (!user) return null;
  const { permissions, roles } = await loadAccess(db, userId);
  return { via, user, permissions, roles };
}

/** Tokens and the legacy credential stop working for unverified accounts when the instance requires it. */
export async function mustVerifyEmail(db: Db, principal: Principal): Promise<boolean> {
  if (principal.user.emailVerified === 1) return false;
  return (await readSettings(db)).requireEmailVerification;
}
