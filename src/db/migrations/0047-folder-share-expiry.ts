import type { Kysely } from 'kysely';

/**
 * When a folder's public address stops working (milliseconds; null: while the folder is shared),
 * so an album can be handed out for an event and end by itself (docs/decisions.md, "Sharing a folder").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('folderShares').addColumn('expiresAt', 'bigint').execute();
}
