import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CompiledQuery, Kysely, PostgresAdapter, PostgresDialect, SqliteAdapter, SqliteDialect, SqliteDriver, SqliteIntrospector, SqliteQueryCompiler, sql, type DatabaseConnection, type SqliteDialectConfig } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { applyReadSettings, withStatementCache } from './sqlite-settings.ts';
import { SqliteReaders, SqliteReadersDriver } from './sqlite-readers.ts';
import { ensureDataDir } from '../data-dir.ts';

export { SQLITE_MMAP_BYTES } from './sqlite-settings.ts';

export type Db = Kysely<Database>;
export type Dialect = 'sqlite' | 'postgres';

/**
 * The database cannot be used right now, for reasons outside the statement: PostgreSQL cannot be
 * reached or ended the connection, SQLite's write lock stayed with another process past the
 * wait for it (SQLITE_LOCK_WAIT_MS). The HTTP layer answers it 503 with Retry-After, not 500.
 */
export class DatabaseUnavailable extends Error {
  constructor(cause: unknown) {
    // The cause's own words go with it: an operator starting Hoard against a database that does not
    // exist, or a password PostgreSQL refuses, reads why in the one line the start prints.
    const why = cause instanceof Error && cause.message ? `: ${cause.message}` : '';
    super(`The database cannot be used right now${why}`, { cause });
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
  /**
   * For reads that may scan a large share of an account: on SQLite, threads with connections of
   * their own (src/db/sqlite-readers.ts), so that such a read holds none of the server's requests;
   * on PostgreSQL, whose statements never hold the process, `db` itself. Reads only, no transactions.
   */
  reader: Db;
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

/** How long a request may wait for a PostgreSQL connection: a new one's start-up, or a free one of the pool. */
const DATABASE_CONNECT_TIMEOUT_MS = 10_000;

/** Where the database layer reports what it recovers from on its own. */
export interface DatabaseLog {
  warn(details: object, message: string): void;
}

/**
 * SQLite readers at most (src/db/sqlite-readers.ts): two, so that one account's long scan leaves
 * another's read a thread to run on.
 */
const SQLITE_READERS = 2;

export function openDatabase(options: { databaseUrl: string | null; dataDir: string; poolSize?: number; readers?: number; log?: DatabaseLog }): DatabaseHandle {
  if (options.databaseUrl) {
    const pool = preparingPool(
      new pg.Pool({
        connectionString: withSessionSettings(options.databaseUrl),
        max: options.poolSize ?? 10,
        // Without a bound, a host that takes the connection and never answers (a wrong port, a
        // proxy without its upstream), or a pool whose every connection is stuck, held requests
        // for as long as that lasted. 10 s to get a connection, then the database is unavailable (503).
        connectionTimeoutMillis: DATABASE_CONNECT_TIMEOUT_MS,
        // A peer that vanished without closing (a dropped network path) is noticed by TCP itself.
        keepAlive: true,
      }),
    );
    // A connection waiting in the pool can end: PostgreSQL restarting, an administrator ending
    // sessions, a proxy closing idle ones. The pool drops it and reports the error here, and the next
    // query opens another; with no listener, Node would end the process over it. Only the code and
    // message are logged: the error carries the client, whose parameters may hold the password.
    pool.on('error', (error: Error & { code?: string }) => options.log?.warn({ code: error.code, error: error.message }, 'a PostgreSQL connection ended while idle; the next query opens another'));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', reader: db, close: () => db.destroy() };
  }

  ensureDataDir(options.dataDir);
  const databasePath = path.join(options.dataDir, 'hoard.sqlite');
  const created = !fs.existsSync(databasePath);
  const file = new SqliteDatabase(databasePath);
  // A new database is this user's alone, as the secret key is: it holds accounts, password hashes and
  // sessions. SQLite gives its -wal and -shm files the database file's mode.
  if (created) fs.chmodSync(databasePath, 0o600);
  file.pragma('journal_mode = WAL');
  // NORMAL in WAL mode survives a killed process; only a power cut can lose the last commits.
  file.pragma('synchronous = NORMAL');
  file.pragma('foreign_keys = ON');
  // While the database is opened; see below.
  file.pragma('busy_timeout = 5000');
  applyReadSettings(file);
  // From here on a statement that finds the database locked fails at once, and the driver waits for
  // the lock without holding the process (ImmediateSqliteDriver). The pragmas above may still have
  // waited for it: nothing is served while a database is being opened.
  file.pragma('busy_timeout = 0');
  const db = new Kysely<Database>({ dialect: new StablePlanSqliteDialect({ database: withStatementCache(file) }) });
  const readers = new SqliteReaders(file.name, options.readers ?? SQLITE_READERS);
  const reader = new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new SqliteReadersDriver(readers),
      createQueryCompiler: () => new StablePlanQueryCompiler(),
      createIntrospector: (kysely) => new SqliteIntrospector(kysely),
    },
  });
  return { db, dialect: 'sqlite', reader, close: async () => void (await Promise.all([db.destroy(), reader.destroy()])) };
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

export function isSqliteBusy(error: unknown): boolean {
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

/**
 * SQLite runs schema changes in transactions like any other statement, but Kysely's adapter says it
 * does not, and its migrator then ran each migration's statements one by one, outside any
 * transaction. An upgrade stopped part-way (a stop, a kill, a crash during a long migration) left a
 * migration half applied and unrecorded, and every later start failed on its first statement
 * ("table … already exists"). Said to support them, the migrator applies the pending migrations and
 * their records in one transaction, begun IMMEDIATE as every transaction here: a second process
 * migrating at the same moment waits for the lock (as any writer does, SQLITE_LOCK_WAIT_MS) and then
 * finds nothing left to do, or stops with "database is locked" while the first is still at it.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

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
  override createAdapter(): SqliteAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}
