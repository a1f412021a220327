import type { Db } from '../db/database.ts';
import { verifyPassword } from '../auth/passwords.ts';
import { clearHits, takeAttempt } from '../auth/throttle.ts';
import { AppError } from '../errors.ts';
import type { FileRow } from './file-access.ts';
import { clientKey } from '../shared/client-key.ts';

/** Wrong passwords for one file from one address: this many per window, then 429 until it closes. */
const UNLOCK_LIMIT = { attempts: 10, windowMs: 15 * 60 * 1000 };

/**
 * Checks a password-protected file's password. Every place that takes a file's password (the
 * unlock route, the share-page archive routes of contract §9) counts toward this one throttle, per
 * address and file, so a second route is no second set of guesses. Counted before the verification,
 * so parallel guesses cannot all pass the limit; a right password clears the count.
 */
export async function checkFilePassword(db: Db, ip: string, file: Pick<FileRow, 'id' | 'passwordHash'>, password: string): Promise<void> {
  const key = `unlock:${clientKey(ip)}:${file.id}`;
  await takeAttempt(db, key, UNLOCK_LIMIT.attempts, UNLOCK_LIMIT.windowMs, 'Too many wrong passwords; try again later');
  if (!(await verifyPassword(file.passwordHash, password))) throw new AppError('forbidden', 'Wrong password');
  await clearHits(db, key);
}
