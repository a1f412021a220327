import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('passwordHash', 'text', (c) => c.notNull())
    .addColumn('urlId', 'text', (c) => c.notNull().unique())
    .addColumn('emailVerified', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('quotaBytes', 'bigint')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('updatedAt', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('roles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('systemKey', 'text', (c) => c.unique())
    .addColumn('permissions', 'text', (c) => c.notNull())
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('updatedAt', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('userRoles')
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('roleId', 'text', (c) => c.notNull().references('roles.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('userRoles_pk', ['userId', 'roleId'])
    .execute();
  await db.schema.createIndex('userRoles_roleId').on('userRoles').column('roleId').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('lastSeenAt', 'bigint', (c) => c.notNull())
    .addColumn('expiresAt', 'bigint', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('userAgent', 'text')
    .execute();
  await db.schema.createIndex('sessions_userId').on('sessions').column('userId').execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('invites')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('createdBy', 'text', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('expiresAt', 'bigint', (c) => c.notNull())
    .addColumn('usedAt', 'bigint')
    .addColumn('usedBy', 'text', (c) => c.references('users.id').onDelete('set null'))
    .execute();

  await db.schema
    .createTable('rateLimits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('windowStart', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .execute();
}
