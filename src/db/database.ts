import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompiledQuery, Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, SqliteDriver, SqliteQueryCompiler, sql, type DatabaseConnection, type SqliteDialectConfig } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type Dialect = 'sqlite' | 'postgres';

/**
 * The database cannot be used right now, for reasons outside the statement: PostgreSQL cannot be
 * reached or ended the connection, SQLite's write lock stayed with another process past the
 * wait for it (SQLITE_LOCK_WAIT_MS). The HTTP layer answers it 503 with Retry-After, not 500.
 */
export class DatabaseUnavailable extends Error {
  constructor(cause: unknown) {
    super('The database cannot be used right now', { cause });
    this.name = 'DatabaseUnavailable';
  }
}

/**
 * Whether an error means the database cannot be used right now (DatabaseUnavailable) rather than
 * that a statement was wrong: a connection PostgreSQL ended or lost (SQLSTATE class 08, 57P01–57P03,
 * or the driver's "Connection terminated"), or SQLite busy past the wait for its lock.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof DatabaseUnavailable) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (isSqliteBusy(error)) return true;
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03')) return true;
  // node-postgres's own words: a connection that ended, and a statement sent on a connection that
  // already failed (a transaction whose connection ended between two of its statements).
  return error.message.startsWith('Connection terminated') || error.message === 'Client has encountered a connection error and is not queryable';
}

/** The database's disk is full: SQLite's SQLITE_FULL, PostgreSQL's disk_full (SQLSTATE 53100). */
export function isDatabaseFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return code === 'SQLITE_FULL' || code === '53100';
}

/** The dialect a Kysely instance (or transaction) speaks. */
export function dialectOf(db: Kysely<any>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
}

// int8 (counts, epoch-millisecond times) would otherwise arrive as strings from pg. Every such value
// we store is far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/**
 * Appended to a query (`.modifyEnd(prepared)`) on a hot path: on PostgreSQL it then runs as a named
 * prepared statement, planned once per connection instead of on every request. Only code-defined
 * queries are marked, so the number of statements per connection stays small.
 */
export const prepared = sql`/* prepared */`;
const PREPARED_MARK = '/* prepared */';

/** Prepared statements a connection keeps at most; further marked queries run unprepared. */
const MAX_PREPARED_PER_CONNECTION = 200;
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `h${createHash('sha1').update(text).digest('hex')}`;
    if (statementNames.size < 4 * MAX_PREPARED_PER_CONNECTION) statementNames.set(text, name);
  }
  return name;
}

