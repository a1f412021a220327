import type { Kysely } from 'kysely';

/**
 * Notices an account is shown until it dismisses them (src/accounts/notices.ts): for now, that an
 * administrator took down one of its files or short links, and why, where they said. The owner
 * found a file simply gone from the library, with no word of who removed it or for what
 * (docs/decisions.md, "Taking down content"). They go with the account.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accountNotices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('accountNotices_userId_id').on('accountNotices').columns(['userId', 'id']).execute();
}
