import type { Kysely } from 'kysely';

/**
 * The legacy upload credential kept encrypted (AES-256-GCM with the instance's secret key, as webhook
 * signing secrets are), since the instance must show it again. A migration cannot encrypt: it has no
 * key and imports no application code. So the instance seals any plaintext `uploadToken` left by an
 * older version at start-up and clears it (src/tokens/legacy-token.ts); the plaintext column then
 * stays empty.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('uploadTokenEncrypted', 'text').execute();
}
