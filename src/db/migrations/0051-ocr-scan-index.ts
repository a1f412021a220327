import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite: the index of the files' folded recognised text (`files_userId_searchOcr_id`, migration
 * 0006-listing) goes. It was made for search, when every search read the text of the account's
 * files; since the trigram index (migration 0016-search-index) serves every term of three characters
 * or more, it served only one- and two-letter searches, which read all the text either way: from
 * this index, or from the files' rows (docs/decisions.md, "Search index"). Measured with the
 * benchmark's million files, 600,000 of them with text: the index took 561 MiB of a 4.43 GiB database
 * (each entry repeats a file's whole text), and seeding 200,000 files took 56.6–62.0 s without it
 * against 66.5–73.6 s with it; one- and two-letter searches read the text from the rows, in upload
 * order (src/listing/file-query.ts), and took less time than before (docs/decisions.md).
 *
 * PostgreSQL never had it (its trigram indexes serve every term).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`drop index if exists files_userId_searchOcr_id`.execute(db);
}
