import type { Kysely } from 'kysely';

/**
 * When a browser session last proved its account's password after signing in (milliseconds; null
 * until it does): adding a passkey or turning on two-factor needs a session whose sign-in or
 * confirmation is recent (docs/decisions.md, "Recent sign-in"), so a stolen session cookie cannot
 * add a way in that outlives a password change. Existing sessions have confirmed nothing since
 * their sign-in.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('confirmedAt', 'bigint').execute();
}
