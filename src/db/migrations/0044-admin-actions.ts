import type { Kysely } from 'kysely';

/**
 * The administration log (src/audit/admin-actions.ts): one row per change an administrator made to
 * another account, a role, the instance's settings, an invite, or another account's content. The
 * actor and the target are kept as they were named then (an email, a role's name, a file's name),
 * not only as references: the record outlives the account it names, and a deleted account's
 * deletion is exactly what it must still show. Read newest first by ID (IDs are time-ordered) and
 * pruned by age with the audit records (docs/decisions.md, "The administration log").
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('adminActions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('actorId', 'text', (c) => c.notNull())
    .addColumn('actorEmail', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('targetId', 'text')
    .addColumn('targetLabel', 'text', (c) => c.notNull())
    .addColumn('changes', 'text')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('adminActions_createdAt').on('adminActions').column('createdAt').execute();
  await db.schema.createIndex('adminActions_targetId_id').on('adminActions').columns(['targetId', 'id']).execute();
}
