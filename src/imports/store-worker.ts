import { closeSync, constants, createReadStream, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { createStorage } from '../storage/create-storage.ts';
import { LocalStorage } from '../storage/local.ts';
import { StorageLimitError } from '../storage/storage.ts';
import { ContentProbe } from '../uploads/content-type.ts';
import { putProbed } from '../uploads/store-upload.ts';
import { mapConcurrently } from '../shared/concurrency.ts';
import { MAX_READ_BUFFER, readBufferBytes, type StoreRequest, type StoreResult, type StoreWorkerData, type WorkerMessage } from './store-thread.ts';

// The thread in which an import reads its files and stores their bytes (src/imports/store-thread.ts):
// the reading, hashing, writing and the file system calls of a batch run here, on another core, while
// the import's own thread commits the batch before. Only storage is used here; the database is the
// import thread's alone.

const { storage: storageOptions, concurrency } = workerData as StoreWorkerData;
const storage = await createStorage(storageOptions);
const port = parentPort!;

/** A write shows signs of life at most this often (the import pushes its crash net back). */
const ALIVE_EVERY_MS = 10_000;

/** Local disk, whose files this thread may write with blocking calls (LocalStorage.createBlocking); null for S3. */
const local = storage instanceof LocalStorage ? storage : null;

async function storeOne(request: StoreRequest): Promise<StoreResult> {
  const path = Buffer.from(request.path.buffer, request.path.byteOffset, request.path.byteLength);
  // A file the walk saw smaller than one read buffer (most of a library of documents and
  // screenshots) is read and written with blocking calls: this thread has nothing else to do
  // meanwhile, and each asynchronous call would be a round trip through the thread pool
  // (docs/decisions.md, "Importing a library"). One that grew since is streamed, below.
  if (local !== null && request.walkedSize < MAX_READ_BUFFER) {
    const read = readWhole(path, request.walkedSize);
    if (read.kind !== 'larger') {
      if (read.kind === 'unreadable') return read;
      if (read.bytes.length > request.maxBytes) return { kind: 'tooLarge' };
      const probe = new ContentProbe();
      probe.update(read.bytes);
      await local.createBlocking(request.key, read.bytes);
      return { kind: 'stored', size: read.bytes.length, sha256: probe.digest(), head: probe.headBytes() };
    }
  }
  const source = createReadStream(path, { highWaterMark: readBufferBytes(request.walkedSize) });
  // An error of reading the file is the file's failure; one of writing to storage is the import's.
  let readError: NodeJS.ErrnoException | null = null;
  source.once('error', (error) => void (readError ??= error as NodeJS.ErrnoException));
  let aliveAt = Date.now();
  const onProgress = () => {
    const now = Date.now();
    if (now - aliveAt < ALIVE_EVERY_MS) return;
    aliveAt = now;
    port.postMessage({ alive: request.key } satisfies WorkerMessage);
  };
  try {
    const { size, sha256, head } = await putProbed(storage, request.key, source, { maxBytes: request.maxBytes, deferNameSync: true, onProgress });
    return { kind: 'stored', size, sha256, head };
  } catch (error) {
    source.destroy();
    if (error instanceof StorageLimitError) return { kind: 'tooLarge' };
    // Set by the listener above: the cast undoes the narrowing to null that TypeScript cannot see past.
    const failed = readError as NodeJS.ErrnoException | null;
    if (failed !== null) return unreadable(failed);
    throw error;
  }
}

/**
 * A file read whole into a buffer one byte larger than its size as walked, with blocking calls. A
 * short read of a regular file is its end; a full buffer means the file grew since the walk
 * ('larger'). An error of reading is the file's own failure, as when it is streamed. Opened without
 * blocking, so that a file replaced by a named pipe since the walk cannot stall the thread.
 */
function readWhole(path: Buffer, walkedSize: number): { kind: 'read'; bytes: Buffer } | { kind: 'larger' } | Extract<StoreResult, { kind: 'unreadable' }> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return unreadable(error);
  }
  try {
    const buffer = Buffer.allocUnsafe(walkedSize + 1);
    for (let length = 0; ; ) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) return { kind: 'read', bytes: buffer.subarray(0, length) };
      length += read;
      if (length === buffer.length) return { kind: 'larger' };
    }
  } catch (error) {
    return unreadable(error);
  } finally {
    closeSync(fd);
  }
}

/** A file's own failure to be read, by its error's code (EIO when it has none). */
function unreadable(error: unknown): Extract<StoreResult, { kind: 'unreadable' }> {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return { kind: 'unreadable', code: typeof code === 'string' ? code : 'EIO' };
}

// Batches are stored one after the other, in the order they come.
let queue: Promise<void> = Promise.resolve();
port.on('message', (message: { batch: number; files: StoreRequest[] } | 'close') => {
  queue = queue.then(() => (message === 'close' ? storage.close().finally(() => port.close()) : storeBatch(message.batch, message.files)));
});

function storeBatch(batch: number, files: StoreRequest[]): Promise<void> {
  return mapConcurrently(files, concurrency, storeOne)
    .then(async (results) => {
      // The names of the batch's bytes made durable together, before the import commits any record.
      await storage.syncNames(files.filter((_, i) => results[i]!.kind === 'stored').map((file) => file.key));
      port.postMessage({ batch, results } satisfies WorkerMessage);
    })
    .catch((error: unknown) => {
      const { message: text, stack } = error instanceof Error ? error : { message: String(error), stack: undefined };
      port.postMessage({ batch, error: { message: text, stack: stack ?? null } } satisfies WorkerMessage);
    });
}
