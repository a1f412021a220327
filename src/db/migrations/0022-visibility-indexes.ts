import { sql, type Kysely } from 'kysely';

/**
 * The account's public, private and password-protected files, each visibility in a partial index of
 * its own, in upload order with the name's sort key. A listing of a visibility that few of an
 * account's files have (the few public files of an account that uploads privately, say) otherwise
 * walks all of its files for them: 123 ms among a million.
 *
 * The index columns repeat the partial condition (`visibility`, `passwordHash`) so that SQLite,
 * which has no statistics, sees equalities it can use and prefers these indexes over the account's
 * listing index (migration 0006-listing), which also holds both columns. For the same reason the
 * index of files with a password (migration 0018-file-counts) is made anew: SQLite never chose it
 * over the listing index. A file is public, or private, or both private and protected: together the
 * three cost about one index over all files.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // If it exists: the first version of 0018 did not make it, and databases made then are upgraded too.
  await db.schema.dropIndex('files_userId_createdAt_withPassword').ifExists().execute();
  await db.schema
    .createIndex('files_public_listing')
    .on('files')
    .columns(['userId', 'visibility', 'passwordHash', 'createdAt', 'id', 'searchName'])
    .where(sql<boolean>`${sql.ref('visibility')} = 'PUBLIC' and ${sql.ref('passwordHash')} is null`)
    .execute();
  await db.schema
    .createIndex('files_private_listing')
    .on('files')
    .columns(['userId', 'visibility', 'createdAt', 'id', 'searchName'])
    .where(sql.ref('visibility'), '=', sql.lit('PRIVATE'))
    .execute();
  await db.schema
    .createIndex('files_withPassword_listing')
    .on('files')
    .columns(['userId', 'passwordHash', 'createdAt', 'id', 'searchName'])
    .where(sql.ref('passwordHash'), 'is not', null)
    .execute();
}
