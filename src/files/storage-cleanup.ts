import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import { cancelJob, enqueueJob, type JobHandler } from '../jobs/queue.ts';

export const STORAGE_CLEANUP_JOB = 'storage.cleanup';
const keyFor = (storageKey: string) => `storage-cleanup:${storageKey}`;

/**
 * Deletes the bytes at `storageKey` at `runAt` unless a file record still points at them. Uploads
 * schedule this before streaming and cancel it when they commit, so bytes orphaned by a crash
 * between storing and committing are removed; deletions schedule it as a safety net.
 */
export async function scheduleStorageDelete(executor: Executor, storageKey: string, runAt: number): Promise<void> {
  await enqueueJob(executor, { type: STORAGE_CLEANUP_JOB, payload: { storageKey }, runAt, dedupeKey: keyFor(storageKey) });
}

export async function cancelStorageDelete(executor: Executor, storageKey: string): Promise<void> {
  await cancelJob(executor, keyFor(storageKey));
}

export function storageCleanupHandler(ctx: AppContext): JobHandler {
  return async (job) => {
    const { storageKey } = job.payload as { storageKey: string };
    const referenced = await ctx.db.selectFrom('files').select('id').where('storageKey', '=', storageKey).executeTakeFirst();
    if (!referenced) await ctx.storage.delete(storageKey);
  };
}
