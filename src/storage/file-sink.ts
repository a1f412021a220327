import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { StorageLimitError } from './storage.ts';
import { noteStreamedBytes } from '../memory.ts';

export interface FileSinkOptions {
  /** Where in the file the first byte goes (appending to an assembly file); 0 by default. */
  position?: number;
  /** More than this many bytes fail the stream with StorageLimitError before they are written. */
  maxBytes?: number | undefined;
  /** The stream must have exactly this many bytes. */
  expectedBytes?: number | undefined;
  /** Sees every chunk, in order, before it is written (hashing while streaming). */
  onData?: ((chunk: Buffer) => void) | undefined;
}

/**
 * Starting writeback of what has been written so far every this many bytes (an fdatasync in the
 * background while the stream goes on) means the disk writes the upload while it arrives, and the
 * fsync at the end only waits for the last few MiB instead of the whole file.
 */
const EARLY_SYNC_BYTES = 32 * 1024 * 1024;
/**
 * Chunks (64 KiB socket reads) are gathered into writes of this size: each write is a round trip
 * through libuv's thread pool that costs the event loop about as much as hashing the chunk (1 GiB
 * upload: 64 KiB writes 2.5 s of CPU, 256 KiB 2.1 s, 1 MiB 1.9 s). Small enough that a chunk is
 * released before it survives two young-generation collections (src/memory.ts collects every
 * 4 MiB streamed): buffers that do are promoted and then only freed by a full collection.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;
/**
 * A batch is also written once the last write is this old, so a slow but live upload keeps its file's
 * modification time fresh: the sweep of DATA_DIR/tmp (src/storage/tmp-sweep.ts) judges liveness by it.
 */
const FRESH_WRITE_MS = 60 * 1000;

/**
 * The end of every local storage write: counts bytes and enforces limits as they arrive (what
 * ByteCounter does for S3), lets observers see them, gathers them into 1 MiB writes at explicit
 * positions (one being written while the next fills), and on finish makes the file durable (fsync)
 * and closes it. One stream stage from the request body to the disk: a pipeline of transforms costs
 * a scheduling round per chunk per stage, which on a large upload is most of the CPU the server
 * spends besides hashing. At most two batches are held in memory.
 *
 * The handle is closed when the stream finishes or is destroyed (after writes in flight settle).
 */
export class FileSink extends Writable {
  /** Bytes accepted so far. */
  bytes = 0;
  readonly #handle: FileHandle;
  readonly #maxBytes: number | undefined;
  readonly #expectedBytes: number | undefined;
  readonly #onData: ((chunk: Buffer) => void) | undefined;
  #batch: Buffer[] = [];
  #batchBytes = 0;
  /** Where the next batch goes. */
  #position: number;
  #writing: Promise<void> = Promise.resolve();
  #failure: unknown = null;
  #unsynced = 0;
  #earlySync: Promise<void> = Promise.resolve();
  #earlySyncRunning = false;
  #lastWriteAt = Date.now();

  constructor(handle: FileHandle, options: FileSinkOptions = {}) {
    super({ highWaterMark: WRITE_BATCH_BYTES });
    this.#handle = handle;
    this.#position = options.position ?? 0;
    this.#maxBytes = options.maxBytes;
    this.#expectedBytes = options.expectedBytes;
    this.#onData = options.onData;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#accept([chunk], callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.#accept(
      chunks.map((c) => c.chunk),
      callback,
    );
  }

  #accept(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    if (this.#failure) return callback(this.#failure as Error);
    let length = 0;
    for (const buffer of buffers) length += buffer.length;
    const total = this.bytes + length;
    if (this.#maxBytes !== undefined && total > this.#maxBytes) return callback(new StorageLimitError(this.#maxBytes));
    if (this.#expectedBytes !== undefined && total > this.#expectedBytes) return callback(new Error(`Body is longer than the declared ${this.#expectedBytes} bytes`));
    if (this.#onData) for (const buffer of buffers) this.#onData(buffer);
    noteStreamedBytes(length);
    this.bytes = total;
    for (const buffer of buffers) this.#batch.push(buffer);
    this.#batchBytes += length;
    if (this.#batchBytes < WRITE_BATCH_BYTES && Date.now() - this.#lastWriteAt < FRESH_WRITE_MS) return callback();
    // A full batch: wait for the previous one to be written (backpressure), then start this one.
    this.#writing.then(() => {
      if (this.#failure) return callback(this.#failure as Error);
      this.#writeBatch();
      callback();
    });
  }

  /** Starts writing the gathered chunks; failures surface at the next write or at the end. */
  #writeBatch(): void {
    const buffers = this.#batch;
    const length = this.#batchBytes;
    const position = this.#position;
    this.#lastWriteAt = Date.now();
    this.#batch = [];
    this.#batchBytes = 0;
    this.#position += length;
    this.#writing = writeFully(this.#handle, buffers, position).then(
      () => {
        this.#unsynced += length;
        if (this.#unsynced >= EARLY_SYNC_BYTES && !this.#earlySyncRunning) {
          this.#unsynced = 0;
          this.#earlySyncRunning = true;
          this.#earlySync = this.#handle.datasync().then(
            () => void (this.#earlySyncRunning = false),
            (error: unknown) => {
              this.#failure ??= error;
              this.#earlySyncRunning = false;
            },
          );
        }
      },
      (error: unknown) => void (this.#failure ??= error),
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.#expectedBytes !== undefined && this.bytes !== this.#expectedBytes) {
      return callback(new Error(`Body has ${this.bytes} bytes, not the declared ${this.#expectedBytes}`));
    }
    (async () => {
      await this.#writing;
      if (this.#batchBytes > 0 && !this.#failure) {
        this.#writeBatch();
        await this.#writing;
      }
      await this.#earlySync;
      if (this.#failure) throw this.#failure;
      // The full fsync, as before: the bytes and the file's metadata are on disk before it is renamed.
      await this.#handle.sync();
      await this.#handle.close();
    })().then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // FileHandle.close() waits for operations still in flight; closing twice is harmless.
    Promise.all([this.#writing, this.#earlySync])
      .then(() => this.#handle.close())
      .then(
        () => callback(error),
        () => callback(error),
      );
  }
}

/** Writes every byte of `buffers` at `position`, however many calls it takes (writes may be partial). */
async function writeFully(handle: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let remaining = buffers;
  while (remaining.length > 0) {
    const { bytesWritten } = remaining.length === 1 ? await handle.write(remaining[0]!, 0, remaining[0]!.length, position) : await handle.writev(remaining, position);
    if (bytesWritten === 0) throw new Error('The file accepts no more bytes');
    position += bytesWritten;
    let skip = bytesWritten;
    const rest: Buffer[] = [];
    for (const buffer of remaining) {
      if (skip >= buffer.length) skip -= buffer.length;
      else {
        rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
        skip = 0;
      }
    }
    remaining = rest;
  }
}
