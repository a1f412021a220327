import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { Executor } from '../db/account-scope.ts';
import { rateLimited } from '../errors.ts';
import { enqueueJob, type JobHandler } from '../jobs/queue.ts';

/**
 * Fixed-window counters kept in the database, so every process sharing it enforces one limit.
 * No window is longer than this; the prune job deletes the rows of windows older than it.
 */
export const LONGEST_WINDOW_MS = 60 * 60 * 1000;

export async function countHit(db: Db, key: string, windowMs: number, now = Date.now()): Promise<{ count: number; windowStart: number }> {
  if (windowMs > LONGEST_WINDOW_MS) throw new Error(`throttle window of ${windowMs} ms is longer than LONGEST_WINDOW_MS`);
  const expired = sql<boolean>`${sql.ref('rateLimits.windowStart')} <= ${now - windowMs}`;
  const row = await db
    .insertInto('rateLimits')
    .values({ key, windowStart: now, count: 1 })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`case when ${expired} then 1 else ${sql.ref('rateLimits.count')} + 1 end`,
        windowStart: sql<number>`case when ${expired} then ${now} else ${sql.ref('rateLimits.windowStart')} end`,
      }),
    )
    .returning(['count', 'windowStart'])
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), windowStart: Number(row.windowStart) };
}

/**
 * Counts one attempt and refuses it (429 with Retry-After, the seconds until the window closes) when
 * the window already held `limit` attempts. The count comes BEFORE the work it limits (a password
 * verification, a hash): checking first and counting afterwards let parallel requests all pass the
 * check before any of them was counted.
 */
export async function takeAttempt(db: Db, key: string, limit: number, windowMs: number, message: string, now = Date.now()): Promise<void> {
  const { count, windowStart } = await countHit(db, key, windowMs, now);
  // Parallel attempts read the clock before their turn at the database, so the window may have been
  // opened by one that read it later than this one: never more than the window itself.
  if (count > limit) {
    const wait = Math.min(Math.ceil(windowMs / 1000), Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)));
    // The body says when, as Retry-After does: "try again later" left a person guessing.
    throw rateLimited(message.replace(/; try again later$/, `; try again in ${waitInWords(wait)}`), wait);
  }
}

/** 45 seconds, 1 minute, 15 minutes, 2 hours: a wait as a person reads it, rounded up. */
export function waitInWords(seconds: number): string {
  const count = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds < 60) return count(seconds, 'second');
  if (seconds < 3600) return count(Math.ceil(seconds / 60), 'minute');
  return count(Math.ceil(seconds / 3600), 'hour');
}

export async function clearHits(db: Db, key: string): Promise<void> {
  await db.deleteFrom('rateLimits').where('key', '=', key).execute();
}

/** Clears every key that begins with `prefix` (an account's sign-in from any address). */
export async function clearHitsStartingWith(db: Db, prefix: string): Promise<void> {
  // substr() rather than LIKE, whose `_` and `%` an email address may hold; lengths in characters.
  await db
    .deleteFrom('rateLimits')
    .where(sql<string>`substr(${sql.ref('key')}, 1, ${[...prefix].length})`, '=', prefix)
    .execute();
}

/**
 * Gives back one attempt `takeAttempt` counted, for work that turned out well (a successful sign-in
 * on a per-address limit): counted before, so parallel attempts cannot slip past; given back after,
 * so many people behind one address signing in do not use up the limit their failures share.
 */
export async function refundAttempt(db: Db, key: string): Promise<void> {
  await db
    .updateTable('rateLimits')
    .set({ count: sql<number>`${sql.ref('count')} - 1` })
    .where('key', '=', key)
    .where('count', '>', 0)
    .execute();
}

export const RATE_LIMIT_PRUNE_JOB = 'rate-limits.prune';
const PRUNE_KEY = 'rate-limit-prune';
/** Rows deleted per statement, so one prune never holds the database for long. */
const PRUNE_BATCH = 5_000;

/**
 * Schedules the deletion of counters whose window has closed for every limit. One job for the whole
 * instance (a dedupe key), so several processes share it; a start moves it to that start.
 */
export async function scheduleRateLimitPrune(executor: Executor, runAt = Date.now()): Promise<void> {
  await enqueueJob(executor, { type: RATE_LIMIT_PRUNE_JOB, payload: {}, runAt, dedupeKey: PRUNE_KEY });
}

/** Deletes a batch of closed windows; runs again at once while there are more, else in an hour. */
export function rateLimitPruneHandler(ctx: { db: Db; jobs: { wake(): void } }): JobHandler {
  return async () => {
    const expired = ctx.db.selectFrom('rateLimits').select('key').where('windowStart', '<=', Date.now() - LONGEST_WINDOW_MS).limit(PRUNE_BATCH);
    const result = await ctx.db.deleteFrom('rateLimits').where('key', 'in', expired).executeTakeFirst();
    const more = Number(result.numDeletedRows) === PRUNE_BATCH;
    await scheduleRateLimitPrune(ctx.db, more ? Date.now() : Date.now() + LONGEST_WINDOW_MS);
    if (more) ctx.jobs.wake();
  };
}
