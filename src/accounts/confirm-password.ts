import type { Db } from '../db/database.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { clearHits, takeAttempt } from '../auth/throttle.ts';
import { confirmSession } from '../auth/sessions.ts';
import { accountGone, AppError } from '../errors.ts';
import { loginAttemptKey, loginLimits, TOO_MANY_SIGN_INS } from './login.ts';

/**
 * The password check of what a browser session may do only with the password: turning two-factor
 * off, new recovery codes (contract §8), and confirming a session for what needs a recent sign-in.
 * A wrong password is 403 and counts as a failed sign-in, counted before the check: a stolen
 * session must not become a way to guess the password faster than the sign-in allows.
 */
export async function confirmPassword(db: Db, user: { id: string; email: string }, password: string, ip: string): Promise<void> {
  const key = loginAttemptKey(user.email, ip);
  await takeAttempt(db, key, loginLimits.perAccountAndIp, loginLimits.windowMs, TOO_MANY_SIGN_INS);
  // Deleted since the request was authenticated (an administrator, another tab): the generic 401.
  const row = await db.selectFrom('users').select('passwordHash').where('id', '=', user.id).executeTakeFirstOrThrow(accountGone);
  if (!(await verifyPassword(row.passwordHash, password))) throw new AppError('forbidden', 'The password is not right');
  await clearHits(db, key);
}

/**
 * The session proves the account's password again (docs/decisions.md, "Recent sign-in"): what adds
 * a way into the account is allowed to it for RECENT_SIGN_IN_MS from now. Answers until when.
 */
export async function confirmSignIn(db: Db, user: { id: string; email: string }, sessionId: string, password: string, ip: string): Promise<number> {
  await confirmPassword(db, user, password, ip);
  return confirmSession(db, user.id, sessionId);
}
