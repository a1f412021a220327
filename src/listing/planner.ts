import { sql } from 'kysely';
import type { Db, Dialect } from '../db/database.ts';
import type { Executor } from '../db/account-scope.ts';
import { isUnfiltered, type FileFilters } from './parameters.ts';

/**
 * Help for PostgreSQL's query planner where the listing's queries are known to mislead it.
 *
 * 1. Substring search: the planner costs a trigram bitmap scan above a sequential scan that
 *    evaluates LIKE on every row of the account, which is two to three times slower in practice
 *    (measured with 100,000 files: a common term 48 ms scanning, 20 ms through the index). Queries
 *    with a search term therefore run in a transaction with sequential scans discouraged
 *    (`set local enable_seqscan = off`: only a cost penalty, nothing is forbidden).
 * 2. Statistics: until autovacuum first analyses a freshly bulk-loaded table, the planner assumes
 *    an account has a few hundred files and sorts them instead of walking an index. When an
 *    account is evidently larger than the table's recorded size, the tables are analysed at once
 *    (in the background, at most once a minute per process).
 */
export function withSearchHints<T>(db: Db, dialect: Dialect, filters: FileFilters, work: (executor: Executor) => Promise<T>): Promise<T> {
  if (dialect !== 'postgres' || filters.search === null) return work(db);
  return db.transaction().execute(async (trx) => {
    await searchSettings.execute(trx);
    return work(trx);
  });
}

/**
 * Whether a listing or a timeline is read through the database's readers (DatabaseHandle.reader)
 * instead of the server's own connection: on SQLite, whenever a filter narrows the account's files.
 * Such a read may scan a large share of the account (a search too short for the trigram index, two
 * filters that no count covers), and a SQLite statement holds the thread that runs it; unfiltered
 * reads stay, being bounded by the sort's index and the account's counts (docs/decisions.md, "Reads
 * that may scan").
 */
export function readsApart(dialect: Dialect, filters: FileFilters): boolean {
  return dialect === 'sqlite' && !isUnfiltered(filters);
}

/** Use inside a transaction that runs a search (see withSearchHints). */
export async function discourageScans(executor: Executor, dialect: Dialect, filters: FileFilters): Promise<void> {
  if (dialect === 'postgres' && filters.search !== null) await searchSettings.execute(executor);
}

/** Sequential scans discouraged (1. above). Parallel workers are off for every session (withSessionSettings). */
const searchSettings = sql`set local enable_seqscan = off`;

const CHECK_INTERVAL_MS = 60_000;
const checks = new WeakMap<Db, { at: number }>();

export function refreshStatisticsIfStale(db: Db, dialect: Dialect, userId: string): void {
  if (dialect !== 'postgres') return;
  const state = checks.get(db) ?? { at: 0 };
  checks.set(db, state);
  const now = Date.now();
  if (now - state.at < CHECK_INTERVAL_MS) return;
  state.at = now;
  void (async () => {
    const result = await sql<{ estimated: number; files: number }>`
      select c.reltuples as estimated, u.${sql.ref('fileCount')} as files
      from pg_class c, ${sql.table('users')} u
      where c.oid = to_regclass('files') and u.id = ${userId}`.execute(db);
    const row = result.rows[0];
    if (!row) return;
    // reltuples is -1 before the first analysis.
    if (Number(row.files) < 10_000 || Number(row.files) <= 2 * Math.max(0, Number(row.estimated))) return;
    await sql`analyze ${sql.table('files')}, ${sql.table('fileTags')}, ${sql.table('fileNames')}`.execute(db);
  })().catch(() => {
    // Not the tables' owner, say: autovacuum remains in charge.
  });
}
