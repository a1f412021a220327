import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

/**
 * Session history (contract §8): each browser session gets a public ID of its own (its primary key
 * is the hash of the cookie secret, which must never be shown) and the sign-in method that opened
 * it. Sessions opened before this migration were opened with a password.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('publicId', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('sessions').addColumn('method', 'text', (c) => c.notNull().defaultTo('password')).execute();
  const rows = await db.selectFrom('sessions').select('id').execute();
  for (const row of rows as Array<{ id: string }>) {
    await db.updateTable('sessions').set({ publicId: randomBytes(16).toString('base64url') }).where('id', '=', row.id).execute();
  }
  await db.schema.createIndex('sessions_publicId').unique().on('sessions').column('publicId').execute();
}
