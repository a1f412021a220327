import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: the sort keys of a file next to its document number (docs/decisions.md, "Search index").
 * A page of a search sorted by name, size, views or downloads needs every match's sort key, and the
 * trigram index names the matches by document number only. Through the unique index on `docId`
 * alone, each match cost a look-up in the index and then one in the table, whose rows are large:
 * 76,000 matches among a million files took 200 ms. This index holds the number with the account
 * and every sort key, so the same read never touches the table (60–80 ms).
 *
 * SQLite's planner, lacking statistics, takes a unique index over any other for an equality on its
 * column, so the numbers' uniqueness moves to an index on the expression `docId * 1`: equal exactly
 * when the numbers are, and never chosen for a look-up by `docId`. PostgreSQL has no document
 * numbers (migration 0020-search-documents) and is unchanged.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`drop index files_docId`.execute(db);
  await sql`create unique index files_docId_unique on files(docId * 1)`.execute(db);
  await sql`create index files_docId_sortKeys on files(docId, userId, createdAt, size, views, downloads, searchName, id)`.execute(db);
}
