import type { Kysely } from 'kysely';

/**
 * Reading and pruning the audit records (src/audit/audit-query.ts, src/audit/audit-retention.ts):
 * newest first by ID (IDs are time-ordered), for everyone, one account or one token, and by age.
 * The account's index also serves the cascade when an account is deleted.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('auditEvents_userId_createdAt').execute();
  await db.schema.createIndex('auditEvents_userId_id').on('auditEvents').columns(['userId', 'id']).execute();
  await db.schema.createIndex('auditEvents_tokenId_id').on('auditEvents').columns(['tokenId', 'id']).execute();
  await db.schema.createIndex('auditEvents_createdAt').on('auditEvents').column('createdAt').execute();
}
