import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * What a database made by the first version of a migration that was edited after it landed lacks,
 * made as the version that landed last makes it (docs/decisions.md, "Upgrades"). Each repair looks
 * for its case first: a database made by the last versions is left as it is.
 *
 * - 0003-files, first version: `files.sha256` NOT NULL. A chunked upload has no SHA-256 (its bytes
 *   are joined where they are stored), and its completion failed.
 * - 0020-search-documents, first version: no check that `users.docSeq` stays below 2^32 (its
 *   trigger raised instead, which 0034-search-facets replaced); on SQLite, `files_count_insert` did
 *   not keep `users.lastUploadAt` and `users.docsUnordered` (that trigger did), so nothing kept them
 *   since 0034: uploads lost their floor of the previous upload time, and an account whose files
 *   arrived out of upload order was still taken for one in order by searched timelines.
 * - 0034-search-facets, first version (SQLite): the search index's `deletemerge` was left at FTS5's
 *   default, which merges a batch of deletes inside the writing transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table files alter column sha256 drop not null`.execute(db);
    const check = await sql`select 1 from pg_constraint where conname = 'users_docSeq_check'`.execute(db);
    if (check.rows.length === 0) await sql`alter table users add constraint "users_docSeq_check" check ("docSeq" < 4294967296)`.execute(db);
    return;
  }

  await rebuildWithColumn(db, 'files', '"sha256" text not null', '"sha256" text');
  await rebuildWithColumn(db, 'users', '"docSeq" bigint default 0 not null', '"docSeq" bigint default 0 not null check ("docSeq" < 4294967296)');

  const countInsert = await sql<{ sql: string }>`select sql from sqlite_master where type = 'trigger' and name = 'files_count_insert'`.execute(db);
  if (!countInsert.rows[0]?.sql.includes('lastUploadAt')) {
    await sql`drop trigger if exists files_count_insert`.execute(db);
    await sql`create trigger files_count_insert after insert on files begin
    update users set fileCount = fileCount + 1, listingVersion = listingVersion + 1,
      docsUnordered = docsUnordered or (lastUploadAt is not null and new.createdAt < lastUploadAt),
      lastUploadAt = max(coalesce(lastUploadAt, new.createdAt), new.createdAt)
      where id = new.userId;
  end`.execute(db);
    // What went unkept meanwhile: the latest upload time, and whether the files' numbers still
    // follow their upload times (a file numbered after another but uploaded before it).
    await sql`update users set lastUploadAt = (select max(createdAt) from files where files.userId = users.id)`.execute(db);
    await sql`update users set docsUnordered = 1 where exists (
        select 1 from (select createdAt, max(createdAt) over (order by docId rows between unbounded preceding and 1 preceding) as before
          from files where files.userId = users.id and docId is not null) ordered
        where ordered.createdAt < ordered.before)`.execute(db);
  }

  await sql`insert into filesSearch(filesSearch, rank) values ('deletemerge', 0)`.execute(db);
}

/**
 * SQLite alters a column's constraints only by making the table anew (sqlite.org, "Making Other
 * Kinds Of Table Schema Changes"): when `table`'s definition has `column` exactly as written, the
 * table is made again with `replacement`, its rows copied (with their rowids), its indexes and
 * triggers made again. This needs foreign keys off, which the migrator sees to (src/db/migrator.ts):
 * with them on, renaming the old table away would point the other tables' foreign keys at it, and
 * dropping it would delete their rows (ON DELETE CASCADE). With `legacy_alter_table` on as well, the
 * rename rewrites no reference to it, so the other tables' foreign keys and triggers keep naming
 * `table`; a foreign key check before the commit confirms every reference still holds.
 */
async function rebuildWithColumn(db: Kysely<any>, table: string, column: string, replacement: string): Promise<void> {
  const definition = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db);
  const create = definition.rows[0]?.sql ?? '';
  const at = /[,)]/.exec(create.slice(create.indexOf(column) + column.length));
  if (!create.includes(column) || at?.index !== 0) return;
  const foreignKeys = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db);
  if (Number(foreignKeys.rows[0]?.foreign_keys) !== 0) throw new Error(`Making the table ${table} anew needs foreign keys off (src/db/migrator.ts)`);
  const dependents = await sql<{ sql: string }>`select sql from sqlite_master where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null order by type, name`.execute(db);
  const columns = (await sql<{ name: string }>`select name from pragma_table_info(${table})`.execute(db)).rows.map((r) => sql.id(r.name));
  const old = `${table}_before_rebuild`;
  await sql`pragma legacy_alter_table = on`.execute(db);
  await sql`alter table ${sql.id(table)} rename to ${sql.id(old)}`.execute(db);
  await sql.raw(create.replace(column, replacement)).execute(db);
  await sql`insert into ${sql.id(table)} (rowid, ${sql.join(columns)}) select rowid, ${sql.join(columns)} from ${sql.id(old)}`.execute(db);
  await sql`drop table ${sql.id(old)}`.execute(db);
  for (const { sql: statement } of dependents.rows) await sql.raw(statement).execute(db);
  await sql`pragma legacy_alter_table = off`.execute(db);
  const broken = await sql`pragma foreign_key_check`.execute(db);
  if (broken.rows.length > 0) throw new Error(`Making the table ${table} anew broke ${broken.rows.length} references: ${JSON.stringify(broken.rows.slice(0, 3))}`);
}
