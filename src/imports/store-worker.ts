import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { createStorage } from '../storage/create-storage.ts';
import { StorageLimitError } from '../storage/storage.ts';
import { putProbed } from '../uploads/store-upload.ts';
import { mapConcurrently } from '../shared/concurrency.ts';
import { readBufferBytes, type StoreRequest, type StoreResult, type StoreWorkerData, type WorkerMessage } from './store-thread.ts';

// The thread in which an import reads its files and stores their bytes (src/imports/store-thread.ts):
// the reading, hashing, writing and the file system calls of a batch run here, on another core, while
// the import's own thread commits the batch before. Only storage is used here; the database is the
// import thread's alone.

const { storage: storageOptions, concurrency } = workerData as StoreWorkerData;
const storage = await createStorage(storageOptions);
const port = parentPort!;

/** A write shows signs of life at most this often (the import pushes its crash net back). */
const ALIVE_EVERY_MS = 10_000;

async function storeOne(request: StoreRequest): Promise<StoreResult> {
  const source = createReadStream(Buffer.from(request.path.buffer, request.path.byteOffset, request.path.byteLength), { highWaterMark: readBufferBytes(request.walkedSize) });
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
    const failed = readError as NodeJS.ErrnoException | null;
    if (failed !== null) return { kind: 'unreadable', code: typeof failed.code === 'string' ? failed.code : 'EIO' };
    throw error;
  }
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
