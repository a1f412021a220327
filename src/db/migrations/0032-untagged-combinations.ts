import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `fileCombinations` gains `tagged` (the file's mark, migration 0031-tagged-files) in its key, so that
 * the exact total of `tag=untagged` with a type, a visibility or a folder is a sum of a few rows
 * instead of a count over the files: 328 ms on SQLite and 234 ms on PostgreSQL for
 * `tag=untagged&types=image/png` among a million files (docs/decisions.md, "Counts per filter").
 *
 * The table is made again with the new key, filled from the files, and its triggers are those of
 * migration 0028-filter-combinations with `tagged` added: a file moves between rows when its mark
 * changes too, which the triggers on `fileTags` of 0031 do by updating the file in the same statement.
 * An account has at most twice as many rows as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const q = (name: string) => `"${name}"`;

  for (const event of ['insert', 'delete', 'update']) {
    await sql.raw(`drop trigger ${q(`files_tally_combinations_${event}`)}${postgres ? ' on files' : ''}`).execute(db);
    if (postgres) await sql.raw(`drop function hoard_file_combinations_${event}()`).execute(db);
  }
  await db.schema.dropTable('fileCombinations').execute();
  await db.schema
    .createTable('fileCombinations')
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('mimeType', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('password', 'integer', (c) => c.notNull())
    .addColumn('folderId', 'text', (c) => c.notNull())
    .addColumn('tagged', 'integer', (c) => c.notNull())
    .addColumn('files', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('fileCombinations_pk', ['userId', 'mimeType', 'visibility', 'password', 'folderId', 'tagged'])
    .execute();
  // A folder's rows, for a folder with a visibility filter and no type.
  await db.schema.createIndex('fileCombinations_userId_folderId').on('fileCombinations').columns(['userId', 'folderId']).execute();

  const key = `${q('userId')}, ${q('mimeType')}, visibility, password, ${q('folderId')}, tagged`;
  /** Rows (key…, delta) for the file rows of `source` (a table, a transition table or a one-row select). */
  const deltas = (source: string, delta: number) =>
    `select r.${q('userId')} as ${q('userId')}, r.${q('mimeType')} as ${q('mimeType')}, r.visibility as visibility,
       case when r.${q('passwordHash')} is null then 0 else 1 end as password, coalesce(r.${q('folderId')}, '') as ${q('folderId')},
       r.tagged as tagged, ${delta} as delta
     from ${source} r`;

  await sql.raw(`insert into ${q('fileCombinations')} (${key}, files) select ${key}, count(*) from (${deltas('files', 1)}) d group by ${key}`).execute(db);

  // As in migration 0018-file-counts: increments may create rows, decrements only change existing
  // ones, and a row at zero goes.
  const summed = (deltaRows: string, sign: '>' | '<') => `select ${key}, sum(delta) as delta from (${deltaRows}) d group by ${key} having sum(delta) ${sign} 0`;
  const matches = (alias: string) =>
    ['userId', 'mimeType', 'visibility', 'password', 'folderId', 'tagged'].map((c) => `${q('fileCombinations')}.${q(c)} = ${alias}.${q(c)}`).join(' and ');
  const apply = (deltaRows: string, only?: 'up' | 'down') =>
    (only === 'down'
      ? ''
      : `
    insert into ${q('fileCombinations')} (${key}, files)
      select ${key}, delta from (${summed(deltaRows, '>')}) up where true
      ${postgres ? `order by ${key}` : ''}
      on conflict (${key}) do update set files = ${q('fileCombinations')}.files + excluded.files;
`) +
    (only === 'up'
      ? ''
      : `
    update ${q('fileCombinations')} set files = ${q('fileCombinations')}.files + down.delta from (${summed(deltaRows, '<')}) down where ${matches('down')};
    delete from ${q('fileCombinations')} where files = 0 and (${key}) in (select ${key} from (${summed(deltaRows, '<')}) gone);`);
  const columns = ['userId', 'mimeType', 'visibility', 'passwordHash', 'folderId', 'tagged'];
  const one = (r: 'new' | 'old') => `(select ${columns.map((c) => `${r}.${q(c)} as ${q(c)}`).join(', ')})`;
  const changed = `old.${q('mimeType')} is distinct from new.${q('mimeType')} or old.${q('folderId')} is distinct from new.${q('folderId')}
    or old.visibility is distinct from new.visibility or (old.${q('passwordHash')} is null) <> (new.${q('passwordHash')} is null)
    or old.${q('userId')} is distinct from new.${q('userId')} or old.tagged <> new.tagged`;
  const updateOf = `${q('mimeType')}, ${q('folderId')}, visibility, ${q('passwordHash')}, ${q('userId')}, tagged`;

  if (postgres) {
    // Statement-level for inserts and deletes, named to fire after the triggers that lock the
    // account's row (migration 0018-file-counts explains the order); row-level for the changes of
    // those columns, so that the updates that change none (views, downloads, media statuses) cost
    // nothing, locking the account's row first.
    const events = {
      insert: { referencing: 'new table as new_rows', rows: deltas('new_rows', 1) },
      delete: { referencing: 'old table as old_rows', rows: deltas('old_rows', -1) },
    } as const;
    for (const [event, e] of Object.entries(events)) {
      const name = `hoard_file_combinations_${event}`;
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${apply(e.rows, event === 'insert' ? 'up' : 'down')} return null; end $$`).execute(db);
      await sql.raw(`create trigger ${q(`files_tally_combinations_${event}`)} after ${event} on files referencing ${e.referencing} for each statement execute function ${name}()`).execute(db);
    }
    await sql
      .raw(
        `create function hoard_file_combinations_update() returns trigger language plpgsql as $$
         begin
           perform 1 from users where id in (old.${q('userId')}, new.${q('userId')}) order by id for update;
           ${apply(`${deltas(one('new'), 1)} union all ${deltas(one('old'), -1)}`)}
           return null;
         end $$`,
      )
      .execute(db);
    await sql
      .raw(`create trigger files_tally_combinations_update after update of ${updateOf} on files for each row when (${changed}) execute function hoard_file_combinations_update()`)
      .execute(db);
  } else {
    await sql.raw(`create trigger files_tally_combinations_insert after insert on files begin ${apply(deltas(one('new'), 1), 'up')} end`).execute(db);
    await sql.raw(`create trigger files_tally_combinations_delete after delete on files begin ${apply(deltas(one('old'), -1), 'down')} end`).execute(db);
    await sql
      .raw(`create trigger files_tally_combinations_update after update of ${updateOf} on files when ${changed} begin ${apply(`${deltas(one('new'), 1)} union all ${deltas(one('old'), -1)}`)} end`)
      .execute(db);
  }
}
