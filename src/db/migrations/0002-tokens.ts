import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Upload profiles are managed with uploads; the table exists now because tokens bind to profiles.
  await db.schema
    .createTable('uploadProfiles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('updatedAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('uploadProfiles_userId').on('uploadProfiles').column('userId').execute();

  await db.schema
    .createTable('apiTokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    // Deliberately no foreign key: deleting the bound profile must leave the token bound (and failing).
    .addColumn('profileId', 'text')
    .addColumn('secretHash', 'text', (c) => c.notNull().unique())
    .addColumn('expiresAt', 'bigint')
    .addColumn('revokedAt', 'bigint')
    .addColumn('lastUsedAt', 'bigint')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('apiTokens_userId_createdAt').on('apiTokens').columns(['userId', 'createdAt']).execute();

  // The legacy account upload credential: the hash is the lookup key; the value is kept so the owner
  // can copy it again (the contract's GET /api/profile/upload-token shows it).
  await db.schema.alterTable('users').addColumn('uploadToken', 'text').execute();
  await db.schema.alterTable('users').addColumn('uploadTokenHash', 'text').execute();
  await db.schema.createIndex('users_uploadTokenHash').unique().on('users').column('uploadTokenHash').execute();

  await db.schema
    .createTable('auditEvents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('tokenId', 'text')
    .addColumn('credential', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('auditEvents_userId_createdAt').on('auditEvents').columns(['userId', 'createdAt']).execute();
}
