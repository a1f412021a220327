import type { Kysely } from 'kysely';

/**
 * Two-factor codes (contract §8, "Two-factor codes"): the account's TOTP secret once confirmed, and
 * the one waiting for its first code, both sealed with the instance's secret key; the last time step
 * whose code was accepted (a code works once); recovery codes, kept as hashes; and the tickets of the
 * sign-in's code step, kept as hashes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('totpSecretSealed', 'text').execute();
  await db.schema.alterTable('users').addColumn('totpPendingSealed', 'text').execute();
  await db.schema.alterTable('users').addColumn('totpLastStep', 'bigint').execute();

  await db.schema
    .createTable('recoveryCodes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // SHA-256 (hex) of the code: the codes are random and long, so a fast hash suffices.
    .addColumn('codeHash', 'text', (c) => c.notNull())
    .addColumn('usedAt', 'bigint')
    .execute();
  await db.schema.createIndex('recoveryCodes_userId_codeHash').on('recoveryCodes').columns(['userId', 'codeHash']).execute();

  await db.schema
    .createTable('signInTickets')
    // SHA-256 (hex) of the ticket the password step handed out.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('expiresAt', 'bigint', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('usedAt', 'bigint')
    .execute();
  await db.schema.createIndex('signInTickets_userId').on('signInTickets').column('userId').execute();
}
