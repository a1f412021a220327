import type { Kysely } from 'kysely';

/**
 * A sign-in ticket (the password step's answer when two-factor is on) records which password it
 * was earned with: a fingerprint (SHA-256, hex) of the account's password hash at the time. The code
 * step makes a session only while the account still has that password, so a password changed in
 * between (the owner noticing a stolen password) leaves the ticket worthless; it used to work for
 * its full 5 minutes. Tickets from before this column are refused (they live 5 minutes at most).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('signInTickets').addColumn('passwordFingerprint', 'text').execute();
}
