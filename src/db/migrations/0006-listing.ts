import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * File listing, search and timeline (docs/decisions.md, "Listing"):
 * - `files.searchName` / `files.searchOcr`: the name and OCR text folded by `foldForSearch()`
 *   (src/shared/search-text.ts; the rows that exist when this runs are folded by its own copy), written
 *   by the application wherever a name or OCR text is written. On PostgreSQL they use the "C"
 *   collation, so ordering by name is code-point order, exactly as on SQLite.
 * - `users.fileCount`: the account's number of files, kept by triggers in the same statement as every
 *   insert or delete, so an unfiltered listing needs no COUNT over the account's rows.
 * - indexes for every sort order and the filters that can use one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const collateC = (c: any) => (postgres ? c.modifyEnd(sql`collate "C"`) : c);

  await db.schema.alterTable('files').addColumn('searchName', 'text', collateC).execute();
  await db.schema.alterTable('files').addColumn('searchOcr', 'text', collateC).execute();
  await db.schema.alterTable('users').addColumn('fileCount', 'integer', (c) => c.notNull().defaultTo(0)).execute();

  // Existing rows, in batches by ID.
  let after = '';
  for (;;) {
    const rows: Array<{ id: string; name: string; ocrText: string | null }> = await db
      .selectFrom('files')
      .select(['id', 'name', 'ocrText'])
      .where('id', '>', after)
      .orderBy('id')
      .limit(1000)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      await db
        .updateTable('files')
        .set({ searchName: foldForSearch(row.name), searchOcr: row.ocrText === null ? null : foldForSearch(row.ocrText) })
        .where('id', '=', row.id)
        .execute();
    }
    after = rows[rows.length - 1]!.id;
  }
  await sql`update ${sql.table('users')} set ${sql.ref('fileCount')} = (select count(*) from ${sql.table('files')} where ${sql.ref('files.userId')} = ${sql.ref('users.id')})`.execute(db);

  if (postgres) {
    // Statement-level, with transition tables: a batch insert updates each account row once.
    await sql`
      create function hoard_files_count() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          update users u set "fileCount" = u."fileCount" + n.c
            from (select "userId", count(*) as c from new_rows group by "userId") n where u.id = n."userId";
        else
          update users u set "fileCount" = u."fileCount" - o.c
            from (select "userId", count(*) as c from old_rows group by "userId") o where u.id = o."userId";
        end if;
        return null;
      end $$`.execute(db);
    await sql`create trigger files_count_insert after insert on files referencing new table as new_rows for each statement execute function hoard_files_count()`.execute(db);
    await sql`create trigger files_count_delete after delete on files referencing old table as old_rows for each statement execute function hoard_files_count()`.execute(db);
    // A backstop for rows written without the search columns (manual SQL, fixtures): lower() of the
    // raw text, which folds per the database's locale. The application always fills them itself.
    await sql`
      create function hoard_files_search_backstop() returns trigger language plpgsql as $$
      begin
        if new."searchName" is null then new."searchName" := lower(new.name); end if;
        if new."searchOcr" is null and new."ocrText" is not null then new."searchOcr" := lower(new."ocrText"); end if;
        return new;
      end $$`.execute(db);
    await sql`create trigger files_search_backstop before insert on files for each row execute function hoard_files_search_backstop()`.execute(db);
  } else {
    await sql`create trigger files_count_insert after insert on files begin
      update users set fileCount = fileCount + 1 where id = new.userId;
    end`.execute(db);
    await sql`create trigger files_count_delete after delete on files begin
      update users set fileCount = fileCount - 1 where id = old.userId;
    end`.execute(db);
    // SQLite's lower() folds ASCII only; the application always fills the columns itself.
    await sql`create trigger files_search_backstop after insert on files
      when new.searchName is null or (new.ocrText is not null and new.searchOcr is null) begin
      update files set searchName = coalesce(new.searchName, lower(new.name)), searchOcr = coalesce(new.searchOcr, lower(new.ocrText)) where id = new.id;
    end`.execute(db);
  }

  // The newest/oldest order, widened with every column a cheap filter reads (visibility, password
  // presence, type, folder, folded name), so counting a filtered selection, or walking it in date
  // order until a page is full, reads this index alone and never the rows.
  await db.schema.dropIndex('files_userId_createdAt_id').execute();
  await db.schema
    .createIndex('files_userId_createdAt_listing')
    .on('files')
    .columns(['userId', 'createdAt', 'id', 'visibility', 'passwordHash', 'mimeType', 'folderId', 'searchName'])
    .execute();
  // The other sort orders (each ends in the ID, the tie-breaker, so a page's IDs come from the index).
  await db.schema.createIndex('files_userId_size_id').on('files').columns(['userId', 'size', 'id']).execute();
  await db.schema.createIndex('files_userId_views_id').on('files').columns(['userId', 'views', 'id']).execute();
  await db.schema.createIndex('files_userId_downloads_id').on('files').columns(['userId', 'downloads', 'id']).execute();
  await db.schema.createIndex('files_userId_searchName_id').on('files').columns(['userId', 'searchName', 'id']).execute();
  // GET /api/files/types (one probe per distinct type) and the types filter.
  await db.schema.createIndex('files_userId_mimeType_createdAt').on('files').columns(['userId', 'mimeType', 'createdAt']).execute();
  // Tag filters: files of a tag, and whether a file has any tag that counts.
  await db.schema.createIndex('fileTags_tagId_excluded_fileId').on('fileTags').columns(['tagId', 'excluded', 'fileId']).execute();
  await db.schema.createIndex('fileTags_fileId_excluded').on('fileTags').columns(['fileId', 'excluded']).execute();

  if (postgres) {
    // Substring search through trigram indexes, when the pg_trgm extension can be had (it ships with
    // PostgreSQL and is trusted, so a database owner may create it). Without it search still works,
    // by scanning the account's rows.
    await sql`savepoint hoard_trigram`.execute(db);
    try {
      await sql`create extension if not exists pg_trgm`.execute(db);
      await sql`create index ${sql.id('files_searchName_trgm')} on ${sql.table('files')} using gin (${sql.ref('searchName')} gin_trgm_ops)`.execute(db);
      await sql`create index ${sql.id('files_searchOcr_trgm')} on ${sql.table('files')} using gin (${sql.ref('searchOcr')} gin_trgm_ops)`.execute(db);
      await sql`release savepoint hoard_trigram`.execute(db);
    } catch {
      await sql`rollback to savepoint hoard_trigram`.execute(db);
    }
  } else {
    // OCR search reads only the files that have OCR text, from this index alone.
    await db.schema.createIndex('files_userId_searchOcr_id').on('files').columns(['userId', 'searchOcr', 'id']).where(sql.ref('searchOcr'), 'is not', null).execute();
  }
}

/**
 * A copy of the application's `foldForSearch()` (src/shared/search-text.ts) as it was when this
 * migration was written. Migrations are frozen and import no application code: were the application's
 * folding to change later, this migration must still fold the rows it fills exactly as it always did
 * (a changed folding needs its own migration to refold stored values). test/unit/search-folding.test.ts
 * fixes this copy's output and checks that the application's function agrees with it today.
 */
export function foldForSearch(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase().replaceAll('ς', 'σ').replaceAll('i\u0307', 'i');
}
