import type { Kysely } from 'kysely';

/**
 * When an administrator suspended the account (milliseconds; null: not suspended). A suspended
 * account cannot sign in, and its sessions, named tokens and legacy credential are refused, until
 * it is resumed; nothing of it is deleted (docs/decisions.md, "Suspending an account").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('suspendedAt', 'bigint').execute();
}
