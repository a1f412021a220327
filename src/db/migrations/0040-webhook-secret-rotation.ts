import type { Kysely } from 'kysely';

/**
 * A webhook's signing secret can be replaced without a gap (docs/decisions.md, "Webhooks"): the
 * secret it replaced stays, sealed as it was, until `previousSecretUntil` (milliseconds), and every
 * delivery until then carries a signature by each (Standard Webhooks allows several in one header),
 * so a receiver can switch to the new secret at any time within that window. Existing webhooks have
 * no previous secret.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('previousSecretEncrypted', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('previousSecretUntil', 'bigint').execute();
}
