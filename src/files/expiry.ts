import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import { cancelJob, enqueueJob, type JobHandler } from '../jobs/queue.ts';
import { deleteFileRecord } from './delete-file.ts';

export const FILE_EXPIRY_JOB = 'file.expire';
const keyFor = (fileId: string) => `file-expiry:${fileId}`;

/** One job per file: setting a new expiry replaces the old one. */
export async function scheduleExpiry(executor: Executor, fileId: string, expiresAt: number): Promise<void> {
  await enqueueJob(executor, { type: FILE_EXPIRY_JOB, payload: { fileId }, runAt: expiresAt, dedupeKey: keyFor(fileId) });
}

export async function cancelExpiry(executor: Executor, fileId: string): Promise<void> {
  await cancelJob(executor, keyFor(fileId));
}

/**
 * Applies a file's expiry action. Idempotent: it re-reads the file and acts only when the expiry
 * it finds has really passed, so a late or repeated run changes nothing.
 */
export function fileExpiryHandler(ctx: AppContext): JobHandler {
  return async (job) => {
    const { fileId } = job.payload as { fileId: string };
    const file = await ctx.db.selectFrom('files').select(['id', 'userId', 'expiresAt', 'expiryAction']).where('id', '=', fileId).executeTakeFirst();
    const now = Date.now();
    if (!file || file.expiresAt === null) return;
    if (file.expiresAt > now) {
      await scheduleExpiry(ctx.db, file.id, file.expiresAt);
      return;
    }
    if (file.expiryAction === 'SET_PRIVATE') {
      await ctx.db
        .updateTable('files')
        .set({ visibility: 'PRIVATE', expiresAt: null, expiryAction: null, updatedAt: now })
        .where('id', '=', file.id)
        .where('expiresAt', '=', file.expiresAt)
        .execute();
      return;
    }
    await deleteFileRecord(ctx, file.userId, file.id);
  };
}
