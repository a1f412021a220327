import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The indexes in upload order of a type, of a folder (migration 0029-timeline-filter-indexes) and of
 * each visibility (migration 0022-visibility-indexes) also hold the file's tagged mark (migration
 * 0031-tagged-files), so that a timeline of `tag=untagged` with one of those filters counts each
 * calendar bucket within one range of that filter's index, without looking up each file's row or
 * tags: a million files, by month, `tag=untagged&types=image/png` took 189 ms on SQLite and 198 ms
 * on PostgreSQL, nearly all of it in those look-ups. Same names as before, the mark last, so every
 * listing reads the same ranges.
 *
 * On PostgreSQL the visibilities' indexes no longer repeat their partial condition's columns before
 * the upload time. PostgreSQL leaves a condition that the index's own condition implies out of the
 * index's bounds, so `visibility` ahead of `createdAt` was an unbounded column and a range of upload
 * times could not be sought: for each calendar bucket of `visibility=private` it read the account's
 * whole listing index instead (a million files, by month, about 100 ms). SQLite keeps those
 * columns: without statistics it needs the equalities to prefer these indexes (migration
 * 0022-visibility-indexes).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const repeated = (...columns: string[]) => (postgres ? [] : columns);
  const indexes: Array<{ name: string; columns: string[]; where?: ReturnType<typeof sql<boolean>> }> = [
    { name: 'files_userId_mimeType_createdAt_filters', columns: ['userId', 'mimeType', 'createdAt', 'visibility', 'passwordHash', 'folderId'] },
    { name: 'files_userId_folderId_createdAt_filters', columns: ['userId', 'folderId', 'createdAt', 'visibility', 'passwordHash', 'mimeType'] },
    {
      name: 'files_public_listing',
      columns: ['userId', ...repeated('visibility', 'passwordHash'), 'createdAt', 'id', 'searchName'],
      where: sql<boolean>`${sql.ref('visibility')} = 'PUBLIC' and ${sql.ref('passwordHash')} is null`,
    },
    { name: 'files_private_listing', columns: ['userId', ...repeated('visibility'), 'createdAt', 'id', 'searchName'], where: sql<boolean>`${sql.ref('visibility')} = 'PRIVATE'` },
    { name: 'files_withPassword_listing', columns: ['userId', ...repeated('passwordHash'), 'createdAt', 'id', 'searchName'], where: sql<boolean>`${sql.ref('passwordHash')} is not null` },
  ];
  for (const { name, columns, where } of indexes) {
    await db.schema.dropIndex(name).execute();
    await db.schema
      .createIndex(name)
      .on('files')
      .columns([...columns, 'tagged'])
      .$call((builder) => (where ? builder.where(where) : builder))
      .execute();
  }
}
