import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * SQLite's trigram index also holds each file's filter values as "facets" (docs/decisions.md,
 * "Search index"), so a search with a type, a visibility, a folder, a tag or the
 * gallery's images is counted and listed by the index alone, as a search alone is (migration
 * 0020-search-documents). Before, every match of the search was looked up among the files to check
 * the other filters: a million files, a name word with 66,895 matches and `private`, 68 ms to count
 * 20,182 files; a word of the recognised text in 424,257 files with a type, 270 ms.
 *
 * A facet is one trigram of private-use characters: a marker for its kind, then two digits of 12
 * bits (U+F0000 + digit) naming its value:
 * - U+E010 a MIME type, U+E011 a folder (digits 0: unfiled), U+E013 a tag (digits 0: untagged), by
 *   their code in `searchFacetValues`, given when a value is first indexed and never reused;
 * - U+E012 0: public without a password, 1: private, 2: with a password (a private file with one
 *   has both 1 and 2);
 * - U+E014 0: an image (a MIME type beginning with `image/`).
 * The facets of a file are written one after another in the column `searchFacets`; the tokenizer
 * also makes trigrams across two of them, but those begin with a digit, never with a marker, so no
 * query for a facet matches them. A search term written in the facets' characters alone is looked
 * for in the name and text columns only, so no term matches a facet.
 *
 * The index becomes contentless, with deletes by document number (FTS5's `contentless_delete`): it
 * was an external-content index of the files' columns, whose deletes must repeat the values indexed,
 * and a file's facets depend on its tags, which its row does not hold. Every change that alters a
 * file's facets indexes the file again: its type, folder, visibility or password (the triggers of
 * `files`), a tag added or removed (the triggers of `fileTags`; a deleted tag or folder changes these
 * rows through their foreign keys, which fire the same triggers).
 *
 * PostgreSQL has no such index (its trigram indexes are on the files' columns): nothing changes there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;

  await sql`create table searchFacetValues (code integer primary key, kind text not null, value text not null, unique (kind, value))`.execute(db);
  // Codes from 1: the digits 0 name "unfiled" and "untagged".
  const digits = (code: string) => `char(983040 + (${code}) / 4096, 983040 + (${code}) % 4096)`;
  const codeOf = (kind: string, value: string) => `(select code from searchFacetValues where kind = '${kind}' and value = ${value})`;
  // The facets of the file `f` (a row of files).
  const facets = `char(57360) || ${digits(codeOf('t', 'f.mimeType'))}
    || char(57361) || ${digits(`coalesce(${codeOf('f', 'f.folderId')}, 0)`)}
    || case when f.visibility = 'PUBLIC' and f.passwordHash is null then char(57362) || ${digits('0')} else '' end
    || case when f.visibility = 'PRIVATE' then char(57362) || ${digits('1')} else '' end
    || case when f.passwordHash is not null then char(57362) || ${digits('2')} else '' end
    || case when substr(f.mimeType, 1, 6) = 'image/' then char(57364) || ${digits('0')} else '' end
    || coalesce((select group_concat(char(57363) || ${digits('v.code')}, '') from fileTags ft join searchFacetValues v on v.kind = 'g' and v.value = ft.tagId
         where ft.fileId = f.id and ft.excluded = 0), char(57363) || ${digits('0')})`;
  const indexFile = (where: string) => `insert into filesSearch(rowid, searchName, searchOcr, searchFacets) select f.docId, f.searchName, f.searchOcr, ${facets} from files f where ${where} and f.docId is not null;`;
  // Not INSERT OR IGNORE: in a trigger, the conflict policy of the statement that fired it (such as
  // a foreign key's action on a deleted folder) would replace the IGNORE.
  const addValue = (kind: string, value: string) =>
    `insert into searchFacetValues(kind, value) select '${kind}', ${value} where ${value} is not null and not exists (select 1 from searchFacetValues where kind = '${kind}' and value = ${value});`;
  const valuesOfFile = (row: 'new') => `
    ${addValue('t', `${row}.mimeType`)}
    ${addValue('f', `${row}.folderId`)}`;

  // If they exist: the first version of 0020 made no files_fts_insert_unnumbered, and databases
  // made then are upgraded too.
  for (const trigger of ['files_fts_insert', 'files_fts_insert_unnumbered', 'files_fts_delete', 'files_fts_update']) await sql`drop trigger if exists ${sql.id(trigger)}`.execute(db);
  await sql`drop table filesSearch`.execute(db);
  await sql`create virtual table filesSearch using fts5(searchName, searchOcr, searchFacets, content='', contentless_delete=1, tokenize='trigram')`.execute(db);
  // A deleted entry stays in its segment, marked, until a merge drops it. By default FTS5 rewrites a
  // segment in the writing transaction once a tenth of its entries are marked: with a million files
  // in one segment, after about 100,000 files indexed again (visibility changed in batches of 200),
  // 40 batches in a row took 0.5–0.85 s instead of 0.1 s, each holding the process. Left to the daily
  // merge (src/listing/search-index.ts), which the new entries' segments set off, in short steps.
  await sql`insert into filesSearch(filesSearch, rank) values ('deletemerge', 0)`.execute(db);

  await sql`insert or ignore into searchFacetValues(kind, value) select 't', mimeType from (select distinct mimeType from files) order by mimeType`.execute(db);
  await sql`insert or ignore into searchFacetValues(kind, value) select 'f', folderId from (select distinct folderId from files where folderId is not null) order by folderId`.execute(db);
  await sql`insert or ignore into searchFacetValues(kind, value) select 'g', tagId from (select distinct tagId from fileTags) order by tagId`.execute(db);
  await sql.raw(indexFile('true')).execute(db);

  // commitFile numbers a file as it inserts it; a row inserted without a number (by hand, by a test)
  // is numbered here, as before (migration 0020-search-documents).
  await sql
    .raw(
      `create trigger files_fts_insert after insert on files when new.docId is not null begin
    ${valuesOfFile('new')}
    ${indexFile('f.rowid = new.rowid')}
  end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger files_fts_insert_unnumbered after insert on files when new.docId is null begin
    update users set docSeq = docSeq + 1 where id = new.userId;
    update files set docId = (select accountNo * 4294967296 + docSeq from users where id = new.userId) where rowid = new.rowid;
    ${valuesOfFile('new')}
    ${indexFile('f.rowid = new.rowid')}
  end`,
    )
    .execute(db);
  await sql`create trigger files_fts_delete after delete on files when old.docId is not null begin
    delete from filesSearch where rowid = old.docId;
  end`.execute(db);
  await sql
    .raw(
      `create trigger files_fts_update after update of searchName, searchOcr, mimeType, folderId, visibility, passwordHash on files when old.docId is not null begin
    ${valuesOfFile('new')}
    delete from filesSearch where rowid = old.docId;
    ${indexFile('f.rowid = new.rowid')}
  end`,
    )
    .execute(db);
  // A file's tags: indexed again with its new facets. A file being deleted is no longer in `files`.
  const reindex = (fileId: string) => `delete from filesSearch where rowid = (select docId from files where id = ${fileId});
    ${indexFile(`f.id = ${fileId}`)}`;
  await sql
    .raw(
      `create trigger fileTags_fts_insert after insert on fileTags begin
    ${addValue('g', 'new.tagId')}
    ${reindex('new.fileId')}
  end`,
    )
    .execute(db);
  await sql.raw(`create trigger fileTags_fts_delete after delete on fileTags begin ${reindex('old.fileId')} end`).execute(db);
  await sql
    .raw(
      `create trigger fileTags_fts_update after update of fileId, tagId, excluded on fileTags begin
    ${addValue('g', 'new.tagId')}
    ${reindex('old.fileId')}
    ${reindex('new.fileId')}
  end`,
    )
    .execute(db);
}
