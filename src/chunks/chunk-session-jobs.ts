import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import { enqueueJob, type JobHandler } from '../jobs/queue.ts';
import { chunkLimits } from './chunk-limits.ts';

export const CHUNK_SESSION_SWEEP_JOB = 'chunks.sweep';

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
    if (session.storageTarget === ctx.storage.target) await ctx.storage.abortMultipart(session.fileKey, session.storageUploadId);
    await ctx.db.deleteFrom('chunkSessions').where('id', '=', sessionId).where('state', '!=', 'completed').execute();
  };
}
