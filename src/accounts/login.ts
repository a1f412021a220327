import type { Db } from '../db/database.ts';
import { findUserForLogin, SUSPENDED, type UserRow } from './users.ts';
import { loginAttemptKey, loginFailureKey } from './sign-in-keys.ts';
import { AppError, forbidden } from '../errors.ts';
import { hashPassword, passwordFingerprint, verifyPassword } from '../auth/passwords.ts';
import { clearHits, takeAttempt } from '../auth/throttle.ts';

/**
 * Sign-in attempts allowed per window. Attempts on one email address are counted per client IP,
 * so one attacker's failures lock out that attacker, not the account's owner signing in from
 * elsewhere nor everyone behind the same address (as happens behind a proxy without TRUST_PROXY).
 * Failed sign-ins are also counted per IP alone, whatever the address, which stops one client
 * spraying guessed addresses or passwords across accounts; a right password is not held by it. An
 * address without an account counts before its (pretended) verification, one with an account once
 * its password failed: past the limit both are answered alike, so the answers do not tell which
 * addresses have an account.
 */
export const loginLimits = {
  windowMs: 15 * 60 * 1000,
  perAccountAndIp: 10,
  failuresPerIp: 30,
} as const;


export { loginAttemptKey, loginFailureKey };

/** The one answer to a password that does not open the account, or no longer does. */
export const invalidSignIn = () => new AppError('unauthorized', 'Invalid email or password');

export const TOO_MANY_SIGN_INS = 'Too many sign-in attempts; try again later';
const TOO_MANY = TOO_MANY_SIGN_INS;


/**
 * The password step. With the account, the fingerprint of the password hash it proved: the session
 * (or the two-factor ticket) it leads to is made only while the account still has that password, so
 * a sign-in racing a password change cannot outlive the change (`createSession`).
 */
export async function login(db: Db, input: { email: string; password: string; ip: string }): Promise<{ user: UserRow; passwordFingerprint: string }> {
  const user = await findUserForLogin(db, input.email);
  const accountKey = loginAttemptKey(input.email, input.ip);
  // Counted before the (slow) verification, so parallel attempts cannot all pass the limit.
  await takeAttempt(db, accountKey, loginLimits.perAccountAndIp, loginLimits.windowMs, TOO_MANY);
  const failures = () => takeAttempt(db, loginFailureKey(input.ip), loginLimits.failuresPerIp, loginLimits.windowMs, TOO_MANY);
  if (!user) await failures();

  const verified = await verifyPassword(user?.passwordHash ?? null, input.password);
  if (!verified || !user) {
    if (user) await failures();
    throw invalidSignIn();
  }
  if (user.suspendedAt !== null) throw forbidden(SUSPENDED);
  // A hash made before passwords were normalised opened only as the password was typed: it is
  // made again of the normalised text, so the password opens however it is typed from now on (if
  // the password did not change meanwhile).
  if (verified === 'as typed') {
    const renewed = await hashPassword(input.password);
    const written = await db.updateTable('users').set({ passwordHash: renewed }).where('id', '=', user.id).where('passwordHash', '=', user.passwordHash).executeTakeFirst();
    if (Number(written.numUpdatedRows) === 1) user.passwordHash = renewed;
  }
  // A sign-in is complete only after its second factor: with two-factor on, the failures counted so
  // far stay until the code step succeeds, so fresh tickets cannot reset the count of wrong codes.
  const secondFactor = await db.selectFrom('users').select('totpSecretSealed').where('id', '=', user.id).executeTakeFirst();
  if (secondFactor?.totpSecretSealed == null) await clearHits(db, accountKey);
  const { passwordHash, suspendedAt: _suspended, ...row } = user;
  return { user: row, passwordFingerprint: passwordFingerprint(passwordHash) };
}
