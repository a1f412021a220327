import type { Kysely } from 'kysely';

/**
 * `importedFiles`: what `npm run cli -- import` has made of a directory tree (docs/decisions.md,
 * "Importing a library"), so that a second run of the same import skips what the first one did.
 *
 * - A file counts as imported by its path relative to the imported directory and the SHA-256 of its
 *   bytes: the primary key (userId, relativePath, sha256) is also how a run looks a path up. A changed
 *   file at the same path is a new row (and a new file).
 * - A row is written in the transaction that commits its file, and names that file: it goes with the
 *   file (the foreign key), so a file deleted through the API is imported again by the next run, and
 *   with the account.
 * - `fileId` is indexed: deleting a file looks its rows up by it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('importedFiles')
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('relativePath', 'text', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('fileId', 'text', (c) => c.notNull().references('files.id').onDelete('cascade'))
    .addColumn('importedAt', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('importedFiles_pk', ['userId', 'relativePath', 'sha256'])
    .execute();
  await db.schema.createIndex('importedFiles_fileId').on('importedFiles').column('fileId').execute();
}
