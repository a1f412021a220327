import type { Kysely } from 'kysely';

/**
 * Whether a folder's public page lists the public files of its subfolders too (1) or of the folder
 * alone (0, as every share made before; docs/decisions.md, "Sharing a folder").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('folderShares').addColumn('subfolders', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
