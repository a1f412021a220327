import type { Readable } from 'node:stream';
import type { Transaction } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import type { Principal } from '../auth/principal.ts';
import { newId } from '../db/ids.ts';
import { cancelStorageDelete, cancelStorageDeletes, CleanupNet } from '../jobs/storage-cleanup.ts';
import type { FileRow } from '../files/file-access.ts';
import type { Storage } from '../storage/storage.ts';
import type { ResolvedOptions } from '../shared/upload-options.ts';
import { ContentProbe, resolveMimeType } from './content-type.ts';
import { commitFiles } from './commit-file.ts';

/** Bytes an upload has put at their final storage key, waiting for their record. */
export interface StoredBytes {
  id: string;
  key: string;
  size: number;
  sha256: string;
  /** The first bytes, to identify the content. */
  head: Buffer;
}

/**
 * Streams `source` to a new file's storage key (never held in memory), stopping past `maxBytes`
 * with StorageLimitError and nothing left behind. Should this process die between storing and
 * committing, the bytes are removed minutes later; while bytes flow, the write keeps pushing that
 * back. Every way a file is made (POST /api/files, archive extraction and creation) stores through here.
 */
export async function storeBytes(ctx: AppContext, userId: string, source: Readable, options: { maxBytes: number; contentType?: string | undefined }): Promise<StoredBytes> {
  const id = newId();
  const key = storageKeyFor(userId, id);
  const net = new CleanupNet(ctx, key);
  // A source can fail before storage reads it (an archive entry inflating past its size does so on
  // its first chunk); until put listens, its error is held here, not thrown at the process. Some
  // sources (yauzl's entry streams) only emit an error without ending: such a source is destroyed
  // with it, so put answers with that error instead of waiting for bytes that never come.
  let early: Error | null = null;
  const hold = (error: Error) => void (early ??= error);
  source.on('error', hold);
  try {
    await net.arm();
  } finally {
    source.off('error', hold);
  }
  if (early !== null && !source.errored) source.destroy(early);
  const probed = await putProbed(ctx.storage, key, source, { ...options, onProgress: net.alive, onMultipart: net.multipart });
  net.alive();
  await net.settled();
  return { id, key, ...probed };
}

/**
 * Streams `source` to `key`, hashing it and keeping its first bytes on the way: the part of
 * storeBytes that touches only storage, which an import runs in a thread of its own
 * (src/imports/store-worker.ts). `onProgress` is called with every chunk.
 */
export async function putProbed(
  storage: Storage,
  key: string,
  source: Readable,
  options: { maxBytes: number; contentType?: string | undefined; deferNameSync?: boolean | undefined; onProgress?: () => void; onMultipart?: (uploadId: string) => void },
): Promise<{ size: number; sha256: string; head: Buffer }> {
  const probe = new ContentProbe();
  const { onProgress } = options;
  const onData = (chunk: Buffer) => {
    probe.update(chunk);
    onProgress?.();
  };
  const { size } = await storage.put(key, source, {
    maxBytes: options.maxBytes,
    ...(options.contentType ? { contentType: options.contentType } : {}),
    ...(options.deferNameSync ? { deferNameSync: true } : {}),
    ...(options.onMultipart ? { onMultipart: options.onMultipart } : {}),
    onData,
  });
  return { size, sha256: probe.digest(), head: probe.headBytes() };
}

/** Where a new file's bytes go, and the crash safety net armed for them before any byte is written. */
export interface StoreSlot {
  id: string;
  key: string;
  net: CleanupNet;
}

const storageKeyFor = (userId: string, fileId: string) => `files/${userId}/${fileId}`;

/**
 * Places for `count` files of the account, their nets armed in one statement: for a batch of stores
 * (an import's), where one net per file would be a write of its own. A slot left unused is
 * released with releaseSlots().
 */
export async function reserveSlots(ctx: AppContext, userId: string, count: number): Promise<StoreSlot[]> {
  const ids = Array.from({ length: count }, () => newId());
  const nets = await CleanupNet.armAll(ctx, ids.map((id) => storageKeyFor(userId, id)));
  return ids.map((id, i) => ({ id, key: storageKeyFor(userId, id), net: nets[i]! }));
}

/** Cancels the nets of slots whose bytes were never stored. */
export async function releaseSlots(ctx: AppContext, slots: readonly StoreSlot[]): Promise<void> {
  await cancelStorageDeletes(ctx.db, slots.map((slot) => slot.key));
}

/** Removes stored bytes that will get no record; the scheduled cleanup stays only if this fails. */
export async function discardStored(ctx: AppContext, stored: StoredBytes): Promise<void> {
  // A commit whose answer was lost (the connection broke after PostgreSQL took the COMMIT) made its
  // file all the same: its bytes stay. Asked first; when the database cannot say, the bytes are left
  // to their net, whose job asks again before it removes anything.
  const recorded = await ctx.db
    .selectFrom('files')
    .select('id')
    .where('storageKey', '=', stored.key)
    .executeTakeFirst()
    .then((row) => row !== undefined, () => true);
  if (recorded) return;
  await ctx.storage.delete(stored.key).then(
    () => cancelStorageDelete(ctx.db, stored.key),
    (error: unknown) => ctx.log.warn({ err: error, key: stored.key }, 'bytes of a failed upload are left to the cleanup job'),
  );
}

/**
 * Makes stored bytes a file under the upload rules (contract §4): the type declared, else detected
 * from the content, else from the name; then the atomic commit. Should anything fail, the bytes are
 * removed and the error is thrown on. `trxHook` writes what must exist exactly when the file does,
 * in the commit's transaction (see commitFile).
 */
export async function commitStored(
  ctx: AppContext,
  principal: Principal,
  stored: StoredBytes,
  file: BatchItem['file'],
  trxHook?: BatchItem['trxHook'],
): Promise<FileRow> {
  try {
    const [row] = await commitStoredBatch(ctx, principal, [{ stored, file, ...(trxHook ? { trxHook } : {}) }]);
    return row!;
  } catch (error) {
    await discardStored(ctx, stored);
    throw error;
  }
}

/** What commitStoredBatch makes a file: the bytes, their file's name, folder and options, and the hook. */
export interface BatchItem {
  stored: StoredBytes;
  file: { name: string; declaredType: string | undefined; folderId: string | null; options: ResolvedOptions; declaredByMultipart?: boolean };
  trxHook?: (trx: Transaction<Database>, file: FileRow) => Promise<void>;
}

/**
 * commitStored for several stored files of one account, in one transaction: all become files, or
 * none does and the first refusal is thrown, the bytes left in place (the caller commits them one
 * by one, or discards them). One transaction instead of one per file is what lets an import commit
 * many small files a second (docs/decisions.md, "Importing a library").
 */
export async function commitStoredBatch(ctx: AppContext, principal: Principal, items: readonly BatchItem[]): Promise<FileRow[]> {
  const uploads = await Promise.all(
    items.map(async ({ stored, file, trxHook }) => ({
      upload: {
        id: stored.id,
        storageKey: stored.key,
        originalName: file.name,
        mimeType: await resolveMimeType(file.declaredType, stored.head, file.name, file.declaredByMultipart === true),
        size: stored.size,
        sha256: stored.sha256,
        folderId: file.folderId,
        options: file.options,
      },
      ...(trxHook ? { trxHook } : {}),
    })),
  );
  return commitFiles(ctx, principal, uploads);
}