/** A system call's failure on the connection's socket (Node's errors carry the call's name). */
function isSocketFailure(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return typeof syscall === 'string' && (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ETIMEDOUT');
}

/**
 * A pool whose clients run marked statements as named prepared statements, and report a socket that
 * failed under a statement as the database unavailable.
 */
function preparingPool(pool: pg.Pool): pg.Pool {
  const connect = pool.connect.bind(pool);
  (pool as { connect: unknown }).connect = async () => {
    // No connection could be opened (refused, unreachable, closed to connections, too many): the
    // database's state, never the request's.
    const client = await connect().catch((error: unknown) => {
      throw new DatabaseUnavailable(error);
    });
    const marked = client as pg.PoolClient & { hoardPrepared?: Set<string> };
    if (!marked.hoardPrepared) {
      // The pool listens for the errors of a connection only while it waits in the pool. One that
      // ends while a request holds it (between two statements of a transaction, or as the database
      // stops) reports an 'error' event as well as failing the statements: with no listener, Node
      // would end the process over it. Those statements' failures are what is answered (503) and
      // logged, and the pool drops the connection when it comes back, so the event adds nothing.
      client.on('error', () => {});
      const preparedHere = (marked.hoardPrepared = new Set());
      const send = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      // A connection whose socket fails under a statement (reset by PostgreSQL, a proxy or a
      // firewall: ECONNRESET, EPIPE) fails it with the socket's error, not PostgreSQL's: that is the
      // database's state, as when it ends the connection itself (57P01).
      const query = (...args: unknown[]) =>
        send(...args).catch((error: unknown) => {
          throw isSocketFailure(error) ? new DatabaseUnavailable(error) : error;
        });
      (client as { query: unknown }).query = (text: unknown, values?: unknown) => {
        if (typeof text !== 'string' || !text.endsWith(PREPARED_MARK)) return query(text, values);
        const name = statementName(text);
        if (!preparedHere.has(name)) {
          if (preparedHere.size >= MAX_PREPARED_PER_CONNECTION) return query(text, values);
          preparedHere.add(name);
        }
        return query({ name, text, values });
      };
    }
    return client;
  };
  return pool;
}

/**
 * The connection URL with the session settings Hoard's statements want (after any `options` the URL
 * carries). The application's statements are short index reads, for which neither of these pays:
 *
 * - The JIT compiler off. It compiles a statement whose estimated cost passes `jit_above_cost`, which
 *   the listing's statements with a few hundred index ranges did (a timeline by week in a zone with
 *   a half-hour offset: 157 buckets, 471 ranges): with 100,000 files it spent 153 ms compiling for
 *   6 ms of execution, and it runs again for every such statement since nothing is cached across them.
 * - No parallel workers. The planner splits a count of tens of thousands of index entries among
 *   workers it starts for the statement, each a new process that must first map the shared buffers it
 *   reads. Measured with a million files, counting 66,895 name matches: 270–380 ms with two workers,
 *   44–51 ms without.
 */
export function withSessionSettings(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', [url.searchParams.get('options'), '-c jit=off -c max_parallel_workers_per_gather=0'].filter(Boolean).join(' '));
  return url.toString();
}

/** SQLite's `mmap_size`: the largest this build of SQLite maps (SQLITE_MAX_MMAP_SIZE, 0x7fff0000). */
export const SQLITE_MMAP_BYTES = 0x7fff0000;

/** Where the database layer reports what it recovers from on its own. */
export interface DatabaseLog {
  warn(details: object, message: string): void;
}

export function openDatabase(options: { databaseUrl: string | null; dataDir: string; poolSize?: number; log?: DatabaseLog }): DatabaseHandle {
  if (options.databaseUrl) {
    const pool = preparingPool(new pg.Pool({ connectionString: withSessionSettings(options.databaseUrl), max: options.poolSize ?? 10 }));
    // A connection waiting in the pool can end: PostgreSQL restarting, an administrator ending
    // sessions, a proxy closing idle ones. The pool drops it and reports the error here, and the next
    // query opens another; with no listener, Node would end the process over it. Only the code and
    // message are logged: the error carries the client, whose parameters may hold the password.
    pool.on('error', (error: Error & { code?: string }) => options.log?.warn({ code: error.code, error: error.message }, 'a PostgreSQL connection ended while idle; the next query opens another'));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }

  fs.mkdirSync(options.dataDir, { recursive: true });
  const file = new SqliteDatabase(path.join(options.dataDir, 'hoard.sqlite'));
  file.pragma('journal_mode = WAL');
  // NORMAL in WAL mode survives a killed process; only a power cut can lose the last commits.
  file.pragma('synchronous = NORMAL');
  file.pragma('foreign_keys = ON');
  // While the database is opened; see below.
  file.pragma('busy_timeout = 5000');
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
  // From here on a statement that finds the database locked fails at once, and the driver waits for
  // the lock without holding the process (ImmediateSqliteDriver). The pragmas above may still have
  // waited for it: nothing is served while a database is being opened.
  file.pragma('busy_timeout = 0');
  const db = new Kysely<Database>({ dialect: new StablePlanSqliteDialect({ database: withStatementCache(file) }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/**
 * SQLite (3.47+, as bundled by better-sqlite3) marks a statement for recompilation whenever a
 * parameter is rebound if that parameter's value could steer the plan: a LIMIT, or any parameter of
 * a statement that joins tables. Every execution of such a prepared statement then parses and plans
 * it again (measured: a two-table lookup 8 µs instead of 1 µs; the file listing's page query 102 µs
 * instead of 47 µs). Written as `+?` (the no-op unary plus: same value, same type, no affinity, as a
 * bare `?`), a parameter is no longer a bare variable to the planner, so plans stay fixed, as they do
 * on PostgreSQL. Hoard's plans never depend on a bound value.
 */
class StablePlanQueryCompiler extends SqliteQueryCompiler {
  protected override getCurrentParameterPlaceholder(): string {
    return '+?';
  }
}

/**
 * How long a statement waits for SQLite's write lock that another process holds before the database
 * counts as unavailable (503 with Retry-After): as long as busy_timeout waited before.
 */
const SQLITE_LOCK_WAIT_MS = 5000;
/**
 * The pauses between attempts: growing as SQLite's own busy handler's do, but to 10 ms at most
 * (SQLite's grow to 100), since the import frees the lock only briefly between its batches. A failed
 * attempt costs microseconds.
 */
const SQLITE_LOCK_PAUSES_MS = [1, 2, 5, 10];

function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Transactions begin IMMEDIATE: they take SQLite's write lock when they start, waiting for it as
 * below. A DEFERRED transaction that reads and then writes fails at once with SQLITE_BUSY
 * should another process have written in between (WAL mode cannot move its snapshot), which
 * several server processes on one database file (WORKERS, src/workers.ts) would otherwise meet under
 * load. Within one process nothing changes: its single connection runs one transaction at a time.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  readonly #database: { readonly inTransaction: boolean };
  constructor(options: TransactionAwareConfig) {
    super(options);
    this.#database = options.database;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  #patient: DatabaseConnection | null = null;

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    return (this.#patient ??= this.#waitingForTheLock(connection));
  }

  /**
   * The connection, made to wait for SQLite's write lock while another process or connection holds
   * it (another worker, the import command, a hand-run sqlite3 session): a statement that finds the
   * database locked is tried again after a pause, for up to SQLITE_LOCK_WAIT_MS, and the connection
   * is handed back meanwhile, so this process's reads go on. better-sqlite3 is synchronous: SQLite's
   * own wait (busy_timeout) held the whole process, every request and every upload's stream with it,
   * for as long as the other side kept the lock (docs/decisions.md, "SQLite settings").
   *
   * Only a statement begun outside a transaction is tried again: BEGIN itself, or a statement that is
   * its own transaction (sqlite.org, sqlite3_step: such a statement may be retried). Within a
   * transaction SQLite may have rolled it back, and the error goes to the caller as before.
   */
  #waitingForTheLock(connection: DatabaseConnection): DatabaseConnection {
    const driver = this;
    const database = this.#database;
    const patient: DatabaseConnection = {
      async executeQuery(query) {
        const retryable = !database.inTransaction;
        let waitingSince: number | undefined;
        for (let attempt = 0; ; attempt++) {
          try {
            return await connection.executeQuery(query);
          } catch (error) {
            if (!retryable || !isSqliteBusy(error)) throw error;
            waitingSince ??= performance.now();
            if (performance.now() - waitingSince >= SQLITE_LOCK_WAIT_MS) throw error;
          }
          // The caller holds this process's one connection; another caller may use it meanwhile, as
          // between any two statements outside a transaction.
          await driver.releaseConnection();
          try {
            await sleep(SQLITE_LOCK_PAUSES_MS[Math.min(attempt, SQLITE_LOCK_PAUSES_MS.length - 1)]!);
          } finally {
            await driver.acquireConnection();
          }
        }
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
    return patient;
  }

  /**
   * SQLite ends a transaction itself when a statement in it fails with SQLITE_FULL, SQLITE_IOERR,
   * SQLITE_NOMEM, SQLITE_BUSY or SQLITE_INTERRUPT (sqlite.org, "Response To Errors Within A
   * Transaction"). Kysely's ROLLBACK then fails with "no transaction is active", and that error,
   * not the one that ended the transaction, would reach the caller: a full disk became a 500.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#database.inTransaction) await super.rollbackTransaction(connection);
  }
}

type TransactionAwareConfig = SqliteDialectConfig & { database: { readonly inTransaction: boolean } };

class StablePlanSqliteDialect extends SqliteDialect {
  private readonly options: TransactionAwareConfig;
  constructor(options: TransactionAwareConfig) {
    super(options);
    this.options = options;
  }
  override createDriver(): SqliteDriver {
    return new ImmediateSqliteDriver(this.options);
  }
  override createQueryCompiler(): SqliteQueryCompiler {
    return new StablePlanQueryCompiler();
  }
}

/**
 * Kysely prepares every SQLite query anew; parsing and planning then cost more than running most of
 * them. This keeps the most recently used prepared statements (by SQL text) for reuse. A statement
 * still being iterated (a streamed query) is never handed out twice: another copy is prepared.
 */
function withStatementCache(file: SqliteDatabase.Database, size = 256) {
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
