// The first version of migration 0003-files (dfcc6a5), as databases made then ran it: test/http/migrations.test.ts
// upgrades such a database. Kept as it was.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('folders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parentId', 'text', (c) => c.references('folders.id').onDelete('set null'))
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('updatedAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('folders_userId_parentId').on('folders').columns(['userId', 'parentId']).execute();

  await db.schema
    .createTable('tags')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('tags_userId_name', ['userId', 'name'])
    .execute();

  await db.schema
    .createTable('files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    // The name in the file's URL; unique per account, so /<urlId>/<name> is unique.
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('originalName', 'text', (c) => c.notNull())
    .addColumn('storageKey', 'text', (c) => c.notNull())
    .addColumn('mimeType', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('passwordHash', 'text')
    .addColumn('expiresAt', 'bigint')
    .addColumn('expiryAction', 'text')
    .addColumn('folderId', 'text', (c) => c.references('folders.id').onDelete('set null'))
    .addColumn('shareStyle', 'text', (c) => c.notNull())
    .addColumn('views', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('downloads', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('ocrText', 'text')
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .addColumn('updatedAt', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('files_userId_name', ['userId', 'name'])
    .execute();
  await db.schema.createIndex('files_userId_createdAt_id').on('files').columns(['userId', 'createdAt', 'id']).execute();
  await db.schema.createIndex('files_folderId').on('files').column('folderId').execute();
  await db.schema.createIndex('files_storageKey').unique().on('files').column('storageKey').execute();

  await db.schema
    .createTable('fileTags')
    .addColumn('fileId', 'text', (c) => c.notNull().references('files.id').onDelete('cascade'))
    .addColumn('tagId', 'text', (c) => c.notNull().references('tags.id').onDelete('cascade'))
    // A tag taken off a file is kept as excluded, so it no longer counts for the file.
    .addColumn('excluded', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('fileTags_pk', ['fileId', 'tagId'])
    .execute();
  await db.schema.createIndex('fileTags_tagId').on('fileTags').column('tagId').execute();

  // Bytes charged against the quota, kept in the same transaction as every file insert and delete.
  await db.schema.alterTable('users').addColumn('usedBytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('users').addColumn('defaultProfileId', 'text').execute();
  // The account's own upload defaults (JSON options), applied before any profile.
  await db.schema.alterTable('users').addColumn('uploadDefaults', 'text').execute();
}
