import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: the files' folded names in a narrow table of their own, with indexes that let a search
 * count and bucket its name matches without reading the files' rows (docs/decisions.md, "Search
 * index").
 *
 * A trigram index only proposes candidates: each is checked against its row. Through the files
 * table's index (migration 0006-listing) that check read a row of the files table per match, spread
 * over the whole table: with a million files (1 GB, recognised text included), counting the 66,895
 * matches of a name word visited 54,298 pages and took 96 ms.
 *
 * A name contains the term either at its start or after its first character. So the table has two
 * indexes, one for each:
 * - (account, folded name) with the upload time: the names that begin with the term are one range
 *   of it (names collate "C", so LIKE 'term%' is a range), counted and read without the table;
 * - trigrams of the name after its first character: they propose only the names that contain the
 *   term further on.
 * Names mostly begin with the word a search names ("Screenshot …", "IMG_…", "invoice-…"): the same
 * 66,895 matches were counted in 9 ms, where a trigram index over this table's whole names took 45
 * (it proposes every match, and each is checked against its row).
 *
 * `fileNames` holds one row per file, kept by triggers in the same statement as every insert and
 * change of a name, an upload time or an owner, and removed with its file (foreign key). The files'
 * own trigram indexes stay: the recognised text is searched there (it would make this table five
 * times as large), and a search with other filters reads the files' rows anyway.
 *
 * SQLite has its own index (migrations 0016-search-index and 0020-search-documents): nothing here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const q = (name: string) => `"${name}"`;
  await sql
    .raw(
      `create table ${q('fileNames')} (
         ${q('fileId')} text primary key references files(id) on delete cascade,
         ${q('userId')} text not null,
         ${q('createdAt')} bigint not null,
         ${q('searchName')} text collate "C"
       )`,
    )
    .execute(db);
  await sql.raw(`insert into ${q('fileNames')} select id, ${q('userId')}, ${q('createdAt')}, ${q('searchName')} from files`).execute(db);

  // Statement-level on insert, so that a batch is one insert here too; the BEFORE trigger of
  // migration 0006-listing has already folded the names of rows inserted without one.
  await sql
    .raw(
      `create function hoard_file_names_insert() returns trigger language plpgsql as $$ begin
         insert into ${q('fileNames')} select id, ${q('userId')}, ${q('createdAt')}, ${q('searchName')} from new_rows;
         return null;
       end $$`,
    )
    .execute(db);
  await sql.raw(`create trigger ${q('files_names_insert')} after insert on files referencing new table as new_rows for each statement execute function hoard_file_names_insert()`).execute(db);
  // Row-level on the three columns, so that other updates (views, visibility, OCR text) cost nothing.
  await sql
    .raw(
      `create function hoard_file_names_update() returns trigger language plpgsql as $$ begin
         update ${q('fileNames')} set ${q('userId')} = new.${q('userId')}, ${q('createdAt')} = new.${q('createdAt')}, ${q('searchName')} = new.${q('searchName')}
           where ${q('fileId')} = new.id;
         return null;
       end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger ${q('files_names_update')} after update of ${q('userId')}, ${q('createdAt')}, ${q('searchName')} on files for each row
         when (old.${q('userId')} is distinct from new.${q('userId')} or old.${q('createdAt')} is distinct from new.${q('createdAt')} or old.${q('searchName')} is distinct from new.${q('searchName')})
         execute function hoard_file_names_update()`,
    )
    .execute(db);

  await sql.raw(`create index ${q('fileNames_userId_searchName')} on ${q('fileNames')} (${q('userId')}, ${q('searchName')}) include (${q('createdAt')})`).execute(db);
  // The trigram index where the extension is there (migration 0006-listing creates it when it can).
  const trigram = await sql<{ one: number }>`select 1 as one from pg_extension where extname = 'pg_trgm'`.execute(db);
  if (trigram.rows.length > 0) await sql.raw(`create index ${q('fileNames_rest_trgm')} on ${q('fileNames')} using gin (substr(${q('searchName')}, 2) gin_trgm_ops)`).execute(db);
  await sql.raw(`analyze ${q('fileNames')}`).execute(db);
}
