import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `files.tagged`: 1 when the file carries at least one tag that counts (not excluded), else 0, with
 * an index of the tagged files in upload order, so that the timeline of `tag=untagged` is the
 * account's counts per bucket (migration 0019-upload-counts) less its tagged files' counts, each a
 * range of that index. Before, every file of the account was looked up among its tagged files:
 * 0.7 s at a million files (docs/decisions.md, "Timeline from counts").
 *
 * Kept by triggers on `fileTags`, in the same statement as every change, whoever makes it, as the
 * tagged count is (migration 0023-tagged-count): a tag put on or taken off (also by a deleted tag's
 * foreign key), excluded or included again, or a row moved to another file. Only files whose state
 * changes are written.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const q = (name: string) => `"${name}"`;
  await db.schema.alterTable('files').addColumn('tagged', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  /** Whether file `file` has a counting tag now, in the table as the change left it. */
  const hasTag = (file: string) => `exists (select 1 from ${q('fileTags')} x where x.${q('fileId')} = ${file} and x.excluded = 0)`;
  // The filling changes nothing a count or a listing shows; PostgreSQL's statement-level triggers
  // on files would each go through every row it writes.
  if (postgres) await sql.raw(`alter table files disable trigger user`).execute(db);
  await sql.raw(`update files set tagged = 1 where ${hasTag('files.id')}`).execute(db);
  if (postgres) await sql.raw(`alter table files enable trigger user`).execute(db);
  await db.schema
    .createIndex('files_userId_createdAt_tagged')
    .on('files')
    .columns(['userId', 'createdAt'])
    .where(sql.ref('tagged'), '=', sql.lit(1))
    .execute();

  /** Sets `tagged` of the files whose IDs `ids` selects, where it changed. */
  const refresh = (ids: string) => `update files set tagged = case when ${hasTag('files.id')} then 1 else 0 end
    where files.id in (${ids}) and tagged <> case when ${hasTag('files.id')} then 1 else 0 end;`;
  if (postgres) {
    // Statement-level with transition tables, named to fire after the triggers that lock the
    // account's row and its counts (fileTags_listing_*, fileTags_tally_*, fileTags_tagged_*).
    const events = {
      insert: { referencing: 'new table as new_rows', ids: `select ${q('fileId')} from new_rows` },
      delete: { referencing: 'old table as old_rows', ids: `select ${q('fileId')} from old_rows` },
      update: { referencing: 'old table as old_rows new table as new_rows', ids: `select ${q('fileId')} from new_rows union select ${q('fileId')} from old_rows` },
    } as const;
    for (const [event, e] of Object.entries(events)) {
      const name = `hoard_filetags_untagged_${event}`;
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${refresh(e.ids)} return null; end $$`).execute(db);
      await sql.raw(`create trigger ${q(`fileTags_untagged_${event}`)} after ${event} on ${q('fileTags')} referencing ${e.referencing} for each statement execute function ${name}()`).execute(db);
    }
  } else {
    await sql.raw(`create trigger ${q('fileTags_untagged_insert')} after insert on ${q('fileTags')} when new.excluded = 0 begin ${refresh(`new.${q('fileId')}`)} end`).execute(db);
    await sql.raw(`create trigger ${q('fileTags_untagged_delete')} after delete on ${q('fileTags')} when old.excluded = 0 begin ${refresh(`old.${q('fileId')}`)} end`).execute(db);
    await sql
      .raw(`create trigger ${q('fileTags_untagged_update')} after update of excluded, ${q('fileId')} on ${q('fileTags')} begin ${refresh(`old.${q('fileId')}, new.${q('fileId')}`)} end`)
      .execute(db);
  }
}
