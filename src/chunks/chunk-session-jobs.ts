import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import { enqueueJob, type JobHandler } from '../jobs/queue.ts';
import { removeOrRetry } from '../jobs/storage-cleanup.ts';
import { chunkLimits } from '../shared/chunk-limits.ts';
import { sameStorageTarget } from '../storage/targets.ts';

export const CHUNK_SESSION_SWEEP_JOB = 'chunks.sweep';
export const CHUNK_STORAGE_ABORT_JOB = 'chunks.abortStorage';

interface SessionStorage {
  fileKey: string;
  storageUploadId: string;
  storageTarget: string | null;
}

/**
 * Removes the stored parts of sessions whose rows are being deleted with their account: the sweep
 * job of such a session finds no row and could not say where its parts are. Committed with the
 * deletion, so the parts are removed even if the process stops right after.
 */
export async function scheduleSessionStorageAbort(executor: Executor, sessions: SessionStorage[], runAt: number): Promise<void> {
  for (const session of sessions) {
    await enqueueJob(executor, {
      type: CHUNK_STORAGE_ABORT_JOB,
      payload: { fileKey: session.fileKey, storageUploadId: session.storageUploadId, storageTarget: session.storageTarget },
      runAt,
      dedupeKey: `chunk-storage-abort:${session.storageUploadId}`,
    });
  }
}

export function chunkStorageAbortHandler(ctx: AppContext): JobHandler {
  return async (job) => {
    const { fileKey, storageUploadId, storageTarget } = job.payload as SessionStorage;
    // Parts in another storage (the instance has moved since) are not this process's to remove.
    if (!sameStorageTarget(storageTarget, ctx.storage.target)) return;
    return removeOrRetry(ctx, job, { storageUploadId }, () => ctx.storage.abortMultipart(fileKey, storageUploadId));
  };
}

/**
 * One sweep job per session, due when it would go stale (or, once completed, when its metadata is
 * no longer needed). Activity moves it later; the job re-reads the session before acting.
 */
export async function scheduleSessionSweep(executor: Executor, sessionId: string, runAt: number): Promise<void> {
  await enqueueJob(executor, { type: CHUNK_SESSION_SWEEP_JOB, payload: { sessionId }, runAt, dedupeKey: `chunk-session:${sessionId}` });
}

export function chunkSessionSweepHandler(ctx: AppContext): JobHandler {
  return async (job) => {
    const { sessionId } = job.payload as { sessionId: string };
    const session = await ctx.db.selectFrom('chunkSessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
    if (!session) return;
    const now = Date.now();
    if (session.state === 'completed') {
      const due = session.lastActivityAt + chunkLimits.completedRetentionMs;
      if (due > now) return void (await scheduleSessionSweep(ctx.db, sessionId, due));
      await ctx.db.deleteFrom('chunkSessions').where('id', '=', sessionId).execute();
      return;
    }
    const staleAt = Math.max(session.lastActivityAt + chunkLimits.inactivityMs, session.completingUntil ?? 0);
    if (staleAt > now) return void (await scheduleSessionSweep(ctx.db, sessionId, staleAt));
    // Stale: remove its parts (local temporary files, or the S3 multipart upload), then the session.
    // The session stays until its parts are gone: its row is what says where they are.
    if (sameStorageTarget(session.storageTarget, ctx.storage.target)) {
      const refused = await removeOrRetry(ctx, job, { storageUploadId: session.storageUploadId }, () => ctx.storage.abortMultipart(session.fileKey, session.storageUploadId));
      if (refused) return refused;
    }
    await ctx.db.deleteFrom('chunkSessions').where('id', '=', sessionId).where('state', '!=', 'completed').execute();
  };
}
