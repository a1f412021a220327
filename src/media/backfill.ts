import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import type { MediaStatus } from '../db/schema.ts';
import { enqueueJob, retryJob, type JobHandler } from '../jobs/queue.ts';
import { readSettings, type InstanceSettings } from '../settings/instance-settings.ts';
import type { MediaProgress } from '../api/admin.ts';
import { enqueueOcr, enqueueThumbnail, MEDIA_BACKFILL_JOB, OCR_JOB, THUMBNAIL_JOB } from './media-jobs.ts';
import { recognisesText, thumbnailSourceOf } from './media-kinds.ts';

/**
 * The backfill (contract §10): files that got no thumbnail or text because the setting was off
 * (`disabled`, which is also where files older than the feature start) get theirs once the
 * setting is on, through the same jobs as new files.
 *
 * Paced: a run turns at most BATCH files of each kind to `pending`, and only while fewer than
 * BACKLOG jobs of that kind wait; then it runs again after PACE_MS. A library of a million files
 * thus never floods the job table, and a new upload's jobs wait behind at most BACKLOG others.
 */
const BATCH = 100;
const BACKLOG = 200;
const PACE_MS = 2_000;
const BACKFILL_KEY = MEDIA_BACKFILL_JOB;

const kinds = [
  { column: 'thumbnailStatus', job: THUMBNAIL_JOB, setting: 'thumbnailsEnabled', supported: (mime: string) => thumbnailSourceOf(mime) !== null, enqueue: enqueueThumbnail },
  { column: 'ocrStatus', job: OCR_JOB, setting: 'ocrEnabled', supported: recognisesText, enqueue: enqueueOcr },
] as const;

async function scheduleMediaBackfill(executor: Executor, runAt = Date.now()): Promise<void> {
  await enqueueJob(executor, { type: MEDIA_BACKFILL_JOB, payload: null, runAt, dedupeKey: BACKFILL_KEY });
}

/** Starts the backfill when a setting is on and some file waits for it (every start checks). */
export async function scheduleMediaBackfillIfNeeded(ctx: AppContext): Promise<boolean> {
  const settings = await readSettings(ctx.db);
  for (const kind of kinds) {
    if (!settings[kind.setting]) continue;
    const waiting = await ctx.db.selectFrom('files').select('id').where(kind.column, '=', 'disabled').limit(1).executeTakeFirst();
    if (waiting) {
      await scheduleMediaBackfill(ctx.db);
      ctx.jobs.wake();
      return true;
    }
  }
  return false;
}

/** After a settings change: a media setting turned on starts the backfill. */
export async function afterSettingsChange(ctx: AppContext, before: InstanceSettings, after: InstanceSettings): Promise<void> {
  if ((!before.thumbnailsEnabled && after.thumbnailsEnabled) || (!before.ocrEnabled && after.ocrEnabled)) await scheduleMediaBackfillIfNeeded(ctx);
}

export function mediaBackfillHandler(ctx: AppContext): JobHandler {
  return async () => {
    const settings = await readSettings(ctx.db);
    let more = false;
    for (const kind of kinds) {
      if (!settings[kind.setting]) continue;
      const waitingJobs = await ctx.db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('type', '=', kind.job).executeTakeFirstOrThrow();
      if (Number(waitingJobs.n) >= BACKLOG) {
        more = true;
        continue;
      }
      const files = await ctx.db.selectFrom('files').select(['id', 'mimeType']).where(kind.column, '=', 'disabled').orderBy('id').limit(BATCH).execute();
      if (files.length === BATCH) more = true;
      if (files.length === 0) continue;
      await ctx.db.transaction().execute(async (trx) => {
        for (const file of files) {
          const status: MediaStatus = kind.supported(file.mimeType) ? 'pending' : 'unsupported';
          const changed = await trx.updateTable('files').set({ [kind.column]: status }).where('id', '=', file.id).where(kind.column, '=', 'disabled').executeTakeFirst();
          if (Number(changed.numUpdatedRows) === 0 || status !== 'pending') continue;
          await kind.enqueue(trx, file.id);
        }
      });
      ctx.jobs.wake();
    }
    if (more) return retryJob(PACE_MS, 'paced: more files wait');
  };
}

/**
 * Files by status, per kind of media work, and whether a backfill is under way (Administration →
 * Settings, asked every few seconds while one is). The counts read every file of the instance
 * (about 25 ms a kind at a million files on SQLite), so they go through the database's readers
 * (docs/decisions.md, "Reads that may scan").
 */
export async function mediaProgress(ctx: AppContext): Promise<MediaProgress> {
  const count = async (column: 'thumbnailStatus' | 'ocrStatus') => {
    const rows = await ctx.reader.selectFrom('files').select([column, (eb) => eb.fn.countAll<number>().as('n')]).groupBy(column).execute();
    const counts: Record<MediaStatus, number> = { pending: 0, done: 0, failed: 0, unsupported: 0, disabled: 0 };
    for (const row of rows) counts[row[column] as MediaStatus] = Number(row.n);
    return counts;
  };
  const backfill = await ctx.db.selectFrom('jobs').select('id').where('dedupeKey', '=', BACKFILL_KEY).executeTakeFirst();
  return { thumbnails: await count('thumbnailStatus'), ocr: await count('ocrStatus'), backfilling: backfill !== undefined };
}
