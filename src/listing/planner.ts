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
 * 2. Statistics: until autovacuum analyses a table again after a bulk change, the planner plans
 *    with the rows it last counted: an account of 100,000 files freshly loaded was sorted as a few
 *    hundred instead of walked through an index, and a tag of 3,000 files given in a moment, to a
 *    table analysed while nearly empty, was read once per file of the page's walk (1.7 s a page at
 *    6,000 files). A listing table changed by more rows than it held when last analysed (and by
 *    over a thousand) is analysed at once, in the background; checked at most every 10 seconds
 *    per process, a look-up in PostgreSQL's own counters.
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

const CHECK_INTERVAL_MS = 10_000;
/** Rows changed since the last analysis past which a table's statistics count as stale, if also more than it held then. */
const STALE_AFTER_ROWS = 1000;
const checks = new WeakMap<Db, { at: number }>();

export function refreshStatisticsIfStale(db: Db, dialect: Dialect): void {
  if (dialect !== 'postgres') return;
  const state = checks.get(db) ?? { at: 0 };
  checks.set(db, state);
  const now = Date.now();
  if (now - state.at < CHECK_INTERVAL_MS) return;
  state.at = now;
  void (async () => {
    // The tables the listing's plans read, by the names the search path gives them. reltuples is
    // -1 before the first analysis.
    const { rows } = await sql<{ name: string }>`
      select c.relname as name
      from pg_class c join pg_stat_user_tables s on s.relid = c.oid
      where c.oid in (to_regclass('files'), to_regclass('"fileTags"'), to_regclass('"fileNames"'))
        and s.n_mod_since_analyze > ${sql.lit(STALE_AFTER_ROWS)} and s.n_mod_since_analyze > greatest(c.reltuples, 0)`.execute(db);
    if (rows.length === 0) return;
    await sql`analyze ${sql.join(rows.map((row) => sql.table(row.name)))}`.execute(db);
  })().catch(() => {
    // Not the tables' owner, say: autovacuum remains in charge.
  });
}
