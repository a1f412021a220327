import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { AppContext } from '../context.ts';
import { forAccount } from '../db/account-scope.ts';
import { lockAccountRow } from '../db/locks.ts';
import { scheduleStorageDelete } from '../jobs/storage-cleanup.ts';
import { cancelExpiry } from './expiry.ts';
import { cancelMediaWork } from '../media/media-jobs.ts';

/**
 * Removes a file: record, tags and quota charge in one transaction, then its bytes. If the bytes
 * cannot be removed now, a durable job keeps trying, so nothing is left behind.
 * Returns false when the account has no such file, or `only` refuses it as it is now (read under the
 * account's lock, which every change of a file takes). `also` is committed with the record's removal.
 */
export async function deleteFileRecord(
  ctx: AppContext,
  userId: string,
  fileId: string,
  also?: (trx: Transaction<Database>) => Promise<void>,
  only?: (file: { expiresAt: number | null }) => boolean,
): Promise<boolean> {
  const storageKeys = await ctx.db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, ctx.dialect, userId);
    const account = forAccount(trx, userId);
    const file = await account.selectFrom('files').select(['id', 'size', 'storageKey', 'thumbnailKey', 'expiresAt']).where('id', '=', fileId).executeTakeFirst();
    if (!file || (only && !only(file))) return null;
    await account.deleteFrom('files').where('id', '=', fileId).execute();
    await trx.updateTable('users').set((eb) => ({ usedBytes: eb('usedBytes', '-', file.size) })).where('id', '=', userId).execute();
    // Committed together with the delete: if this process dies before removing the bytes, the job does.
    const keys = file.thumbnailKey === null ? [file.storageKey] : [file.storageKey, file.thumbnailKey];
    for (const key of keys) await scheduleStorageDelete(trx, key, Date.now() + 60_000);
    await cancelExpiry(trx, fileId);
    await cancelMediaWork(trx, fileId);
    if (also) await also(trx);
    return keys;
  });
  if (storageKeys === null) return false;
  // The thumbnail goes with the bytes (contract §3: "bytes, thumbnails and metadata are gone"); the
  // recognised text went with the record.
  for (const storageKey of storageKeys) {
    try {
      await ctx.storage.delete(storageKey);
    } catch (error) {
      ctx.log.warn({ err: error, storageKey }, 'bytes of a deleted file are left to the cleanup job');
    }
  }
  return true;
}
