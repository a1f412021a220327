import type { Db } from '../db/database.ts';
import { findUserForLogin, normalizeEmail, type UserRow } from '../accounts/users.ts';
import { AppError, rateLimited } from '../errors.ts';
import { verifyPassword } from './passwords.ts';
import { blockedFor, clearHits, countHit } from './throttle.ts';

/**
 * Failed sign-ins allowed per window: per account they stop password guessing against one victim,
 * per client IP they stop one client spraying many accounts.
 */
export const loginLimits = {
  windowMs: 15 * 60 * 1000,
  perAccount: 10,
  perIp: 30,
} as const;

export async function login(db: Db, input: { email: string; password: string; ip: string }): Promise<UserRow> {
  const accountKey = `login:account:${normalizeEmail(input.email)}`;
  const ipKey = `login:ip:${input.ip}`;
  const wait = Math.max(
    (await blockedFor(db, accountKey, loginLimits.perAccount, loginLimits.windowMs)) ?? 0,
    (await blockedFor(db, ipKey, loginLimits.perIp, loginLimits.windowMs)) ?? 0,
  );
  if (wait > 0) throw rateLimited('Too many sign-in attempts; try again later', wait);

  const user = await findUserForLogin(db, input.email);
  if (!(await verifyPassword(user?.passwordHash ?? null, input.password)) || !user) {
    await countHit(db, accountKey, loginLimits.windowMs);
    await countHit(db, ipKey, loginLimits.windowMs);
    throw new AppError('unauthorized', 'Invalid email or password');
  }
  await clearHits(db, accountKey);
  const { passwordHash: _omitted, ...row } = user;
  return row;
}
