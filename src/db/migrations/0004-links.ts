import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('shortLinks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The unique constraint is what keeps codes unique; creation retries on a collision.
    .addColumn('shortCode', 'text', (c) => c.notNull().unique())
    .addColumn('targetUrl', 'text', (c) => c.notNull())
    .addColumn('clicks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .execute();
  // The owner's list, newest first.
  await db.schema.createIndex('shortLinks_userId_createdAt').on('shortLinks').columns(['userId', 'createdAt']).execute();
}
