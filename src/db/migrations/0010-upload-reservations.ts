import type { Kysely } from 'kysely';

/**
 * Room reserved for parts of chunked uploads while they stream: taken atomically before the first
 * byte, so parts sent in parallel cannot together pass the session's declared size. A reservation
 * lapses at `liveUntil` unless the request streaming the part pushes it back (a process that dies
 * stops doing so). The declared size of an open session is itself a reservation against the quota;
 * that one is the session row, and needs no table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chunkPartReservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sessionId', 'text', (c) => c.notNull().references('chunkSessions.id').onDelete('cascade'))
    .addColumn('partNumber', 'integer', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull())
    .addColumn('liveUntil', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chunkPartReservations_sessionId').on('chunkPartReservations').column('sessionId').execute();
  // The quota check of every upload sums the open sessions of the account; the instance's limit on
  // temporary bytes sums those of every account.
  await db.schema.createIndex('chunkSessions_state').on('chunkSessions').column('state').execute();
}
