import type { Db } from '../db/database.ts';
import { findUserForLogin, SUSPENDED, type UserRow } from './users.ts';
import { loginAttemptKey, loginFailureKey } from './sign-in-keys.ts';
import { AppError, forbidden } from '../errors.ts';
import { hashPassword, passwordFingerprint, verifyPassword } from '../auth/passwords.ts';
import { clearHits, refundAttempt, takeAttempt } from '../auth/throttle.ts';

/**
 * Sign-in attempts allowed per window. Attempts on one email address are counted per client IP,
 * so one attacker's failures lock out that attacker, not the account's owner signing in from
 * elsewhere nor everyone behind the same address (as happens behind a proxy without TRUST_PROXY).
 * Sign-ins are also counted per IP alone, whatever the address, before any password is checked,
 * and a successful one gives its count back: so this counts failures, and stops one client spraying
 * guessed addresses or passwords across accounts. Past it every sign-in from that IP is refused
 * unverified, the right password too: verified, a wrong guess answered 429 and the right one 200,
 * which let the guessing go on; and an address with an account took a verification's time where one
 * without took none, which told them apart (docs/decisions.md, "Login throttling").
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
  const ipKey = loginFailureKey(input.ip);
  await takeAttempt(db, ipKey, loginLimits.failuresPerIp, loginLimits.windowMs, TOO_MANY);

  const verified = await verifyPassword(user?.passwordHash ?? null, input.password);
  if (!verified || !user) throw invalidSignIn();
  await refundAttempt(db, ipKey);
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
