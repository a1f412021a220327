import type { Db, Dialect } from '../db/database.ts';
import { lockAccountRow } from '../db/locks.ts';
import { passwordFingerprint } from './passwords.ts';
import type { SignInMethod } from '../db/schema.ts';
import type { SessionRecord } from '../api/sign-in-security.ts';
import { forAccount } from '../db/account-scope.ts';
import { randomSecret, sha256Hex } from './secrets.ts';
import type { Executor } from '../db/account-scope.ts';
import { enqueueJob, type JobHandler } from '../jobs/queue.ts';

export const SESSION_COOKIE = 'hoard_session';
const SESSION_LIFETIME_MS = 30 * 24 * 3600 * 1000;
// Sliding expiry is refreshed at most this often, so reading a page does not write to the database.
const TOUCH_INTERVAL_MS = 60 * 1000;

/**
 * How recent a session's sign-in, or its last confirmation of the password, must be to add a way
 * into the account (a passkey, a second factor). A stolen session cookie stays usable until it is
 * ended, but what it could add would outlive that end: a password change and "sign out everywhere
 * else" end sessions, not passkeys (docs/decisions.md, "Recent sign-in").
 */
export const RECENT_SIGN_IN_MS = 60 * 60 * 1000;

export interface SessionRow {
  id: string;
  userId: string;
  expiresAt: number;
  lastSeenAt: number;
  /** The sign-in, or the session's latest confirmation of the password, whichever came last. */
  provedAt: number;
}

/**
 * Returns the cookie value; only its hash is stored. With `passwordFingerprint` (a sign-in that
 * proved a password), the session is made only if the account's password is still that one, checked
 * under the account's lock in the same transaction: a password change (which ends the account's
 * other sessions under that lock) either comes first, and the sign-in gets the generic 401, or comes
 * after, and ends the new session with the others. Without it, a sign-in that read the old password
 * just before the change made a session the change never saw. Null when the password changed.
 */
export async function createSession(
  db: Db,
  dialect: Dialect,
  userId: string,
  meta: { ip: string | null; userAgent: string | null; method: SignInMethod; passwordFingerprint?: string | null },
): Promise<{ secret: string; expiresAt: number } | null> {
  const secret = randomSecret(32);
  const now = Date.now();
  const expiresAt = now + SESSION_LIFETIME_MS;
  const made = await db.transaction().execute(async (trx) => {
    if (meta.passwordFingerprint !== undefined) {
      await lockAccountRow(trx, dialect, userId);
      const row = await trx.selectFrom('users').select('passwordHash').where('id', '=', userId).executeTakeFirst();
      if (!row || meta.passwordFingerprint === null || passwordFingerprint(row.passwordHash) !== meta.passwordFingerprint) return false;
    }
    await forAccount(trx, userId)
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
    return true;
  });
  return made ? { secret, expiresAt } : null;
}

/**
 * The live session a cookie names. `renewedUntil` is set when this request moved its sliding expiry
 * (at most once a minute): the cookie is then sent again with that expiry, so the browser keeps it
 * as long as the server does.
 */
export async function findSession(db: Db, secret: string): Promise<(SessionRow & { renewedUntil: number | null }) | null> {
  const id = sha256Hex(secret);
  const found = await db.selectFrom('sessions').select(['id', 'userId', 'expiresAt', 'lastSeenAt', 'createdAt', 'confirmedAt']).where('id', '=', id).executeTakeFirst();
  const now = Date.now();
  if (!found || found.expiresAt <= now) return null;
  const { createdAt, confirmedAt, ...row } = found;
  const session = { ...row, provedAt: Math.max(Number(createdAt), Number(confirmedAt ?? 0)) };
  if (now - row.lastSeenAt > TOUCH_INTERVAL_MS) {
    const expiresAt = now + SESSION_LIFETIME_MS;
    await db.updateTable('sessions').set({ lastSeenAt: now, expiresAt }).where('id', '=', id).execute();
    return { ...session, lastSeenAt: now, expiresAt, renewedUntil: expiresAt };
  }
  return { ...session, renewedUntil: null };
}

