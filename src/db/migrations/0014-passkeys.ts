import type { Kysely } from 'kysely';

/**
 * Passkeys (contract §8, "Passkeys"): the WebAuthn credentials registered on an account, and the
 * challenges handed out for registering one or signing in with one. Challenges live in the database
 * so that every process sharing it accepts the answer to a challenge another one issued; a row is
 * deleted when it is used (once) or found expired.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('passkeys')
    // The passkey's public ID in the API; the credential ID is the authenticator's.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // base64url. Unique across the instance: a sign-in finds its account by it.
    .addColumn('credentialId', 'text', (c) => c.notNull().unique())
    // base64url of the COSE public key.
    .addColumn('publicKey', 'text', (c) => c.notNull())
    // The authenticator's signature counter (an unsigned 32-bit number).
    .addColumn('counter', 'bigint', (c) => c.notNull())
    // JSON array of transport hints (`internal`, `hybrid`, `usb`…).
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('lastUsedAt', 'bigint')
    .execute();
  await db.schema.createIndex('passkeys_userId_createdAt').on('passkeys').columns(['userId', 'createdAt']).execute();

  await db.schema
    .createTable('webauthnChallenges')
    // The base64url challenge itself: the answer names it in its clientDataJSON.
    .addColumn('challenge', 'text', (c) => c.primaryKey())
    // `registration` or `authentication`.
    .addColumn('purpose', 'text', (c) => c.notNull())
    // Registration: the account the passkey is added to. Sign-in: the account of the email asked
    // for, or null (a discoverable-credential request).
    .addColumn('userId', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('expiresAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webauthnChallenges_expiresAt').on('webauthnChallenges').column('expiresAt').execute();
}
