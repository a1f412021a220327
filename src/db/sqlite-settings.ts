import type SqliteDatabase from 'better-sqlite3';

/** SQLite's `mmap_size`: the largest this build of SQLite maps (SQLITE_MAX_MMAP_SIZE, 0x7fff0000). */
export const SQLITE_MMAP_BYTES = 0x7fff0000;

/**
 * The settings of every connection that reads the database: the server's own and its readers'
 * (src/db/sqlite-readers.ts).
 */
export function applyReadSettings(file: SqliteDatabase.Database): void {
  // 64 MiB of page cache (the default is 2 MiB): listing a large account scans its indexes, which
  // should stay in memory rather than be re-read from the file on every request.
  file.pragma('cache_size = -65536');
  // Temporary storage in memory. A write inside a transaction keeps a statement journal (the pages
  // it changes, to undo it alone should it fail), and a write to `files` fires triggers and changes
  // about 20 index pages, past the 64 KiB after which SQLite moves that journal to a temporary file:
  // every such statement then wrote its pages to disk once more. Measured on a 20,000-file library,
  // inserts committed 32 to a transaction as uploads and imports commit: 150 → 92 µs a file, and an
  // import of 20,000 files made 182,000 writes instead of 1,150,000. Sorts that outgrow the page
  // cache are held in memory too; Hoard's queries sort at most a page or a bounded selection
  // (docs/decisions.md, "SQLite settings").
  file.pragma('temp_store = MEMORY');
  // Reads through a memory map of the file's first 2 GiB (the most this SQLite build maps): a page
  // outside the page cache is then read where the operating system keeps it, not copied in by a
  // system call. With a million files (a 4 GB database) a search's index look-ups fall mostly outside
  // the 64 MiB cache: a broad search sorted by name 113–115 → 90–97 ms. The mapped pages are the
  // system's file cache, shared by every process (WORKERS) rather than held by each
  // (docs/decisions.md, "SQLite settings").
  file.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`);
}

/**
 * Kysely prepares every SQLite query anew; parsing and planning then cost more than running most of
 * them. This keeps the most recently used prepared statements (by SQL text) for reuse. A statement
 * still being iterated (a streamed query) is never handed out twice: another copy is prepared.
 */
export function withStatementCache(file: SqliteDatabase.Database, size = 256) {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => file.close(),
    get inTransaction() {
      return file.inTransaction;
    },
    prepare(text: string): SqliteDatabase.Statement {
      const cached = cache.get(text);
      if (cached && !cached.busy) {
        cache.delete(text);
        cache.set(text, cached);
        return cached;
      }
      const statement = file.prepare(text);
      if (!cached) {
        cache.set(text, statement);
        if (cache.size > size) cache.delete(cache.keys().next().value!);
      }
      return statement;
    },
  };
}
