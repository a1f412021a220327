import type { Readable } from 'node:stream';
import type { Transaction } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import type { Principal } from '../auth/principal.ts';
import { newId } from '../db/ids.ts';
import { cancelStorageDelete, CleanupNet } from '../jobs/storage-cleanup.ts';
import type { FileRow } from '../files/file-access.ts';
import type { ResolvedOptions } from '../shared/upload-options.ts';
import { ContentProbe, resolveMimeType } from './content-type.ts';
import { commitFile } from './commit-file.ts';

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
  const key = `files/${userId}/${id}`;
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
  const probe = new ContentProbe();
  const onData = (chunk: Buffer) => {
    probe.update(chunk);
    net.alive();
  };
  const { size } = await ctx.storage.put(key, source, { maxBytes: options.maxBytes, ...(options.contentType ? { contentType: options.contentType } : {}), onData });
  net.alive();
  await net.settled();
  return { id, key, size, sha256: probe.digest(), head: probe.headBytes() };
}

/** Removes stored bytes that will get no record; the scheduled cleanup stays only if this fails. */
export async function discardStored(ctx: AppContext, stored: StoredBytes): Promise<void> {
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
  file: { name: string; declaredType: string | undefined; folderId: string | null; options: ResolvedOptions },
  trxHook?: (trx: Transaction<Database>, file: FileRow) => Promise<void>,
): Promise<FileRow> {
  try {
    const mimeType = await resolveMimeType(file.declaredType, stored.head, file.name);
    return await commitFile(ctx, principal, {
      id: stored.id,
      storageKey: stored.key,
      originalName: file.name,
      mimeType,
      size: stored.size,
      sha256: stored.sha256,
      folderId: file.folderId,
      options: file.options,
    }, trxHook);
  } catch (error) {
    await discardStored(ctx, stored);
    throw error;
  }
}
