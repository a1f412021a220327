import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `users.listingVersion`: a counter that changes, in the same transaction, with everything an
 * account's file listing shows or filters by: its files (any column, so views and downloads too),
 * the tags on them, its tags and its folders. Kept by triggers, so no code path can forget it.
 * Two reads of the same listing with the same version return the same response; the listing cache
 * (src/listing/listing-cache.ts) relies on exactly that, in every process sharing the database.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable('users').addColumn('listingVersion', 'bigint', (c) => c.notNull().defaultTo(0)).execute();

  if (postgres) {
    // Statement-level with transition tables, like the file count: a batch changes each account row once.
    await sql`
      create or replace function hoard_files_count() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          update users u set "fileCount" = u."fileCount" + n.c, "listingVersion" = u."listingVersion" + 1
            from (select "userId", count(*) as c from new_rows group by "userId") n where u.id = n."userId";
        else
          update users u set "fileCount" = u."fileCount" - o.c, "listingVersion" = u."listingVersion" + 1
            from (select "userId", count(*) as c from old_rows group by "userId") o where u.id = o."userId";
        end if;
        return null;
      end $$`.execute(db);
    // A trigger with transition tables serves one event, so each event has its own function, reading
    // the transition tables that event has; the trigger's argument says whether the changed rows
    // name their account (`user`) or their file (`file`).
    const transitionTables = { insert: ['new_rows'], delete: ['old_rows'], update: ['new_rows', 'old_rows'] } as const;
    for (const [event, tables] of Object.entries(transitionTables)) {
      const changed = (column: string) => sql.raw(tables.map((table) => `select "${column}" from ${table}`).join(' union '));
      await sql`
        create function ${sql.id(`hoard_listing_changed_${event}`)}() returns trigger language plpgsql as $$
        begin
          if tg_argv[0] = 'file' then
            update users set "listingVersion" = "listingVersion" + 1 where id in (select f."userId" from files f where f.id in (${changed('fileId')}));
          else
            update users set "listingVersion" = "listingVersion" + 1 where id in (${changed('userId')});
          end if;
          return null;
        end $$`.execute(db);
    }
    const referencing = { insert: sql`new table as new_rows`, delete: sql`old table as old_rows`, update: sql`old table as old_rows new table as new_rows` };
    const onChange = (table: string, event: keyof typeof transitionTables, kind: 'file' | 'user') =>
      sql`create trigger ${sql.id(`${table}_listing_${event}`)} after ${sql.raw(event)} on ${sql.table(table)} referencing ${referencing[event]} for each statement execute function ${sql.id(`hoard_listing_changed_${event}`)}(${sql.lit(kind)})`.execute(db);
    // Inserts and deletes of files change the version with the file count, above.
    await onChange('files', 'update', 'user');
    for (const [table, kind] of [
      ['fileTags', 'file'],
      ['tags', 'user'],
      ['folders', 'user'],
    ] as const) {
      for (const event of ['insert', 'update', 'delete'] as const) await onChange(table, event, kind);
    }
  } else {
    await sql`drop trigger files_count_insert`.execute(db);
    await sql`drop trigger files_count_delete`.execute(db);
    await sql`create trigger files_count_insert after insert on files begin
      update users set fileCount = fileCount + 1, listingVersion = listingVersion + 1 where id = new.userId;
    end`.execute(db);
    await sql`create trigger files_count_delete after delete on files begin
      update users set fileCount = fileCount - 1, listingVersion = listingVersion + 1 where id = old.userId;
    end`.execute(db);
    await sql`create trigger files_listing_update after update on files begin
      update users set listingVersion = listingVersion + 1 where id = new.userId;
    end`.execute(db);
    const ownerOf = { fileTags: (row: string) => `(select userId from files where id = ${row}.fileId)`, tags: (row: string) => `${row}.userId`, folders: (row: string) => `${row}.userId` };
    for (const [table, owner] of Object.entries(ownerOf)) {
      const bump = (row: string) => sql.raw(`update users set listingVersion = listingVersion + 1 where id = ${owner(row)};`);
      await sql`create trigger ${sql.id(`${table}_listing_insert`)} after insert on ${sql.table(table)} begin ${bump('new')} end`.execute(db);
      await sql`create trigger ${sql.id(`${table}_listing_update`)} after update on ${sql.table(table)} begin ${bump('new')} end`.execute(db);
      await sql`create trigger ${sql.id(`${table}_listing_delete`)} after delete on ${sql.table(table)} begin ${bump('old')} end`.execute(db);
    }
  }
}
