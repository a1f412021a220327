import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `fileTags.createdAt`: the tagged file's upload time, beside the tag, so that a tag's timeline
 * counts each calendar bucket as one range of the index (tagId, excluded, createdAt) instead of
 * looking up every file of the tag (a tag of 30,000 files among a million took 62–74 ms by month on
 * SQLite; docs/decisions.md, "Timeline from counts").
 *
 * The database keeps it, whoever writes: a row inserted without it takes its file's upload time
 * (the application gives it where it has it at hand), a row moved to another file takes that file's,
 * and a file whose upload time changes (Hoard never changes one; by hand, say) passes it to its rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const q = (name: string) => `"${name}"`;
  await db.schema.alterTable('fileTags').addColumn('createdAt', 'bigint').execute();
  // The filling changes no count and nothing a listing shows. PostgreSQL's statement-level triggers
  // on tag rows (migrations 0008, 0018 and 0023) would each compare the whole statement's old and new
  // rows, unindexed: with 300,000 tag rows the migration did not end within a minute.
  if (postgres) await sql.raw(`alter table ${q('fileTags')} disable trigger user`).execute(db);
  await sql.raw(`update ${q('fileTags')} set ${q('createdAt')} = (select f.${q('createdAt')} from files f where f.id = ${q('fileTags')}.${q('fileId')})`).execute(db);
  if (postgres) await sql.raw(`alter table ${q('fileTags')} enable trigger user`).execute(db);
  await db.schema.createIndex('fileTags_tagId_excluded_createdAt').on('fileTags').columns(['tagId', 'excluded', 'createdAt']).execute();

  const uploadTime = (fileId: string) => `(select f.${q('createdAt')} from files f where f.id = ${fileId})`;
  if (postgres) {
    await sql.raw(`create function hoard_file_tags_upload_time() returns trigger language plpgsql as $$ begin new.${q('createdAt')} := ${uploadTime(`new.${q('fileId')}`)}; return new; end $$`).execute(db);
    await sql
      .raw(`create trigger ${q('fileTags_time_insert')} before insert on ${q('fileTags')} for each row when (new.${q('createdAt')} is null) execute function hoard_file_tags_upload_time()`)
      .execute(db);
    await sql
      .raw(
        `create trigger ${q('fileTags_time_update')} before update of ${q('fileId')} on ${q('fileTags')} for each row when (old.${q('fileId')} is distinct from new.${q('fileId')}) execute function hoard_file_tags_upload_time()`,
      )
      .execute(db);
    await sql
      .raw(
        `create function hoard_files_tag_upload_time() returns trigger language plpgsql as $$ begin update ${q('fileTags')} set ${q('createdAt')} = new.${q('createdAt')} where ${q('fileId')} = new.id; return null; end $$`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${q('files_tag_time_update')} after update of ${q('createdAt')} on files for each row when (old.${q('createdAt')} is distinct from new.${q('createdAt')}) execute function hoard_files_tag_upload_time()`,
      )
      .execute(db);
  } else {
    // SQLite's triggers cannot change the row being written: it is updated after.
    const fill = (row: 'new') => `update ${q('fileTags')} set ${q('createdAt')} = ${uploadTime(`${row}.${q('fileId')}`)} where ${q('fileId')} = ${row}.${q('fileId')} and ${q('tagId')} = ${row}.${q('tagId')};`;
    await sql.raw(`create trigger ${q('fileTags_time_insert')} after insert on ${q('fileTags')} when new.${q('createdAt')} is null begin ${fill('new')} end`).execute(db);
    await sql.raw(`create trigger ${q('fileTags_time_update')} after update of ${q('fileId')} on ${q('fileTags')} when old.${q('fileId')} is not new.${q('fileId')} begin ${fill('new')} end`).execute(db);
    await sql
      .raw(
        `create trigger ${q('files_tag_time_update')} after update of ${q('createdAt')} on files when old.${q('createdAt')} is not new.${q('createdAt')} begin update ${q('fileTags')} set ${q('createdAt')} = new.${q('createdAt')} where ${q('fileId')} = new.id; end`,
      )
      .execute(db);
  }
}
