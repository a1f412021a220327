import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chunkSessions')
    // The uploadId clients use: 32 characters of [a-z0-9].
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('fileId', 'text', (c) => c.notNull())
    .addColumn('fileKey', 'text', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('mimeType', 'text')
    .addColumn('size', 'bigint', (c) => c.notNull())
    // The resolved upload options at start (JSON), the folder and profiles: fixed for the session.
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('folderId', 'text')
    .addColumn('profileId', 'text')
    .addColumn('boundProfileId', 'text')
    // Provenance: where the parts live. Null means a session recorded without it (refused with 409).
    .addColumn('storageTarget', 'text')
    .addColumn('storageUploadId', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('completingUntil', 'bigint')
    .addColumn('completedFileId', 'text')
    .addColumn('lastActivityAt', 'bigint', (c) => c.notNull())
    .addColumn('createdAt', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chunkSessions_userId').on('chunkSessions').column('userId').execute();

  await db.schema
    .createTable('chunkParts')
    .addColumn('sessionId', 'text', (c) => c.notNull().references('chunkSessions.id').onDelete('cascade'))
    .addColumn('partNumber', 'integer', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('chunkParts_pk', ['sessionId', 'partNumber'])
    .execute();
}
