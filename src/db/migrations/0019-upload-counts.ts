import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * `uploadCounts`: an account's number of files by upload time, per quarter of an hour and per UTC
 * day (docs/decisions.md, "Timeline from counts"), so that the timeline sums a few hundred rows per
 * bucket instead of counting the account's files. Every time zone in use today is offset from UTC
 * by a whole number of quarter hours, so a bucket boundary in any zone (a local midnight) falls on
 * a quarter-hour boundary; the parts of a bucket between its ends and the nearest quarter hour (a
 * snapshot, a date filter, a historical offset) are counted from the files themselves.
 *
 * `span` is the slot's length in minutes (15 or 1440); `slot` is the upload time in milliseconds,
 * divided by the slot's length in milliseconds and rounded down. Kept by triggers in the same
 * statement as every insert, delete or change of an upload time; a row at zero is removed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Migrations import no application code (docs/architecture.md), so the dialect is read here.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('uploadCounts')
    .addColumn('userId', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('span', 'integer', (c) => c.notNull())
    .addColumn('slot', 'bigint', (c) => c.notNull())
    .addColumn('files', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('uploadCounts_pk', ['userId', 'span', 'slot'])
    .execute();

  const q = (name: string) => `"${name}"`;
  // Rounded down, also before 1970 (integer division truncates towards zero on both databases).
  const slotOf = (time: string, ms: number) => `((${time} - ((${time} % ${ms}) + ${ms}) % ${ms}) / ${ms})`;
  const deltas = (source: string, delta: number) =>
    [
      { span: 15, ms: 900_000 },
      { span: 1440, ms: 86_400_000 },
    ]
      .map(({ span, ms }) => `select r.${q('userId')} as ${q('userId')}, ${span} as span, ${slotOf(`r.${q('createdAt')}`, ms)} as slot, ${delta} as delta from ${source} r`)
      .join(' union all ');

  await sql
    .raw(
      `insert into ${q('uploadCounts')} (${q('userId')}, span, slot, files)
       select ${q('userId')}, span, slot, count(*) from (${deltas('files', 1)}) d group by ${q('userId')}, span, slot`,
    )
    .execute(db);

  // As in migration 0018-file-counts: increments may create rows, decrements only change existing ones.
  const summed = (deltaRows: string, sign: '>' | '<') =>
    `select ${q('userId')}, span, slot, sum(delta) as delta from (${deltaRows}) d group by ${q('userId')}, span, slot having sum(delta) ${sign} 0`;
  // `only`: the changes can only add (inserts) or only take away (deletes), so the other half is left out.
  const apply = (deltaRows: string, only?: 'up' | 'down') =>
    (only === 'down' ? '' : `
    insert into ${q('uploadCounts')} (${q('userId')}, span, slot, files)
      select ${q('userId')}, span, slot, delta from (${summed(deltaRows, '>')}) up where true
      ${postgres ? `order by ${q('userId')}, span, slot` : ''}
      on conflict (${q('userId')}, span, slot) do update set files = ${q('uploadCounts')}.files + excluded.files;
`) +
    (only === 'up' ? '' : `
    update ${q('uploadCounts')} set files = ${q('uploadCounts')}.files + down.delta from (${summed(deltaRows, '<')}) down
      where ${q('uploadCounts')}.${q('userId')} = down.${q('userId')} and ${q('uploadCounts')}.span = down.span and ${q('uploadCounts')}.slot = down.slot;
    delete from ${q('uploadCounts')} where files = 0 and (${q('userId')}, span, slot) in (select ${q('userId')}, span, slot from (${summed(deltaRows, '<')}) gone);`);

  if (postgres) {
    // Statement-level, named to fire after the triggers that lock the account's row (migration
    // 0018-file-counts explains the order).
    const events = {
      insert: { referencing: 'new table as new_rows', rows: deltas('new_rows', 1) },
      delete: { referencing: 'old table as old_rows', rows: deltas('old_rows', -1) },
    } as const;
    for (const [event, e] of Object.entries(events)) {
      const name = `hoard_upload_counts_${event}`;
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${apply(e.rows, event === 'insert' ? 'up' : 'down')} return null; end $$`).execute(db);
      await sql.raw(`create trigger ${q(`files_timeline_${event}`)} after ${event} on files referencing ${e.referencing} for each statement execute function ${name}()`).execute(db);
    }
    // Upload times do not change in Hoard; should one be changed by hand, the counts follow.
    // Row-level, so that other updates cost nothing; the account's row is locked first.
    const row = (r: 'new' | 'old') => `(select ${r}.${q('userId')} as ${q('userId')}, ${r}.${q('createdAt')} as ${q('createdAt')})`;
    await sql
      .raw(
        `create function hoard_upload_counts_update() returns trigger language plpgsql as $$
         begin
           perform 1 from users where id = new.${q('userId')} for update;
           ${apply(`${deltas(row('new'), 1)} union all ${deltas(row('old'), -1)}`)}
           return null;
         end $$`,
      )
      .execute(db);
    await sql
      .raw(`create trigger files_timeline_update after update of ${q('createdAt')} on files for each row when (old.${q('createdAt')} is distinct from new.${q('createdAt')}) execute function hoard_upload_counts_update()`)
      .execute(db);
  } else {
    const one = (row: 'new' | 'old') => `(select ${row}.${q('userId')} as ${q('userId')}, ${row}.${q('createdAt')} as ${q('createdAt')})`;
    await sql.raw(`create trigger files_timeline_insert after insert on files begin ${apply(deltas(one('new'), 1), 'up')} end`).execute(db);
    await sql.raw(`create trigger files_timeline_delete after delete on files begin ${apply(deltas(one('old'), -1), 'down')} end`).execute(db);
    await sql.raw(`create trigger files_timeline_update after update of ${q('createdAt')} on files begin ${apply(`${deltas(one('new'), 1)} union all ${deltas(one('old'), -1)}`)} end`).execute(db);
  }
}
