import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: the statement-level triggers that keep the tagged count and mark and the tag rows'
 * copies cost what their rows do, not the square of them.
 *
 * - The tagged count (migration 0023-tagged-count) asked of each file the statement touched whether
 *   it had a counting tag before: a look among its tag rows for one the statement did not write,
 *   and among the statement's old rows. PostgreSQL has no index on a statement's rows, so each look
 *   read all of them: a statement of 8,000 tag rows spent 7.0 s there when it changed only the
 *   copies of their files' columns (migration 0052-tag-combinations), 14.3 s when it put a tag on
 *   8,000 files. Now the statement's rows are summed per file once: a file's counting rows before
 *   the statement are its counting rows now, less those the statement wrote, plus those it removed
 *   or replaced. Only files whose number changed are looked at, one look at their rows each: 14 ms
 *   and 0.53 s for those two statements.
 * - The tagged mark (migration 0031-tagged-files) is refreshed only for those files too: a change of
 *   the copies, which changes no file's counting rows, no longer reads every file it touched.
 * - A change of files' columns (migration 0053-batched-file-changes) asked whether any file changed
 *   a counted column, and whether a changed file had tag rows, as joins of the statement's old and
 *   new rows by ID, which PostgreSQL, wanting only the first match, ran as a loop over one inside a
 *   loop over the other: 2.1 s for 4,000 files whose tagged mark changed. Both are now set
 *   differences of the old and new rows, which it hashes. A folder of 50,000 files deleted in one
 *   statement (its files unfiled by the foreign key): 37.3 s, 24.6 of them in this trigger; now
 *   13.7 s and 2.7. The product's batches of 200 files cost what they did.
 *
 * The functions are replaced; the triggers that call them stay. SQLite's row-level triggers look at
 * one row at a time and stay as they are.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const q = (name: string) => `"${name}"`;
  const counts = q('fileCounts');

  /** The statement's tag rows as (fileId, tagId, d): d is +1 for a counting row written, -1 for one removed or replaced. */
  const rows = {
    insert: `select ${q('fileId')}, ${q('tagId')}, case when excluded = 0 then 1 else 0 end as d from new_rows`,
    delete: `select ${q('fileId')}, ${q('tagId')}, case when excluded = 0 then -1 else 0 end as d from old_rows`,
    update: `select ${q('fileId')}, ${q('tagId')}, case when excluded = 0 then 1 else 0 end as d from new_rows
      union all select ${q('fileId')}, ${q('tagId')}, case when excluded = 0 then -1 else 0 end as d from old_rows`,
  } as const;
  /** The files whose number of counting tag rows the statement changed, with one of their tags and the change `d`. */
  const touched = (event: keyof typeof rows) => `select ${q('fileId')} as id, min(${q('tagId')}) as tag, sum(d) as d from (${rows[event]}) r group by ${q('fileId')} having sum(d) <> 0`;

  // The tagged count, as migration 0023-tagged-count defines it.
  /** The file's account, or its tag's once the file is gone. */
  const account = (file: string, tag: string) =>
    `coalesce((select f.${q('userId')} from files f where f.id = ${file}), (select t.${q('userId')} from tags t where t.id = ${tag}))`;
  const changes = (event: keyof typeof rows) => `select ${account('a.id', 'a.tag')} as ${q('userId')}, sign(a.now) - sign(a.now - a.d) as delta
    from (select t.id, t.tag, t.d, (select count(*) from ${q('fileTags')} x where x.${q('fileId')} = t.id and x.excluded = 0) as now from (${touched(event)}) t) a`;
  /** Adds the changes (rows userId, delta) to the counts, as migration 0023-tagged-count does. */
  const apply = (changes: string) => `
    insert into ${counts} (${q('userId')}, dimension, value, files)
      select ${q('userId')}, 'tagged', '', n from (select ${q('userId')}, sum(delta) as n from (${changes}) c where ${q('userId')} is not null group by ${q('userId')}) up
      where n > 0
      order by ${q('userId')}
      on conflict (${q('userId')}, dimension, value) do update set files = ${counts}.files + excluded.files;
    update ${counts} set files = ${counts}.files + down.n
      from (select ${q('userId')}, sum(delta) as n from (${changes}) c where ${q('userId')} is not null group by ${q('userId')}) down
      where ${counts}.${q('userId')} = down.${q('userId')} and ${counts}.dimension = 'tagged' and ${counts}.value = '' and down.n < 0;
    delete from ${counts} where ${q('userId')} in (select ${q('userId')} from (${changes}) c) and dimension = 'tagged' and value = '' and files = 0;`;

  // The tagged mark, as migration 0031-tagged-files defines it.
  const hasTag = (file: string) => `exists (select 1 from ${q('fileTags')} x where x.${q('fileId')} = ${file} and x.excluded = 0)`;
  const refresh = (event: keyof typeof rows) => `update files set tagged = case when ${hasTag('files.id')} then 1 else 0 end
    where files.id in (select id from (${touched(event)}) t) and tagged <> case when ${hasTag('files.id')} then 1 else 0 end;`;

  for (const event of ['insert', 'delete', 'update'] as const) {
    await sql.raw(`create or replace function hoard_filetags_tagged_${event}() returns trigger language plpgsql as $$ begin ${apply(changes(event))} return null; end $$`).execute(db);
    await sql.raw(`create or replace function hoard_filetags_untagged_${event}() returns trigger language plpgsql as $$ begin ${refresh(event)} return null; end $$`).execute(db);
  }

  // A change of files' columns, as migration 0053-batched-file-changes keeps it. Only its two tests
  // of what changed are new; the rest restates it (a migration carries what it needs).
  const applyDeltas = (table: string, keyColumns: string[], deltaRows: string) => {
    const key = keyColumns.map(q).join(', ');
    const summed = (sign: '>' | '<') => `select ${key}, sum(delta) as delta from (${deltaRows}) d group by ${key} having sum(delta) ${sign} 0`;
    return `
      insert into ${q(table)} (${key}, files) select ${key}, delta from (${summed('>')}) up where true order by ${key}
        on conflict (${key}) do update set files = ${q(table)}.files + excluded.files;
      update ${q(table)} set files = ${q(table)}.files + down.delta from (${summed('<')}) down
        where ${keyColumns.map((c) => `${q(table)}.${q(c)} = down.${q(c)}`).join(' and ')};
      delete from ${q(table)} where files = 0 and (${key}) in (select ${key} from (${summed('<')}) gone);`;
  };
  const password = (r: string) => `case when ${r}.${q('passwordHash')} is null then 0 else 1 end`;
  const folder = (r: string) => `coalesce(${r}.${q('folderId')}, '')`;
  const facets = (r: string) => [
    { dimension: `'type'`, value: `${r}.${q('mimeType')}`, when: 'true' },
    { dimension: `'folder'`, value: folder(r), when: 'true' },
    { dimension: `'visibility'`, value: `'public'`, when: `${r}.visibility = 'PUBLIC' and ${r}.${q('passwordHash')} is null` },
    { dimension: `'visibility'`, value: `'private'`, when: `${r}.visibility = 'PRIVATE'` },
    { dimension: `'visibility'`, value: `'hasPassword'`, when: `${r}.${q('passwordHash')} is not null` },
  ];
  const countDeltas = (source: string, delta: number) =>
    facets('r')
      .map((f) => `select r.${q('userId')} as ${q('userId')}, ${f.dimension} as dimension, ${f.value} as value, ${delta} as delta from ${source} r where ${f.when}`)
      .join(' union all ');
  const combinationDeltas = (source: string, delta: number) =>
    `select r.${q('userId')} as ${q('userId')}, r.${q('mimeType')} as ${q('mimeType')}, r.visibility as visibility, ${password('r')} as password,
       ${folder('r')} as ${q('folderId')}, r.tagged as tagged, ${delta} as delta from ${source} r`;
  const both = (deltas: (source: string, delta: number) => string) => `${deltas('new_rows', 1)} union all ${deltas('old_rows', -1)}`;

  /** A file's columns as its tag rows copy them (migration 0052-tag-combinations), with its ID. */
  const copied = (r: string) => `${r}.id, ${r}.${q('mimeType')}, ${r}.visibility, ${password(r)} as password, ${folder(r)} as ${q('folderId')}`;
  /** The files whose new rows differ from their old ones in `columns`: a set difference, which PostgreSQL hashes or sorts. */
  const changedIn = (columns: (r: string) => string) => `select ${columns('n')} from new_rows n except select ${columns('o')} from old_rows o`;
  // The counts also follow a file's account and its tagged mark.
  const counted = (r: string) => `${copied(r)}, ${r}.${q('userId')}, ${r}.tagged`;

  await sql
    .raw(
      `create or replace function hoard_files_changes_update() returns trigger language plpgsql as $$
       begin
         if not exists (${changedIn(counted)}) then
           return null;
         end if;
         perform 1 from users where id in (select ${q('userId')} from old_rows union select ${q('userId')} from new_rows) order by id for update;
         ${applyDeltas('fileCounts', ['userId', 'dimension', 'value'], both(countDeltas))}
         ${applyDeltas('fileCombinations', ['userId', 'mimeType', 'visibility', 'password', 'folderId', 'tagged'], both(combinationDeltas))}
         -- Counted, not merely found: looking for a first match, PostgreSQL may read the tag rows
         -- whole. Without a tag row to write, the update and its triggers are left out.
         if (select count(*) from ${q('fileTags')} ft where ft.${q('fileId')} in (select id from (${changedIn(copied)}) c)) > 0 then
           update ${q('fileTags')} ft set (${q('mimeType')}, visibility, password, ${q('folderId')}) = (c.${q('mimeType')}, c.visibility, c.password, c.${q('folderId')})
             from (${changedIn(copied)}) c
             where ft.${q('fileId')} = c.id;
         end if;
         return null;
       end $$`,
    )
    .execute(db);
}
