import { setImmediate } from 'node:timers/promises';
import type { Dialect } from './database.ts';

/**
 * The most rows changed per transaction by work that changes as many of an account's rows as it
 * has: its files as the account goes, a folder's files as it is deleted, a tag's assignments. A
 * SQLite statement holds the process while it runs, and changing a file's row (its search entry,
 * counts, listing version and indexes) takes 20–90 µs: an account of 100,000 files went in one
 * statement of 7 s, a folder of 5,000 files was emptied in 0.46 s, and nothing else was answered
 * meanwhile. 200 rows are 4–20 ms; more for files with recognised text when the change indexes them
 * again for search (a folder, tag, visibility or password: about 0.3 ms a file more,
 * docs/decisions.md "Search index").
 */
const ROWS_PER_TRANSACTION = 200;

/**
 * What one such transaction should hold a SQLite process for. With recognised text, or on a loaded
 * machine, 200 rows took 10–60 ms in a test run, while a request that came in meanwhile waited for
 * two or three of them.
 */
const SQLITE_HOLD_MS = 20;

/**
 * The first batch on SQLite, before its cost per row is known: at 0.4 ms a row (files with
 * recognised text, on a slow machine) it takes SQLITE_HOLD_MS.
 */
const FIRST_SQLITE_ROWS = 50;

/** The fewest rows a batch is cut to, so that the work moves on however slow a transaction is. */
const FEWEST_ROWS = 25;

/**
 * Runs `batch` (a transaction changing at most `rows` rows, returning how many it changed) until it
 * changes fewer, with a turn of the event loop between: better-sqlite3 answers at once, so without
 * it the transactions would follow one another without any other request being read in between.
 *
 * On SQLite the first batch is FIRST_SQLITE_ROWS rows, and each later one is sized from the time the
 * one before took per row, so that a transaction holds the process for about SQLITE_HOLD_MS: at most
 * ROWS_PER_TRANSACTION rows, at least FEWEST_ROWS. The time per row includes the transaction's own
 * statements (the account's lock, the selection, the commit), so where those alone take about
 * SQLITE_HOLD_MS the batches shrink to FEWEST_ROWS. PostgreSQL's transactions hold no process, and
 * its batches stay at ROWS_PER_TRANSACTION. `now` is the clock the batches are timed by.
 */
export async function inBatches(dialect: Dialect, batch: (rows: number) => Promise<number>, now: () => number = () => performance.now()): Promise<void> {
  let rows = dialect === 'sqlite' ? FIRST_SQLITE_ROWS : ROWS_PER_TRANSACTION;
  for (;;) {
    const started = now();
    const changed = await batch(rows);
    if (changed < rows) return;
    if (dialect === 'sqlite') {
      const perRow = (now() - started) / changed;
      rows = Math.max(FEWEST_ROWS, Math.min(ROWS_PER_TRANSACTION, Math.floor(SQLITE_HOLD_MS / perRow)));
    }
    await setImmediate();
  }
}
