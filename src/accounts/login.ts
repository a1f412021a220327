import type { Db } from '../db/database.ts';
import { findUserForLogin, normalizeEmail, type UserRow } from './users.ts';
import { AppError } from '../errors.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { clearHits, takeAttempt } from '../auth/throttle.ts';

/**
 * Sign-in attempts allowed per window. Attempts on one email address are counted per client IP,
 * so one attacker's failures lock out that attacker, not the account's owner signing in from
 * elsewhere nor everyone behind the same address (as happens behind a proxy without TRUST_PROXY).
 * Attempts on addresses that have no account are also counted per IP alone, which stops one client
 * spraying guessed addresses.
 */
export const loginLimits = {
  windowMs: 15 * 60 * 1000,
  perAccountAndIp: 10,
  perIpForUnknownAccounts: 30,
} as const;

const TOO_MANY = 'Too many sign-in attempts; try again later';

export async function login(db: Db, input: { email: string; password: string; ip: string }): Promise<UserRow> {
  const user = await findUserForLogin(db, input.email);
  const accountKey = `login:account:${normalizeEmail(input.email)}:ip:${input.ip}`;
  // Counted before the (slow) verification, so parallel attempts cannot all pass the limit.
  await takeAttempt(db, accountKey, loginLimits.perAccountAndIp, loginLimits.windowMs, TOO_MANY);
  if (!user) await takeAttempt(db, `login:ip:${input.ip}`, loginLimits.perIpForUnknownAccounts, loginLimits.windowMs, TOO_MANY);

  if (!(await verifyPassword(user?.passwordHash ?? null, input.password)) || !user) {
    throw new AppError('unauthorized', 'Invalid email or password');
  }
  await clearHits(db, accountKey);
  const { passwordHash: _omitted, ...row } = user;
  return row;
}
