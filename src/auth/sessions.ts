import type { Db } from '../db/database.ts';
import type { SignInMethod } from '../db/schema.ts';
import { forAccount } from '../db/account-scope.ts';
import { randomSecret, sha256Hex } from './secrets.ts';

export const SESSION_COOKIE = 'hoard_session';
const SESSION_LIFETIME_MS = 30 * 24 * 3600 * 1000;
// Sliding expiry is refreshed at most this often, so reading a page does not write to the database.
const TOUCH_INTERVAL_MS = 60 * 1000;

export interface SessionRow {
  id: string;
  userId: string;
  expiresAt: number;
  lastSeenAt: number;
}

/** Returns the cookie value; only its hash is stored. */
export async function createSession(db: Db, userId: string, meta: { ip: string | null; userAgent: string | null; method: SignInMethod }): Promise<{ secret: string; expiresAt: number }> {
  const secret = randomSecret(32);
  const now = Date.now();
  const expiresAt = now + SESSION_LIFETIME_MS;
  await forAccount(db, userId)
    .insertInto('sessions', {
      id: sha256Hex(secret),
      publicId: randomSecret(16),
      method: meta.method,
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
      ip: meta.ip,
      userAgent: meta.userAgent?.slice(0, 512) ?? null,
    })
    .execute();
  return { secret, expiresAt };
}

export async function findSession(db: Db, secret: string): Promise<SessionRow | null> {
  const id = sha256Hex(secret);
  const row = await db.selectFrom('sessions').select(['id', 'userId', 'expiresAt', 'lastSeenAt']).where('id', '=', id).executeTakeFirst();
  const now = Date.now();
  if (!row || row.expiresAt <= now) return null;
  if (now - row.lastSeenAt > TOUCH_INTERVAL_MS) {
    await db.updateTable('sessions').set({ lastSeenAt: now, expiresAt: now + SESSION_LIFETIME_MS }).where('id', '=', id).execute();
  }
  return row;
}

export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

export async function deleteAllSessions(db: Db, userId: string): Promise<void> {
  await forAccount(db, userId).deleteFrom('sessions').execute();
}
