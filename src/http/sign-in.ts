import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { SignInMethod } from '../db/schema.ts';
import { assertNotSuspended, describeSelf, type UserRow } from '../accounts/users.ts';
import { createSession, SESSION_COOKIE } from '../auth/sessions.ts';

/**
 * The last step of every sign-in (password, two-factor code, passkey) and of registration: a new
 * browser session, its cookie, and the account as `GET /api/auth/me` shows it. A sign-in that proved
 * a password gives its fingerprint and the 401 to answer if the password changed meanwhile.
 */
export async function startSession(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
  method: SignInMethod,
  proof?: { passwordFingerprint: string | null; refused: () => Error },
) {
  // Every sign-in ends here, whatever proved it: a suspended account is told so, and gets no session.
  await assertNotSuspended(ctx.db, user.id);
  const made = await createSession(ctx.db, ctx.dialect, user.id, {
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
    method,
    ...(proof ? { passwordFingerprint: proof.passwordFingerprint } : {}),
  });
  if (!made) throw proof!.refused();
  const { secret, expiresAt } = made;
  setSessionCookie(ctx, reply, secret, expiresAt);
  return { user: await describeSelf(ctx.db, user) };
}

/** The session cookie (contract §2): set at sign-in, and again whenever the session's expiry slides. */
export function setSessionCookie(ctx: AppContext, reply: FastifyReply, secret: string, expiresAt: number): void {
  reply.setCookie(SESSION_COOKIE, secret, { ...sessionCookieAttributes(ctx), expires: new Date(expiresAt) });
}

/** Clears the session cookie, with the attributes it was set with. */
export function clearSessionCookie(ctx: AppContext, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, sessionCookieAttributes(ctx));
}

function sessionCookieAttributes(ctx: AppContext) {
  return { httpOnly: true, sameSite: 'lax', secure: ctx.config.baseUrl.startsWith('https:'), path: '/' } as const;
}

