import type { Kysely } from 'kysely';

/**
 * What an administrator noted on an invite when making it ("for Alice, by email on Monday"), so
 * that open codes can be told apart before anyone has used them; null: no note
 * (docs/decisions.md, "Administration").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('invites').addColumn('note', 'text').execute();
}
