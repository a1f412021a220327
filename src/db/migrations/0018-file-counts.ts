import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `fileCounts`: an account's number of files per value of each single listing filter (docs/decisions.md,
 * "Counts per filter"), so that the exact total of a listing filtered by one of them, and the list of
 * the account's types, need no count over its files:
 * - `visibility`: `public` (public without a password), `private`, `hasPassword` (either, with a
 *   password); a private file with a password counts in both, as the filter selects it for both;
 * - `type`: the MIME type;
 * - `folder`: the folder ID, or '' for files in no folder;
 * - `tag`: the tag ID, for tags on a file that count (not excluded).
 *
 * Kept by triggers in the same statement as every change, whoever makes it: file inserts, deletes
 * and changes of those four columns (a deleted folder's files are moved out of it by the foreign key,
 * which is such a change), tags put on or taken off files. A row whose count reaches zero is removed;
 * a deleted tag's row goes with it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('fileCounts')
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('dimension', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('files', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fileCounts_pk', ['userId', 'dimension', 'value'])
    .execute();

  // Files with a password are usually few: a listing of them (`visibility=hasPassword`) finds them
  // here instead of walking all of the account's files for the few that have one.
  await db.schema
    .createIndex('files_userId_createdAt_withPassword')
    .on('files')
    .columns(['userId', 'createdAt', 'id'])
    .where(sql.ref('passwordHash'), 'is not', null)
    .execute();

  // The dimension values a file row counts under, as SQL over a row alias `r` (the same text serves
  // both dialects; identifiers quoted for PostgreSQL, where they are case-sensitive).
  const q = (name: string) => `"${name}"`;
  const facets = (r: string) => [
    { dimension: `'type'`, value: `${r}.${q('mimeType')}`, when: 'true' },
    { dimension: `'folder'`, value: `coalesce(${r}.${q('folderId')}, '')`, when: 'true' },
    { dimension: `'visibility'`, value: `'public'`, when: `${r}.visibility = 'PUBLIC' and ${r}.${q('passwordHash')} is null` },
    { dimension: `'visibility'`, value: `'private'`, when: `${r}.visibility = 'PRIVATE'` },
    { dimension: `'visibility'`, value: `'hasPassword'`, when: `${r}.${q('passwordHash')} is not null` },
  ];
  /** Rows (userId, dimension, value, delta) for the file rows of `source` (a table or transition table). */
  const deltas = (source: string, delta: number) =>
    facets('r')
      .map((f) => `select r.${q('userId')} as ${q('userId')}, ${f.dimension} as dimension, ${f.value} as value, ${delta} as delta from ${source} r where ${f.when}`)
      .join(' union all ');

  await sql
    .raw(
      `insert into ${q('fileCounts')} (${q('userId')}, dimension, value, files)
       select ${q('userId')}, dimension, value, count(*) from (${deltas('files', 1)}) d group by ${q('userId')}, dimension, value`,
    )
    .execute(db);
  await sql
    .raw(
      `insert into ${q('fileCounts')} (${q('userId')}, dimension, value, files)
       select t.${q('userId')}, 'tag', t.id, count(*) from ${q('fileTags')} ft join tags t on t.id = ft.${q('tagId')}
       where ft.excluded = 0 group by t.${q('userId')}, t.id`,
    )
    .execute(db);

  // Adds summed deltas (userId, dimension, value, delta) to the counts, then removes rows at zero.
  // Only increments may create a row: a decrement of a row that is gone (its account being deleted,
  // the files going with it) changes nothing.
  const summed = (deltaRows: string, sign: '>' | '<') =>
    `select ${q('userId')}, dimension, value, sum(delta) as delta from (${deltaRows}) d group by ${q('userId')}, dimension, value having sum(delta) ${sign} 0`;
  // `only`: the changes can only add (inserts) or only take away (deletes), so the other half is left out.
  const apply = (deltaRows: string, only?: 'up' | 'down') =>
    (only === 'down' ? '' : `
    insert into ${q('fileCounts')} (${q('userId')}, dimension, value, files)
      select ${q('userId')}, dimension, value, delta from (${summed(deltaRows, '>')}) up where true
      ${postgres ? `order by ${q('userId')}, dimension, value` : ''}
      on conflict (${q('userId')}, dimension, value) do update set files = ${q('fileCounts')}.files + excluded.files;
`) +
    (only === 'up' ? '' : `
    update ${q('fileCounts')} set files = ${q('fileCounts')}.files + down.delta from (${summed(deltaRows, '<')}) down
      where ${q('fileCounts')}.${q('userId')} = down.${q('userId')} and ${q('fileCounts')}.dimension = down.dimension and ${q('fileCounts')}.value = down.value;
    delete from ${q('fileCounts')} where files = 0 and (${q('userId')}, dimension, value) in (select ${q('userId')}, dimension, value from (${summed(deltaRows, '<')}) gone);`);
  const tagDeltas = (source: string, delta: number) =>
    `select t.${q('userId')} as ${q('userId')}, 'tag' as dimension, t.id as value, ${delta} as delta from ${source} ft join tags t on t.id = ft.${q('tagId')} where ft.excluded = 0`;

  if (postgres) {
    // Statement-level with transition tables, like the file count (migration 0006-listing): a batch
    // changes each count once. The triggers are named to fire after the ones that update the
    // account's row (PostgreSQL fires them in name order), so every transaction changing an
    // account's files locks that row first and then its counts, in key order: no deadlock.
    const events = {
      insert: { referencing: 'new table as new_rows', files: deltas('new_rows', 1), tags: tagDeltas('new_rows', 1) },
      delete: { referencing: 'old table as old_rows', files: deltas('old_rows', -1), tags: tagDeltas('old_rows', -1) },
      update: { referencing: 'old table as old_rows new table as new_rows', files: null, tags: `${tagDeltas('new_rows', 1)} union all ${tagDeltas('old_rows', -1)}` },
    } as const;
    for (const [event, e] of Object.entries(events)) {
      for (const table of ['files', 'fileTags'] as const) {
        const rows = table === 'files' ? e.files : e.tags;
        if (rows === null) continue;
        const name = `hoard_${table.toLowerCase()}_counts_${event}`;
        await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${apply(rows, event === 'insert' ? 'up' : event === 'delete' ? 'down' : undefined)} return null; end $$`).execute(db);
        await sql.raw(`create trigger ${q(`${table}_tally_${event}`)} after ${event} on ${q(table)} referencing ${e.referencing} for each statement execute function ${name}()`).execute(db);
      }
    }
    // A change of a file's counted columns: row-level, so that the updates that change none (views,
    // downloads, media statuses, on every file served) cost nothing. It locks the account's row
    // first, as the statement-level triggers do.
    const row = (r: 'new' | 'old') => `(select ${r}.${q('userId')} as ${q('userId')}, ${r}.${q('mimeType')} as ${q('mimeType')}, ${r}.${q('folderId')} as ${q('folderId')}, ${r}.visibility as visibility, ${r}.${q('passwordHash')} as ${q('passwordHash')})`;
    await sql
      .raw(
        `create function hoard_files_counts_update() returns trigger language plpgsql as $$
         begin
           perform 1 from users where id = new.${q('userId')} for update;
           ${apply(`${deltas(row('new'), 1)} union all ${deltas(row('old'), -1)}`)}
           return null;
         end $$`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger files_tally_update after update of ${q('mimeType')}, ${q('folderId')}, visibility, ${q('passwordHash')} on files for each row
         when (old.${q('mimeType')} is distinct from new.${q('mimeType')} or old.${q('folderId')} is distinct from new.${q('folderId')}
           or old.visibility is distinct from new.visibility or old.${q('passwordHash')} is distinct from new.${q('passwordHash')})
         execute function hoard_files_counts_update()`,
      )
      .execute(db);
    await sql
      .raw(
        `create function hoard_tags_counts_delete() returns trigger language plpgsql as $$
         begin
           delete from ${q('fileCounts')} c using old_rows o where c.${q('userId')} = o.${q('userId')} and c.dimension = 'tag' and c.value = o.id;
           return null;
         end $$`,
      )
      .execute(db);
    await sql.raw(`create trigger tags_tally_delete after delete on tags referencing old table as old_rows for each statement execute function hoard_tags_counts_delete()`).execute(db);
  } else {
    // Row-level: `new` and `old` stand for the one row, as a one-row table.
    const one = (row: 'new' | 'old') => `(select ${row}.${q('userId')} as ${q('userId')}, ${row}.${q('mimeType')} as ${q('mimeType')}, ${row}.${q('folderId')} as ${q('folderId')}, ${row}.visibility as visibility, ${row}.${q('passwordHash')} as ${q('passwordHash')})`;
    const oneTag = (row: 'new' | 'old') => `(select ${row}.${q('tagId')} as ${q('tagId')}, ${row}.excluded as excluded)`;
    await sql.raw(`create trigger files_tally_insert after insert on files begin ${apply(deltas(one('new'), 1), 'up')} end`).execute(db);
    await sql.raw(`create trigger files_tally_delete after delete on files begin ${apply(deltas(one('old'), -1), 'down')} end`).execute(db);
    await sql
      .raw(
        `create trigger files_tally_update after update of ${q('mimeType')}, ${q('folderId')}, visibility, ${q('passwordHash')} on files begin
         ${apply(`${deltas(one('new'), 1)} union all ${deltas(one('old'), -1)}`)} end`,
      )
      .execute(db);
    await sql.raw(`create trigger fileTags_tally_insert after insert on ${q('fileTags')} begin ${apply(tagDeltas(oneTag('new'), 1), 'up')} end`).execute(db);
    await sql.raw(`create trigger fileTags_tally_delete after delete on ${q('fileTags')} begin ${apply(tagDeltas(oneTag('old'), -1), 'down')} end`).execute(db);
    await sql
      .raw(`create trigger fileTags_tally_update after update of excluded, ${q('tagId')} on ${q('fileTags')} begin ${apply(`${tagDeltas(oneTag('new'), 1)} union all ${tagDeltas(oneTag('old'), -1)}`)} end`)
      .execute(db);
    await sql.raw(`create trigger tags_tally_delete after delete on tags begin delete from ${q('fileCounts')} where ${q('userId')} = old.${q('userId')} and dimension = 'tag' and value = old.id; end`).execute(db);
  }
}
