import type { AppContext } from '../context.ts';
import type { JobHandler } from '../jobs/queue.ts';
import { deleteFileRecord } from './delete-file.ts';
import { scheduleExpiry } from './expiry.ts';
import { ownerLockedFirst } from '../db/locks.ts';

// Kept apart from expiry.ts (scheduling): deleting a file cancels its expiry, and expiring one deletes it.

/**
 * Applies a file's expiration action (DELETE or SET_PRIVATE) at the expiration time (spec, File).
 * Idempotent: it re-reads the file and acts only when the expiry it finds has really passed, so a
 * late or repeated run changes nothing.
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
        .$call(ownerLockedFirst(ctx.dialect, file.id))
        .execute();
      return;
    }
    // Only if it still expires then: a change made since it was read above (a new expiry, or none)
    // wins, as the SET_PRIVATE update's condition has it. Without this, a file whose expiry its owner
    // had just moved, and been answered 200 for, was deleted.
    await deleteFileRecord(ctx, file.userId, file.id, undefined, (current) => current.expiresAt === file.expiresAt);
  };
}