/** Records that the session proved its account's password now; answers until when that counts. */
export async function confirmSession(db: Db, userId: string, sessionId: string): Promise<number> {
  const now = Date.now();
  await forAccount(db, userId).updateTable('sessions').set({ confirmedAt: now }).where('id', '=', sessionId).execute();
  return now + RECENT_SIGN_IN_MS;
}

export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute();
}

/**
 * The account's live sessions, newest first. `id` is the public ID, never the cookie secret or the
 * hash that keys the row; `current` marks the session of the asking request (its row key).
 */
export async function listSessions(db: Db, userId: string, currentSessionId: string | undefined): Promise<SessionRecord[]> {
  const rows = await forAccount(db, userId)
    .selectFrom('sessions')
    .select(['id', 'publicId', 'createdAt', 'lastSeenAt', 'expiresAt', 'ip', 'userAgent', 'method'])
    .where('expiresAt', '>', Date.now())
    .orderBy('createdAt', 'desc')
    .orderBy('publicId')
    .execute();
  return rows.map((row) => ({
    id: row.publicId,
    createdAt: new Date(Number(row.createdAt)).toISOString(),
    lastSeenAt: new Date(Number(row.lastSeenAt)).toISOString(),
    expiresAt: new Date(Number(row.expiresAt)).toISOString(),
    ip: row.ip,
    userAgent: row.userAgent,
    method: row.method,
    current: row.id === currentSessionId,
  }));
}

/**
 * Ends one live session of the account by its public ID. Returns whether it was the asking
 * request's own session (its cookie is then cleared too), or null when the account has no such live
 * session (another account's ID included).
 */
export async function endSession(db: Db, userId: string, publicId: string, currentSessionId: string | undefined): Promise<{ wasCurrent: boolean } | null> {
  const row = await forAccount(db, userId).deleteFrom('sessions').where('publicId', '=', publicId).where('expiresAt', '>', Date.now()).returning('id').executeTakeFirst();
  return row ? { wasCurrent: row.id === currentSessionId } : null;
}

/** Ends every session of the account but the asking one (spec, Authentication 10: tokens stay). */
export async function endOtherSessions(db: Db, userId: string, currentSessionId: string | undefined): Promise<void> {
  const others = forAccount(db, userId).deleteFrom('sessions');
  await (currentSessionId === undefined ? others : others.where('id', '!=', currentSessionId)).execute();
}

export async function deleteAllSessions(db: Db, userId: string): Promise<void> {
  await forAccount(db, userId).deleteFrom('sessions').execute();
}

export const SESSION_SWEEP_JOB = 'sessions.sweep';
const SWEEP_KEY = 'session-sweep';
const SWEEP_INTERVAL_MS = 24 * 3600 * 1000;
/** Rows deleted per statement, so one sweep never holds the database for long. */
const SWEEP_BATCH = 5_000;

/**
 * Expired sessions are never used again (findSession ignores them) but their rows would stay; one
 * durable job for the whole instance deletes them daily. A start moves it to that start.
 */
export async function scheduleSessionSweep(executor: Executor, runAt = Date.now()): Promise<void> {
  await enqueueJob(executor, { type: SESSION_SWEEP_JOB, payload: {}, runAt, dedupeKey: SWEEP_KEY });
}

/** Deletes a batch of expired sessions; runs again at once while there are more, else in a day. */
export function sessionSweepHandler(ctx: { db: Db; jobs: { wake(): void } }): JobHandler {
  return async () => {
    const expired = ctx.db.selectFrom('sessions').select('id').where('expiresAt', '<=', Date.now()).limit(SWEEP_BATCH);
    const result = await ctx.db.deleteFrom('sessions').where('id', 'in', expired).executeTakeFirst();
    const more = Number(result.numDeletedRows) === SWEEP_BATCH;
    await scheduleSessionSweep(ctx.db, more ? Date.now() : Date.now() + SWEEP_INTERVAL_MS);
    if (more) ctx.jobs.wake();
  };
}

