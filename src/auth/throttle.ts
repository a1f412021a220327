import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * Fixed-window counters kept in the database, so every process sharing it enforces one limit.
 */
export async function countHit(db: Db, key: string, windowMs: number, now = Date.now()): Promise<{ count: number; windowStart: number }> {
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
  return row;
}

/** Seconds until the window of `key` closes when its count has reached `limit`, else null. */
export async function blockedFor(db: Db, key: string, limit: number, windowMs: number, now = Date.now()): Promise<number | null> {
  const row = await db.selectFrom('rateLimits').select(['count', 'windowStart']).where('key', '=', key).executeTakeFirst();
  if (!row || row.windowStart + windowMs <= now || row.count < limit) return null;
  return Math.max(1, Math.ceil((row.windowStart + windowMs - now) / 1000));
}

export async function clearHits(db: Db, key: string): Promise<void> {
  await db.deleteFrom('rateLimits').where('key', '=', key).execute();
}
