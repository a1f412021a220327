import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Substring search through an index on SQLite (docs/decisions.md, "Search index"): an FTS5 table
 * with the trigram tokenizer over the folded name and OCR text (`files.searchName`,
 * `files.searchOcr`), so a search reads the files that contain the term instead of every file of the
 * account. Its content is the files table itself (external content, by rowid): the index stores no
 * second copy of the text, and triggers keep it in step in the same statement as every insert,
 * delete and change of those columns, whoever writes them.
 *
 * PostgreSQL already has its trigram GIN indexes on both columns (migration 0006-listing).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  await sql`create virtual table filesSearch using fts5(searchName, searchOcr, content='files', content_rowid='rowid', tokenize='trigram')`.execute(db);
  await sql`insert into filesSearch(filesSearch) values ('rebuild')`.execute(db);
  await sql`create trigger files_fts_insert after insert on files begin
    insert into filesSearch(rowid, searchName, searchOcr) values (new.rowid, new.searchName, new.searchOcr);
  end`.execute(db);
  await sql`create trigger files_fts_delete after delete on files begin
    insert into filesSearch(filesSearch, rowid, searchName, searchOcr) values ('delete', old.rowid, old.searchName, old.searchOcr);
  end`.execute(db);
  await sql`create trigger files_fts_update after update of searchName, searchOcr on files begin
    insert into filesSearch(filesSearch, rowid, searchName, searchOcr) values ('delete', old.rowid, old.searchName, old.searchOcr);
    insert into filesSearch(rowid, searchName, searchOcr) values (new.rowid, new.searchName, new.searchOcr);
  end`.execute(db);
}
