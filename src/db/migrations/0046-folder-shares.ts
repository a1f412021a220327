import type { Kysely } from 'kysely';

/**
 * A folder shared by a public address (src/organisation/folder-shares.ts): anyone with it sees the
 * folder's public files, as each file's own link would show them. One share a folder; it goes
 * with the folder and with the account.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('folderShares')
    .addColumn('folderId', 'text', (c) => c.primaryKey().references('folders.id').onDelete('cascade'))
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('shareId', 'text', (c) => c.notNull().unique())
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('folderShares_userId').on('folderShares').column('userId').execute();
}
