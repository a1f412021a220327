import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The number of an account's files that carry at least one tag that counts (not excluded), as the
 * `fileCounts` row (`tagged`, ''), so that the total of `tag=untagged` is the account's file count
 * less this row (docs/decisions.md, "Counts per filter") instead of a count over every file that
 * looks each one up among the account's tagged files: about a second among a million files.
 *
 * Kept by triggers on `fileTags`, in the same statement as every change, whoever makes it: tags put
 * on or taken off files (also by a deleted file's or tag's foreign key), and a tag excluded or
 * included again. A file is counted when it goes from no counting tag to one, and no longer when its
 * last one goes. The account is the file's, or the tag's once the file is gone (a deleted file's
 * tags go after it). A row at zero is removed, as in migration 0018-file-counts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const q = (name: string) => `"${name}"`;
  const counts = q('fileCounts');

  await sql
    .raw(
      `insert into ${counts} (${q('userId')}, dimension, value, files)
       select f.${q('userId')}, 'tagged', '', count(*) from files f
       where exists (select 1 from ${q('fileTags')} ft where ft.${q('fileId')} = f.id and ft.excluded = 0)
       group by f.${q('userId')}`,
    )
    .execute(db);

  /** Whether file `file` has a counting tag now, in the table as the change left it. */
  const tagged = (file: string) => `exists (select 1 from ${q('fileTags')} x where x.${q('fileId')} = ${file} and x.excluded = 0)`;
  /** The file's account, or its tag's once the file is gone. */
  const account = (file: string, tag: string) =>
    `coalesce((select f.${q('userId')} from files f where f.id = ${file}), (select t.${q('userId')} from tags t where t.id = ${tag}))`;
  /**
   * Adds the changes (rows userId, delta of +1 or -1, one per file whose state changed) to the
   * counts: increments may create a row, decrements only change one that exists (an account being
   * deleted takes its rows with it), and a row at zero goes.
   */
  const apply = (changes: string) => `
    insert into ${counts} (${q('userId')}, dimension, value, files)
      select ${q('userId')}, 'tagged', '', n from (select ${q('userId')}, sum(delta) as n from (${changes}) c where ${q('userId')} is not null group by ${q('userId')}) up
      where n > 0
      ${postgres ? `order by ${q('userId')}` : ''}
      on conflict (${q('userId')}, dimension, value) do update set files = ${counts}.files + excluded.files;
    update ${counts} set files = ${counts}.files + down.n
      from (select ${q('userId')}, sum(delta) as n from (${changes}) c where ${q('userId')} is not null group by ${q('userId')}) down
      where ${counts}.${q('userId')} = down.${q('userId')} and ${counts}.dimension = 'tagged' and ${counts}.value = '' and down.n < 0;
    delete from ${counts} where ${q('userId')} in (select ${q('userId')} from (${changes}) c) and dimension = 'tagged' and value = '' and files = 0;`;

  if (postgres) {
    // Statement-level with transition tables, as in migration 0018-file-counts: a batch changes the
    // count once. The names sort after the triggers that update the account's row
    // (fileTags_listing_*), so a writer locks that row first and its counts after: no deadlock.
    // A file counted before the statement had a counting tag among the rows the statement left
    // alone, or among the rows it removed or changed.
    const before = (file: string, hasNew: boolean, hasOld: boolean) =>
      `(exists (select 1 from ${q('fileTags')} x where x.${q('fileId')} = ${file} and x.excluded = 0
          ${hasNew ? `and not exists (select 1 from new_rows n where n.${q('fileId')} = x.${q('fileId')} and n.${q('tagId')} = x.${q('tagId')})` : ''})
        ${hasOld ? `or exists (select 1 from old_rows o where o.${q('fileId')} = ${file} and o.excluded = 0)` : ''})`;
    const events = {
      insert: { referencing: 'new table as new_rows', rows: `select ${q('fileId')}, ${q('tagId')} from new_rows`, hasNew: true, hasOld: false },
      delete: { referencing: 'old table as old_rows', rows: `select ${q('fileId')}, ${q('tagId')} from old_rows`, hasNew: false, hasOld: true },
      update: {
        referencing: 'old table as old_rows new table as new_rows',
        rows: `select ${q('fileId')}, ${q('tagId')} from new_rows union all select ${q('fileId')}, ${q('tagId')} from old_rows`,
        hasNew: true,
        hasOld: true,
      },
    } as const;
    for (const [event, e] of Object.entries(events)) {
      const changes = `select ${account('a.id', 'a.tag')} as ${q('userId')}, (case when ${tagged('a.id')} then 1 else 0 end) - (case when ${before('a.id', e.hasNew, e.hasOld)} then 1 else 0 end) as delta
        from (select ${q('fileId')} as id, min(${q('tagId')}) as tag from (${e.rows}) r group by ${q('fileId')}) a`;
      const name = `hoard_filetags_tagged_${event}`;
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${apply(changes)} return null; end $$`).execute(db);
      await sql.raw(`create trigger ${q(`fileTags_tagged_${event}`)} after ${event} on ${q('fileTags')} referencing ${e.referencing} for each statement execute function ${name}()`).execute(db);
    }
  } else {
    // Row-level: one row changed. After an insert the file was counted before if another of its
    // tags counts; after a delete it still is if one is left. An update is the old row taken off
    // and the new one put on, for each of the (at most two) files it names.
    await sql
      .raw(
        `create trigger ${q('fileTags_tagged_insert')} after insert on ${q('fileTags')} when new.excluded = 0 begin ${apply(
          `select ${account(`new.${q('fileId')}`, `new.${q('tagId')}`)} as ${q('userId')}, 1 as delta
           where not exists (select 1 from ${q('fileTags')} x where x.${q('fileId')} = new.${q('fileId')} and x.excluded = 0 and x.${q('tagId')} <> new.${q('tagId')})`,
        )} end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${q('fileTags_tagged_delete')} after delete on ${q('fileTags')} when old.excluded = 0 begin ${apply(
          `select ${account(`old.${q('fileId')}`, `old.${q('tagId')}`)} as ${q('userId')}, -1 as delta where not ${tagged(`old.${q('fileId')}`)}`,
        )} end`,
      )
      .execute(db);
    const before = `(exists (select 1 from ${q('fileTags')} x where x.${q('fileId')} = a.id and x.excluded = 0 and not (x.${q('fileId')} = new.${q('fileId')} and x.${q('tagId')} = new.${q('tagId')}))
      or (a.id = old.${q('fileId')} and old.excluded = 0))`;
    await sql
      .raw(
        `create trigger ${q('fileTags_tagged_update')} after update of excluded, ${q('fileId')}, ${q('tagId')} on ${q('fileTags')} begin ${apply(
          `select ${account('a.id', 'a.tag')} as ${q('userId')}, (case when ${tagged('a.id')} then 1 else 0 end) - (case when ${before} then 1 else 0 end) as delta
           from (select id, min(tag) as tag from (select old.${q('fileId')} as id, old.${q('tagId')} as tag union all select new.${q('fileId')}, new.${q('tagId')}) r group by id) a`,
        )} end`,
      )
      .execute(db);
  }
}
