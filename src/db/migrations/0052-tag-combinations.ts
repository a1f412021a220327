import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `tagCombinations`: an account's number of files per tag and combination of MIME type, visibility,
 * password (0 or 1) and folder ('' for files in no folder), so that the exact total of a tag with a
 * type, a visibility or a folder is a sum of a few rows, as migration 0028-filter-combinations made it
 * for those filters without a tag (docs/decisions.md, "Counts per filter"). Before, the files of the
 * other filter were each looked up among the tag's: the first page of `tag=…&visibility=public` among
 * a million files took 323 ms on SQLite and 413 ms on PostgreSQL, now 7.4 and 11.4 ms. Only tags
 * that count (not excluded) are counted.
 *
 * Each tag row carries its file's four columns (`fileTags.mimeType`, `visibility`, `password`,
 * `folderId`), as it carries the upload time (migration 0030-tag-upload-times), and is counted by
 * its own columns alone. A deleted file's tag rows are deleted by the foreign key once the file's row
 * is gone, so a count kept from the files' rows could not tell which rows to take away. The database
 * keeps the columns, whoever writes: a row inserted without them takes its file's (the application
 * gives them where it has them at hand), a row moved to another file takes that file's, and a file
 * whose type, visibility, password or folder changes (a deleted folder's files moved out of it
 * included) passes them to its rows. A count changes with the rows: a row inserted, deleted,
 * excluded or included again, moved to another tag, or given other columns. A row whose count
 * reaches zero is removed, and a deleted tag's rows go with it (its foreign key).
 *
 * An account has at most one row per tag row, and usually far fewer: its tags × the combinations
 * their files use.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const q = (name: string) => `"${name}"`;

  for (const column of ['mimeType', 'visibility', 'folderId'] as const) await db.schema.alterTable('fileTags').addColumn(column, 'text').execute();
  await db.schema.alterTable('fileTags').addColumn('password', 'integer').execute();
  /** A file row `r`'s four columns as its tag rows hold them: `mimeType, visibility, password, folderId`. */
  const copyOf = (r: string) => `${r}.${q('mimeType')}, ${r}.visibility, case when ${r}.${q('passwordHash')} is null then 0 else 1 end, coalesce(${r}.${q('folderId')}, '')`;
  /** The four columns of file `file`, as a row value. */
  const facetsOf = (file: string) => `(select ${copyOf('f')} from files f where f.id = ${file})`;
  const facetColumns = `(${q('mimeType')}, visibility, password, ${q('folderId')})`;
  // The filling changes nothing a count or a listing shows; PostgreSQL's statement-level triggers on
  // tag rows would each compare the whole statement's old and new rows (migration 0030 measured it).
  if (postgres) await sql.raw(`alter table ${q('fileTags')} disable trigger user`).execute(db);
  await sql.raw(`update ${q('fileTags')} set ${facetColumns} = ${facetsOf(`${q('fileTags')}.${q('fileId')}`)}`).execute(db);
  if (postgres) await sql.raw(`alter table ${q('fileTags')} enable trigger user`).execute(db);

  await db.schema
    .createTable('tagCombinations')
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('tagId', 'text', (c) => c.notNull().references('tags.id').onDelete('cascade'))
    .addColumn('mimeType', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('password', 'integer', (c) => c.notNull())
    .addColumn('folderId', 'text', (c) => c.notNull())
    .addColumn('files', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tagCombinations_pk', ['userId', 'tagId', 'mimeType', 'visibility', 'password', 'folderId'])
    .execute();
  // The foreign key's look-up when a tag is deleted.
  await db.schema.createIndex('tagCombinations_tagId').on('tagCombinations').column('tagId').execute();

  const key = `${q('userId')}, ${q('tagId')}, ${q('mimeType')}, visibility, password, ${q('folderId')}`;
  /**
   * Rows (key…, delta) for the tag rows of `source` (a table, a transition table or a one-row
   * select) that count: not excluded, with their file's columns. The account is the tag's, as for the
   * counts per tag (migration 0018-file-counts).
   */
  const deltas = (source: string, delta: number) =>
    `select t.${q('userId')} as ${q('userId')}, r.${q('tagId')} as ${q('tagId')}, r.${q('mimeType')} as ${q('mimeType')}, r.visibility as visibility,
       r.password as password, r.${q('folderId')} as ${q('folderId')}, ${delta} as delta
     from ${source} r join tags t on t.id = r.${q('tagId')} where r.excluded = 0 and r.${q('mimeType')} is not null`;

  await sql.raw(`insert into ${q('tagCombinations')} (${key}, files) select ${key}, count(*) from (${deltas(q('fileTags'), 1)}) d group by ${key}`).execute(db);

  // As in migration 0018-file-counts: increments may create rows, decrements only change existing
  // ones (a deleted tag's rows are gone already), and a row at zero goes.
  const summed = (deltaRows: string, sign: '>' | '<') => `select ${key}, sum(delta) as delta from (${deltaRows}) d group by ${key} having sum(delta) ${sign} 0`;
  const matches = (alias: string) =>
    ['userId', 'tagId', 'mimeType', 'visibility', 'password', 'folderId'].map((c) => `${q('tagCombinations')}.${q(c)} = ${alias}.${q(c)}`).join(' and ');
  const apply = (deltaRows: string, only?: 'up' | 'down') =>
    (only === 'down'
      ? ''
      : `
    insert into ${q('tagCombinations')} (${key}, files)
      select ${key}, delta from (${summed(deltaRows, '>')}) up where true
      ${postgres ? `order by ${key}` : ''}
      on conflict (${key}) do update set files = ${q('tagCombinations')}.files + excluded.files;
`) +
    (only === 'up'
      ? ''
      : `
    update ${q('tagCombinations')} set files = ${q('tagCombinations')}.files + down.delta from (${summed(deltaRows, '<')}) down where ${matches('down')};
    delete from ${q('tagCombinations')} where files = 0 and (${key}) in (select ${key} from (${summed(deltaRows, '<')}) gone);`);

  /** A file's four columns as they change, and as its tag rows hold them. */
  const fileChanged = `old.${q('mimeType')} is distinct from new.${q('mimeType')} or old.${q('folderId')} is distinct from new.${q('folderId')}
    or old.visibility is distinct from new.visibility or (old.${q('passwordHash')} is null) <> (new.${q('passwordHash')} is null)`;
  const fileColumns = `${q('mimeType')}, ${q('folderId')}, visibility, ${q('passwordHash')}`;
  const newFacets = `(${copyOf('new')})`;

  if (postgres) {
    // A tag row without its file's columns, or moved to another file, takes them before it is written.
    await sql
      .raw(
        `create function hoard_file_tags_facets() returns trigger language plpgsql as $$
         begin
           select ${copyOf('f')}
             into new.${q('mimeType')}, new.visibility, new.password, new.${q('folderId')} from files f where f.id = new.${q('fileId')};
           return new;
         end $$`,
      )
      .execute(db);
    await sql
      .raw(`create trigger ${q('fileTags_facets_insert')} before insert on ${q('fileTags')} for each row when (new.${q('mimeType')} is null) execute function hoard_file_tags_facets()`)
      .execute(db);
    await sql
      .raw(
        `create trigger ${q('fileTags_facets_update')} before update of ${q('fileId')} on ${q('fileTags')} for each row when (old.${q('fileId')} is distinct from new.${q('fileId')}) execute function hoard_file_tags_facets()`,
      )
      .execute(db);
    // A file's change reaches its tag rows in one statement, only when it has any: a statement
    // that writes no row still fires the statement-level triggers on tag rows.
    await sql
      .raw(
        `create function hoard_files_tag_facets() returns trigger language plpgsql as $$
         begin
           if exists (select 1 from ${q('fileTags')} where ${q('fileId')} = new.id) then
             update ${q('fileTags')} set ${facetColumns} = ${newFacets} where ${q('fileId')} = new.id;
           end if;
           return null;
         end $$`,
      )
      .execute(db);
    await sql
      .raw(`create trigger ${q('files_tag_facets_update')} after update of ${fileColumns} on files for each row when (${fileChanged}) execute function hoard_files_tag_facets()`)
      .execute(db);
    // Statement-level with transition tables, named to fire after the triggers that lock the
    // account's row (fileTags_listing_*; migration 0018-file-counts explains the order). PostgreSQL
    // allows no column list with transition tables: the update's runs on every update of tag rows.
    const events = {
      insert: { referencing: 'new table as new_rows', rows: deltas('new_rows', 1), only: 'up' },
      delete: { referencing: 'old table as old_rows', rows: deltas('old_rows', -1), only: 'down' },
      update: { referencing: 'old table as old_rows new table as new_rows', rows: `${deltas('new_rows', 1)} union all ${deltas('old_rows', -1)}`, only: undefined },
    } as const;
    for (const [event, e] of Object.entries(events)) {
      const name = `hoard_filetags_combinations_${event}`;
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${apply(e.rows, e.only)} return null; end $$`).execute(db);
      await sql.raw(`create trigger ${q(`fileTags_tally_combinations_${event}`)} after ${event} on ${q('fileTags')} referencing ${e.referencing} for each statement execute function ${name}()`).execute(db);
    }
  } else {
    // SQLite's triggers cannot change the row being written: it is updated after, and that update
    // moves it into its count (the row counts only once it has its file's columns).
    const fill = `update ${q('fileTags')} set ${facetColumns} = ${facetsOf(`new.${q('fileId')}`)} where ${q('fileId')} = new.${q('fileId')} and ${q('tagId')} = new.${q('tagId')};`;
    await sql.raw(`create trigger ${q('fileTags_facets_insert')} after insert on ${q('fileTags')} when new.${q('mimeType')} is null begin ${fill} end`).execute(db);
    await sql.raw(`create trigger ${q('fileTags_facets_update')} after update of ${q('fileId')} on ${q('fileTags')} when old.${q('fileId')} is not new.${q('fileId')} begin ${fill} end`).execute(db);
    await sql
      .raw(`create trigger ${q('files_tag_facets_update')} after update of ${fileColumns} on files when ${fileChanged} begin update ${q('fileTags')} set ${facetColumns} = ${newFacets} where ${q('fileId')} = new.id; end`)
      .execute(db);
    const one = (r: 'new' | 'old') =>
      `(select ${['tagId', 'excluded', 'mimeType', 'visibility', 'password', 'folderId'].map((c) => `${r}.${q(c)} as ${q(c)}`).join(', ')})`;
    await sql.raw(`create trigger ${q('fileTags_tally_combinations_insert')} after insert on ${q('fileTags')} begin ${apply(deltas(one('new'), 1), 'up')} end`).execute(db);
    await sql.raw(`create trigger ${q('fileTags_tally_combinations_delete')} after delete on ${q('fileTags')} begin ${apply(deltas(one('old'), -1), 'down')} end`).execute(db);
    await sql
      .raw(
        `create trigger ${q('fileTags_tally_combinations_update')} after update of excluded, ${q('tagId')}, ${q('mimeType')}, visibility, password, ${q('folderId')} on ${q('fileTags')}
         begin ${apply(`${deltas(one('new'), 1)} union all ${deltas(one('old'), -1)}`)} end`,
      )
      .execute(db);
  }
}
