import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import { enqueueJob, type JobHandler } from '../jobs/queue.ts';

export const AUDIT_PRUNE_JOB = 'audit.prune';
const PRUNE_KEY = 'audit-prune';
const DAY_MS = 86_400_000;
/** Rows deleted per statement, so one prune never holds the database for long. */
const BATCH = 5_000;

/**
 * Schedules the pruning of audit records older than the retention (a no-op when records are kept
 * forever). One job for the whole instance (a dedupe key), so several processes share it.
 */
export async function scheduleAuditPrune(executor: Executor, retentionDays: number, runAt = Date.now()): Promise<void> {
  if (retentionDays === 0) return;
  await enqueueJob(executor, { type: AUDIT_PRUNE_JOB, payload: {}, runAt, dedupeKey: PRUNE_KEY });
}

/** Deletes a batch of expired records; runs again at once while there are more, else in a day. */
export function auditPruneHandler(ctx: AppContext): JobHandler {
  return async () => {
    const retentionDays = ctx.config.auditRetentionDays;
    if (retentionDays === 0) return;
    const cutoff = Date.now() - retentionDays * DAY_MS;
    const expired = ctx.db.selectFrom('auditEvents').select('id').where('createdAt', '<', cutoff).limit(BATCH);
    const result = await ctx.db.deleteFrom('auditEvents').where('id', 'in', expired).executeTakeFirst();
    // The administration log is kept as long as the audit records (docs/decisions.md).
    const expiredActions = ctx.db.selectFrom('adminActions').select('id').where('createdAt', '<', cutoff).limit(BATCH);
    const actions = await ctx.db.deleteFrom('adminActions').where('id', 'in', expiredActions).executeTakeFirst();
    const more = Number(result.numDeletedRows) === BATCH || Number(actions.numDeletedRows) === BATCH;
    await scheduleAuditPrune(ctx.db, retentionDays, more ? Date.now() : Date.now() + DAY_MS);
    if (more) ctx.jobs.wake();
  };
}
