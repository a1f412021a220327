import { Worker } from 'node:worker_threads';
import type { Config } from '../config.ts';

/** A file an import asks its storing thread to store: read from `path`, stored at `key`. */
export interface StoreRequest {
  /** The file's name in bytes (src/imports/walk-tree.ts); a Buffer arrives in the thread as a Uint8Array. */
  path: Uint8Array;
  key: string;
  maxBytes: number;
  /** Its size when the tree was walked: a hint for the read buffer (the file is read whole whatever its size now). */
  walkedSize: number;
}

/** The read buffer of the default size, 64 KiB, and no larger. */
export const MAX_READ_BUFFER = 64 * 1024;

/**
 * The read buffer for a file of the tree: its size as walked (at least a byte), up to the default
 * 64 KiB. Each read allocates a buffer of this size, used or not: a library of small files read in
 * 64 KiB buffers kept the storing thread's collector busy for a seventh of its time. Measured
 * importing 20,000 files of 10 KiB, three runs each: 13.1–15.6 → 10.9–12.4 s of user CPU,
 * 18.6–20.9 → 14.8–19.2 s in all.
 */
export function readBufferBytes(walkedSize: number): number {
  return Math.min(MAX_READ_BUFFER, walkedSize + 1);
}

/** How storing one file went: its bytes stored (not yet committed), or the file's own failure. */
export type StoreResult =
  | { kind: 'stored'; size: number; sha256: string; head: Uint8Array }
  | { kind: 'tooLarge' }
  /** Reading the file failed with this error code (gone, not readable). */
  | { kind: 'unreadable'; code: string };

export interface StoreWorkerData {
  storage: { kind: 'local' | 's3'; dataDir: string; s3?: NonNullable<Config['s3']> };
  concurrency: number;
}

export type WorkerMessage =
  | { batch: number; results: StoreResult[] }
  /** Storing failed for the import, not for one file (storage unreachable, disk full). */
  | { batch: number; error: { message: string; stack: string | null } }
  /** A long write of this key is still making progress. */
  | { alive: string };

/**
 * The thread in which an import stores its files' bytes (src/imports/store-worker.ts). On a small
 * machine an import of many small files is bound by its one thread: its database commits and the
 * reading, hashing and file system calls of storing take turns. With the storing in a thread of its
 * own, one batch is stored while the one before commits (docs/decisions.md, "Importing a library").
 */
export class StoreThread {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve: (results: StoreResult[]) => void; reject: (error: Error) => void }>();
  #nextBatch = 1;
  #failed: Error | null = null;

  constructor(config: Config, options: { concurrency: number; onAlive: (key: string) => void }) {
    const data: StoreWorkerData = {
      storage: { kind: config.storage, dataDir: config.dataDir, ...(config.s3 ? { s3: config.s3 } : {}) },
      concurrency: options.concurrency,
    };
    this.#worker = new Worker(new URL('./store-worker.ts', import.meta.url), { workerData: data });
    this.#worker.on('message', (message: WorkerMessage) => {
      if ('alive' in message) {
        options.onAlive(message.alive);
        return;
      }
      const waiting = this.#waiting.get(message.batch);
      this.#waiting.delete(message.batch);
      if ('error' in message) {
        const error = new Error(message.error.message);
        if (message.error.stack) error.stack = message.error.stack;
        waiting?.reject(error);
      } else waiting?.resolve(message.results);
    });
    const fail = (error: Error) => {
      this.#failed ??= error;
      for (const waiting of this.#waiting.values()) waiting.reject(error);
      this.#waiting.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`The import's storing thread stopped (exit code ${code})`)));
  }

  /** Stores the files; the results in their order. */
  store(files: StoreRequest[]): Promise<StoreResult[]> {
    if (this.#failed) return Promise.reject(this.#failed);
    const batch = this.#nextBatch++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(batch, { resolve, reject });
      this.#worker.postMessage({ batch, files });
    });
  }

  async close(): Promise<void> {
    if (this.#failed) return;
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    this.#worker.postMessage('close');
    await exited;
  }
}
