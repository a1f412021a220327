import { Worker } from 'node:worker_threads';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely';
import type { ReaderAnswer, ReaderRequest } from './sqlite-reader-worker.ts';

/** A reader without a statement for this long stops; the next statement starts another. */
const IDLE_MS = 60_000;

/**
 * Threads that read the SQLite database beside the server's own connection (docs/decisions.md,
 * "Reads that may scan"). better-sqlite3 runs a statement in the calling thread, so a statement
 * that scans an account (a search too short for the trigram index, say: 3 s for a million files)
 * held every other request of the process for as long. Sent to a reader, it holds that reader
 * only. WAL mode lets readers run while the server's connection writes; each statement reads the
 * database as last committed when it starts, as one run by the server's own connection outside a
 * transaction would.
 *
 * A statement goes to the reader with the fewest waiting; each reader runs one at a time. Readers
 * start on first use and stop after IDLE_MS without a statement: each holds about 25 MiB (a thread
 * with its own JavaScript heap and TypeScript loader), which a process at rest should not keep.
 */
export class SqliteReaders {
  readonly #path: string;
  readonly #size: number;
  readonly #idleMs: number;
  readonly #readers: Reader[] = [];
  #closed = false;

  constructor(path: string, size: number, idleMs = IDLE_MS) {
    this.#path = path;
    this.#size = Math.max(1, size);
    this.#idleMs = idleMs;
  }

  /** Readers running now. */
  get running(): number {
    return this.#live();
  }

  run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    if (this.#closed) return Promise.reject(new Error('The database is closed'));
    return this.#pick().run(sql, parameters);
  }

  #pick(): Reader {
    let best: Reader | null = null;
    for (const reader of this.#readers) if (!reader.failed && (!best || reader.waiting < best.waiting)) best = reader;
    if (best && (best.waiting === 0 || this.#live() >= this.#size)) return best;
    const reader = new Reader(this.#path, this.#idleMs);
    this.#readers.push(reader);
    reader.onExit = () => this.#readers.splice(this.#readers.indexOf(reader), 1);
    return reader;
  }

  #live(): number {
    return this.#readers.filter((reader) => !reader.failed).length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#readers.map((reader) => reader.close()));
  }
}

class Reader {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(rows: unknown[]): void; reject(error: Error): void }>();
  readonly #idleMs: number;
  #idle: NodeJS.Timeout | null = null;
  #next = 0;
  /** Failed or stopping: given no more statements. */
  failed = false;
  onExit: () => void = () => {};

  constructor(path: string, idleMs: number) {
    this.#idleMs = idleMs;
    this.#worker = new Worker(new URL('./sqlite-reader-worker.ts', import.meta.url), { workerData: { path } });
    // An idle reader does not keep the process alive.
    this.#worker.unref();
    this.#worker.on('message', (answer: ReaderAnswer) => {
      const waiting = this.#pending.get(answer.id);
      if (!waiting) return;
      this.#pending.delete(answer.id);
      if (this.#pending.size === 0) {
        this.#worker.unref();
        this.#idle = setTimeout(() => this.#stop(), this.#idleMs).unref();
      }
      if ('rows' in answer) waiting.resolve(answer.rows);
      else waiting.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
    });
    // A reader that fails (cannot open the file, runs out of memory) fails what waits on it; the
    // next statement starts another.
    const fail = (error: Error) => {
      this.failed = true;
      for (const waiting of this.#pending.values()) waiting.reject(error);
      this.#pending.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => {
      fail(new Error(`A database reader stopped (exit code ${code})`));
      this.onExit();
    });
  }

  get waiting(): number {
    return this.#pending.size;
  }

  /** Stops the idle reader; SqliteReaders no longer hands it statements from here on. */
  #stop(): void {
    if (this.#pending.size > 0) return;
    this.failed = true;
    void this.#worker.terminate();
  }

  run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // A statement under way keeps the process alive until its answer arrives.
      this.#worker.ref();
      this.#worker.postMessage({ id, sql, parameters } satisfies ReaderRequest);
    });
  }

  async close(): Promise<void> {
    if (this.#idle) clearTimeout(this.#idle);
    await this.#worker.terminate();
  }
}

/** A Kysely driver whose statements run on SqliteReaders: reads only, no transactions. */
export class SqliteReadersDriver implements Driver {
  readonly #readers: SqliteReaders;
  readonly #connection: DatabaseConnection;
  constructor(readers: SqliteReaders) {
    this.#readers = readers;
    this.#connection = {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => ({ rows: (await readers.run(query.sql, query.parameters)) as R[] }),
      streamQuery: () => {
        throw new Error('A database reader does not stream');
      },
    };
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#connection;
  }
  async beginTransaction(): Promise<void> {
    throw new Error('A database reader runs no transactions');
  }
  async commitTransaction(): Promise<void> {
    throw new Error('A database reader runs no transactions');
  }
  async rollbackTransaction(): Promise<void> {
    throw new Error('A database reader runs no transactions');
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {
    await this.#readers.close();
  }
}
