import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * PostgreSQL: a statement that changes many files' type, visibility, password, folder, account or
 * tagged mark updates their counts once, not once per file. The row-level triggers that did it
 * (migrations 0018-file-counts, 0032-untagged-combinations, 0052-tag-combinations) each updated the
 * same few count rows for every file, and PostgreSQL keeps every version of a row a transaction
 * updates until it ends, each update walking the versions before it: unfiling a folder's 200 files
 * (one batch of the product's, src/db/batches.ts) took 146–264 ms among a million files, making 200
 * files public or private 135–185 ms, and a folder of 50,000 files unfiled in one statement ran for
 * over four minutes; now 66 ms, 70 ms and 40 s (docs/decisions.md, "Counts per filter").
 *
 * One statement-level trigger with the statement's old and new rows takes their place and does what
 * the three did, for all the rows at once: the counts per filter value, the counts per combination,
 * and the tag rows' copy of their file's columns. PostgreSQL allows no column list with those rows,
 * so it runs for every update of files (each view and download counted among them); it leaves at
 * once when no row changed those columns. It locks the accounts' rows first, in key order, as the
 * triggers it replaces did. SQLite's row-level triggers write each count row in place, and stay.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const q = (name: string) => `"${name}"`;

  for (const [trigger, fn] of [
    ['files_tally_update', 'hoard_files_counts_update'],
    ['files_tally_combinations_update', 'hoard_file_combinations_update'],
    ['files_tag_facets_update', 'hoard_files_tag_facets'],
  ]) {
    await sql.raw(`drop trigger ${q(trigger!)} on files`).execute(db);
    await sql.raw(`drop function ${fn}()`).execute(db);
  }

  /** Adds the deltas (key…, delta), summed by key, to `table`: increments may create rows, decrements change existing ones, a row at zero goes. */
  const apply = (table: string, keyColumns: string[], deltaRows: string) => {
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

  // The counts per filter value, as migration 0018-file-counts defines them.
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
  // The counts per combination, as migration 0032-untagged-combinations defines them.
  const combinationDeltas = (source: string, delta: number) =>
    `select r.${q('userId')} as ${q('userId')}, r.${q('mimeType')} as ${q('mimeType')}, r.visibility as visibility, ${password('r')} as password,
       ${folder('r')} as ${q('folderId')}, r.tagged as tagged, ${delta} as delta from ${source} r`;
  const both = (deltas: (source: string, delta: number) => string) => `${deltas('new_rows', 1)} union all ${deltas('old_rows', -1)}`;

  // The tag rows' copy (migration 0052-tag-combinations), written only for files whose columns
  // changed: the update of tag rows runs their statement-level triggers once.
  const tagColumnsChanged = `o.${q('mimeType')} is distinct from n.${q('mimeType')} or o.${q('folderId')} is distinct from n.${q('folderId')}
    or o.visibility is distinct from n.visibility or (o.${q('passwordHash')} is null) <> (n.${q('passwordHash')} is null)`;
  // The counts also follow a file's account and its tagged mark.
  const changed = `${tagColumnsChanged} or o.${q('userId')} is distinct from n.${q('userId')} or o.tagged <> n.tagged`;

  await sql
    .raw(
      `create function hoard_files_changes_update() returns trigger language plpgsql as $$
       begin
         if not exists (select 1 from new_rows n join old_rows o on o.id = n.id where ${changed}) then
           return null;
         end if;
         perform 1 from users where id in (select ${q('userId')} from old_rows union select ${q('userId')} from new_rows) order by id for update;
         ${apply('fileCounts', ['userId', 'dimension', 'value'], both(countDeltas))}
         ${apply('fileCombinations', ['userId', 'mimeType', 'visibility', 'password', 'folderId', 'tagged'], both(combinationDeltas))}
         if exists (select 1 from ${q('fileTags')} ft join new_rows n on n.id = ft.${q('fileId')} join old_rows o on o.id = n.id where ${tagColumnsChanged}) then
           update ${q('fileTags')} ft set (${q('mimeType')}, visibility, password, ${q('folderId')}) = (n.${q('mimeType')}, n.visibility, ${password('n')}, ${folder('n')})
             from new_rows n join old_rows o on o.id = n.id
             where ft.${q('fileId')} = n.id and (${tagColumnsChanged});
         end if;
         return null;
       end $$`,
    )
    .execute(db);
  // Named to fire after the statement-level trigger that bumps the accounts' listing versions
  // (files_listing_update), as the counts' other triggers are (migration 0018-file-counts).
  await sql
    .raw(`create trigger files_tally_changes_update after update on files referencing old table as old_rows new table as new_rows for each statement execute function hoard_files_changes_update()`)
    .execute(db);
}
