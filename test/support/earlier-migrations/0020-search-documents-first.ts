// The first version of migration 0020-search-documents (b668617), as databases made then ran it:
// test/http/migrations.test.ts upgrades such a database. Kept as it was.
import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Search documents numbered per account (docs/decisions.md, "Search index"). SQLite's trigram index
 * (migration 0016-search-index) named files by their rowid, so the account of every match had to be
 * looked up in the files table: with a million files, counting 62,000 matches took 150 ms, of which
 * the index itself needed 15. Here every file gets a document number `docId` = the account's number
 * × 2^32 + the account's running count of files, and the index is keyed by it: an account's files
 * are one range of the index, so a search is limited to the account, counted, and (with upload
 * times) split into calendar buckets by the index alone.
 *
 * - `users.accountNo`: a number of the account's own (1, 2, …), given by the database when the
 *   account is inserted; `users.docSeq`: the last number given to one of its files.
 * - `files.docId`: given by the database when the file is inserted, never reused, unique.
 * - `users.lastUploadAt` and `users.docsUnordered`: document numbers follow upload times as long as
 *   files arrive in upload order, which commitFile guarantees (the account's row lock is held from
 *   the upload time until the commit). A file inserted with an earlier upload time than one before
 *   it (by hand, or after the clock was set back), or whose upload time is changed, marks the account
 *   `docsUnordered`, and its timeline no longer counts matches by document ranges.
 *
 * The numbering is SQLite's: PostgreSQL searches through its trigram GIN indexes (migration
 * 0006-listing), which have no document numbers; there the columns exist, as the schema is one, and
 * stay empty. The numbers are columns of their own, not rowids, so `VACUUM` cannot change them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('users').addColumn('accountNo', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('docSeq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('users').addColumn('lastUploadAt', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('docsUnordered', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('files').addColumn('docId', 'bigint').execute();
  if (postgres) return;

  // Existing accounts in the order they were made; existing files in upload order within each account.
  await sql`update users set accountNo = n.no from (select id, row_number() over (order by createdAt, id) as no from users) n where users.id = n.id`.execute(db);
  await sql`create unique index users_accountNo on users(accountNo)`.execute(db);
  await sql`update files set docId = d.docId from (
      select f.rowid as r, u.accountNo * 4294967296 + row_number() over (partition by f.userId order by f.createdAt, f.id) as docId
      from files f join users u on u.id = f.userId) d
    where files.rowid = d.r`.execute(db);
  await sql`update users set docSeq = coalesce((select max(docId) - users.accountNo * 4294967296 from files where files.userId = users.id), 0),
      lastUploadAt = (select max(createdAt) from files where files.userId = users.id)`.execute(db);
  await sql`create unique index files_docId on files(docId)`.execute(db);

  await sql`create trigger users_account_no after insert on users when new.accountNo is null begin
    update users set accountNo = (select coalesce(max(accountNo), 0) + 1 from users) where rowid = new.rowid;
  end`.execute(db);

  // The index again, keyed by document number.
  for (const trigger of ['files_fts_insert', 'files_fts_delete', 'files_fts_update']) await sql`drop trigger ${sql.id(trigger)}`.execute(db);
  await sql`drop table filesSearch`.execute(db);
  await sql`create virtual table filesSearch using fts5(searchName, searchOcr, content='files', content_rowid='docId', tokenize='trigram')`.execute(db);
  await sql`insert into filesSearch(filesSearch) values ('rebuild')`.execute(db);
  // A new file: the account's next number (SQLite evaluates every expression of an UPDATE on the row
  // as it was, so `docsUnordered` compares with the previous upload time), then its entry.
  await sql`create trigger files_fts_insert after insert on files begin
    select raise(abort, 'an account holds at most 4294967295 files') from users where id = new.userId and docSeq >= 4294967295;
    update users set docSeq = docSeq + 1,
      docsUnordered = docsUnordered or (lastUploadAt is not null and new.createdAt < lastUploadAt),
      lastUploadAt = max(coalesce(lastUploadAt, new.createdAt), new.createdAt)
      where id = new.userId;
    update files set docId = (select accountNo * 4294967296 + docSeq from users where id = new.userId) where rowid = new.rowid;
    insert into filesSearch(rowid, searchName, searchOcr) select docId, searchName, searchOcr from files where rowid = new.rowid;
  end`.execute(db);
  await sql`create trigger files_fts_delete after delete on files begin
    insert into filesSearch(filesSearch, rowid, searchName, searchOcr) values ('delete', old.docId, old.searchName, old.searchOcr);
  end`.execute(db);
  await sql`create trigger files_fts_update after update of searchName, searchOcr on files when old.docId is not null begin
    insert into filesSearch(filesSearch, rowid, searchName, searchOcr) values ('delete', old.docId, old.searchName, old.searchOcr);
    insert into filesSearch(rowid, searchName, searchOcr) values (new.docId, new.searchName, new.searchOcr);
  end`.execute(db);
  await sql`create trigger files_docs_unordered after update of createdAt on files when new.createdAt <> old.createdAt begin
    update users set docsUnordered = 1 where id = new.userId;
  end`.execute(db);
}
