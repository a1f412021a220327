import type { Kysely } from 'kysely';

/**
 * Which completion request holds a chunked session's completion lease. The lease was only a time:
 * a completion whose lease ran out while its process still worked (an event loop that stood still,
 * renewals the database did not take) went on as if it held it, after another request had taken it
 * over. The one that lost then set the session back to open, or removed the object and the session,
 * after the other had committed its file: the file's bytes went with the next completion request.
 * Each claim now writes a token of its own, and a completion renews, commits and undoes only while
 * the token is still its own. A session being completed while this runs has none, and its lease
 * is taken over once it runs out, as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('chunkSessions').addColumn('completionClaim', 'text').execute();
}
