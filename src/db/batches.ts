import { setImmediate } from 'node:timers/promises';

/**
 * Rows changed per transaction by work that changes as many of an account's rows as it has: its
 * files as the account goes, a folder's files as it is deleted, a tag's assignments. A SQLite
 * statement holds the process while it runs, and changing a file's row (its search entry, counts,
 * listing version and indexes) takes 20–90 µs: an account of 100,000 files went in one statement
 * of 7 s, a folder of 5,000 files was emptied in 0.46 s, and nothing else was answered meanwhile.
 * 200 rows are 4–20 ms; more for files with recognised text when the change indexes them again
 * for search (a folder, tag, visibility or password: about 0.3 ms a file more, docs/decisions.md
 * "Search index").
 */
export const ROWS_PER_TRANSACTION = 200;

/**
 * Runs `batch` (a transaction changing at most ROWS_PER_TRANSACTION rows, returning how many it
 * changed) until it changes fewer, with a turn of the event loop between: better-sqlite3 answers at
 * once, so without it the transactions would follow one another without any other request being
 * read in between.
 */
export async function inBatches(batch: () => Promise<number>): Promise<void> {
  while ((await batch()) >= ROWS_PER_TRANSACTION) await setImmediate();
}
