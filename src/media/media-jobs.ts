import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import type { MediaStatus } from '../db/schema.ts';
import { randomLowerAlnum } from '../db/ids.ts';
import { addJobIfAbsent, cancelJob, type ClaimedJob, type JobHandler } from '../jobs/queue.ts';
import { readSettings } from '../settings/instance-settings.ts';
import { StorageNotFoundError } from '../storage/storage.ts';
import { foldForSearch } from '../shared/search-text.ts';
import type { RequestLoad } from '../shared/request-load.ts';
import { ORPHAN_GRACE_MS, scheduleStorageDelete, takeBackStorageDeletes } from '../jobs/storage-cleanup.ts';
import { newThumbnailKey, recognisesText, thumbnailSourceOf, type ThumbnailSource } from './media-kinds.ts';
import { MediaWorkerError, type OcrOutcome, type ThumbnailOutcome } from './media-worker.ts';
import { ownerLockedFirst } from '../db/locks.ts';

/**
 * The media jobs of contract §10, on the durable job queue: a file's thumbnail and its recognised
 * text are made by jobs committed with the file (src/uploads/commit-file.ts), so they survive a
 * restart, run once across every process sharing the database, and never delay the upload's answer.
 *
 * Each job is idempotent: it acts only while the file's status is still `pending`, and writes its
 * result with a condition on that status, so a repeated run, a deleted file or a setting turned off
 * meanwhile changes nothing. Thumbnail bytes are stored before their record names them, under a
 * crash safety net, as upload bytes are (src/jobs/storage-cleanup.ts).
 */
export const THUMBNAIL_JOB = 'media.thumbnail';
export const OCR_JOB = 'media.ocr';
export const MEDIA_BACKFILL_JOB = 'media.backfill';

const thumbnailJobKey = (fileId: string) => `${THUMBNAIL_JOB}:${fileId}`;
const ocrJobKey = (fileId: string) => `${OCR_JOB}:${fileId}`;

/** What makes thumbnails and reads text: the low-priority worker process (src/media/media-worker.ts). */
export interface MediaProcessor {
  thumbnail(input: { path: string; kind: ThumbnailSource; outPath: string }): Promise<ThumbnailOutcome>;
  recognize(input: { path: string }): Promise<OcrOutcome>;
}

/** The tools this machine has for videos and PDFs. */
export interface MediaTools {
  ffmpeg: boolean;
  pdftoppm: boolean;
}

// A job already waiting for the file is the same work: it is left as it is.
export const enqueueThumbnail = (executor: Executor, fileId: string) => addJobIfAbsent(executor, { type: THUMBNAIL_JOB, payload: { fileId }, dedupeKey: thumbnailJobKey(fileId) });
export const enqueueOcr = (executor: Executor, fileId: string) => addJobIfAbsent(executor, { type: OCR_JOB, payload: { fileId }, dedupeKey: ocrJobKey(fileId) });

/**
 * Enqueues the work a file's `pending` statuses call for, inside the transaction that sets them:
 * ONE job, as a commit pays for every row it writes (a job is a row in four indexes; two per upload
 * cost 10 % of small-file upload throughput, docs/decisions.md "Thumbnails and text recognition").
 * The thumbnail job comes first; it adds the text job as soon as it starts, before its own work, so
 * a thumbnail never waits behind a recognition and a crash cannot lose the text job. Without a
 * thumbnail to make, the text job is the one.
 */
export async function enqueueMediaWork(executor: Executor, file: { id: string; thumbnailStatus: MediaStatus; ocrStatus: MediaStatus }): Promise<void> {
  if (file.thumbnailStatus === 'pending') await enqueueThumbnail(executor, file.id);
  else if (file.ocrStatus === 'pending') await enqueueOcr(executor, file.id);
}

/** Drops a deleted file's media jobs (they would find nothing to do anyway). */
export async function cancelMediaWork(executor: Executor, fileId: string): Promise<void> {
  await cancelJob(executor, thumbnailJobKey(fileId));
  await cancelJob(executor, ocrJobKey(fileId));
}

/**
 * The gate of a media job type (src/jobs/queue.ts, typeGate): open while the process is not busy with
 * requests; while it is, open once every `trickleMs`, so that uploads keep the CPU and the database
 * to themselves (contract §10: media work never delays an upload) and the work still moves, slowly.
 */
export function giveWayToRequests(load: RequestLoad, trickleMs = 1000): () => boolean {
  let openedAt = 0;
  return () => {
    const now = Date.now();
    if (!load.busy(now)) return true;
    if (now - openedAt < trickleMs) return false;
    openedAt = now;
    return true;
  };
}

/** A crash or deadline of the worker process is retried this many times before the file's work is `failed`. */
const WORKER_ATTEMPTS = 3;

/**
 * Runs `use` with a path to the file's bytes on this machine: the stored object itself on local
 * disk, or a temporary copy in DATA_DIR/tmp (removed afterwards, or by the temporary-file sweep
 * after a crash). Null when a copy would be larger than MEDIA_MAX_COPY_BYTES.
 */
async function withLocalFile<T>(ctx: AppContext, file: { storageKey: string; size: number }, use: (path: string) => Promise<T>): Promise<T | null> {
  if (ctx.storage.localPath) return use(await ctx.storage.localPath(file.storageKey));
  if (file.size > ctx.config.mediaMaxCopyBytes) return null;
  const copy = join(ctx.config.dataDir, 'tmp', `media-${randomLowerAlnum(16)}`);
  try {
    const object = await ctx.storage.get(file.storageKey);
    await pipeline(object.stream, createWriteStream(copy, { flags: 'wx' }));
    return await use(copy);
  } finally {
    await rm(copy, { force: true });
  }
}

type Column = 'thumbnailStatus' | 'ocrStatus';

/** Moves a file's work out of `pending` (only if it still is). */
async function settle(ctx: AppContext, fileId: string, column: Column, status: MediaStatus): Promise<void> {
  await ctx.db.updateTable('files').set({ [column]: status }).where('id', '=', fileId).where(column, '=', 'pending').$call(ownerLockedFirst(ctx.dialect, fileId)).execute();
}

/**
 * Runs a worker request on the file's bytes. What it answers for the file is its outcome; otherwise
 * the status the file settles at: `failed` when its bytes are gone, or when the worker crashed or
 * missed its deadline on it WORKER_ATTEMPTS times (a file that crashes the worker every time must not
 * do so forever; earlier attempts are retried by the queue's back-off), `unsupported` when a copy
 * would be over MEDIA_MAX_COPY_BYTES.
 */
async function onFileBytes<T>(ctx: AppContext, job: ClaimedJob, file: { storageKey: string; size: number }, request: (path: string) => Promise<T>): Promise<T | { settle: MediaStatus }> {
  try {
    return (await withLocalFile(ctx, file, request)) ?? { settle: 'unsupported' };
  } catch (error) {
    if (error instanceof StorageNotFoundError) return { settle: 'failed' };
    if (error instanceof MediaWorkerError && job.attempt >= WORKER_ATTEMPTS) return { settle: 'failed' };
    throw error;
  }
}

export function thumbnailHandler(ctx: AppContext, processor: MediaProcessor, tools: MediaTools): JobHandler {
  return async (job) => {
    const { fileId } = job.payload as { fileId: string };
    const file = await ctx.db
      .selectFrom('files')
      .select(['id', 'storageKey', 'size', 'mimeType', 'thumbnailStatus', 'thumbnailKey', 'ocrStatus'])
      .where('id', '=', fileId)
      .executeTakeFirst();
    if (!file) return;
    // The file's text job follows its thumbnail job (enqueueMediaWork), added before any work here.
    if (file.ocrStatus === 'pending') {
      await enqueueOcr(ctx.db, fileId);
      ctx.jobs.wake();
    }
    if (file.thumbnailStatus !== 'pending') return;
    if (!(await readSettings(ctx.db)).thumbnailsEnabled) return settle(ctx, fileId, 'thumbnailStatus', 'disabled');
    const source = thumbnailSourceOf(file.mimeType);
    if (source === null || (source === 'video' && !tools.ffmpeg) || (source === 'pdf' && !tools.pdftoppm)) return settle(ctx, fileId, 'thumbnailStatus', 'unsupported');

    const outPath = join(ctx.config.dataDir, 'tmp', `thumbnail-${randomLowerAlnum(16)}.webp`);
    try {
      const outcome = await onFileBytes(ctx, job, file, (path) => processor.thumbnail({ path, kind: source, outPath }));
      if ('settle' in outcome) return settle(ctx, fileId, 'thumbnailStatus', outcome.settle);
      if (!outcome.ok) {
        ctx.log.info({ fileId, reason: outcome.message }, 'no thumbnail for this file');
        return settle(ctx, fileId, 'thumbnailStatus', outcome.reason);
      }
      const key = newThumbnailKey(file.storageKey);
      await scheduleStorageDelete(ctx.db, key, Date.now() + ORPHAN_GRACE_MS);
      await ctx.storage.put(key, createReadStream(outPath), { contentType: 'image/webp' });
      // The record and the net's cancellation commit together: cancelled afterwards, the net could go
      // after a deletion of the file had scheduled the thumbnail's removal under the same job key.
      const recorded = await ctx.db.transaction().execute(async (trx) => {
        const updated = await trx
          .updateTable('files')
          .set({ thumbnailStatus: 'done', thumbnailKey: key, thumbnailWidth: outcome.width, thumbnailHeight: outcome.height, mediaWidth: outcome.sourceWidth, mediaHeight: outcome.sourceHeight })
          .where('id', '=', fileId)
          .where('thumbnailStatus', '=', 'pending')
          .$call(ownerLockedFirst(ctx.dialect, fileId))
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) === 0) return false;
        // A net that came due while this work stood still may be removing the thumbnail or has
        // removed it: the record rolls back, and the job makes the thumbnail again later
        // (docs/decisions.md, "A net that ran before its commit").
        if (!(await takeBackStorageDeletes(trx, [key]))) throw new Error('the thumbnail waited too long for its record and its clean-up ran; making it again');
        return true;
      });
      if (!recorded) {
        // Deleted (or turned off) while the thumbnail was made: its bytes go; the net stays as a backstop.
        await ctx.storage.delete(key);
        return;
      }
      if (file.thumbnailKey !== null) await removeThumbnail(ctx, file.thumbnailKey);
    } finally {
      await rm(outPath, { force: true });
    }
  };
}

/** Removes a thumbnail nothing names any more; a durable job retries if storage is unavailable. */
async function removeThumbnail(ctx: AppContext, key: string): Promise<void> {
  try {
    await ctx.storage.delete(key);
  } catch (error) {
    ctx.log.warn({ err: error, storageKey: key }, 'a thumbnail is left to the cleanup job');
    await scheduleStorageDelete(ctx.db, key, Date.now() + 60_000);
  }
}

/** Recognised text kept per file, at most (a page of dense text is a few thousand characters). */
const MAX_TEXT = 100_000;

export function ocrHandler(ctx: AppContext, processor: MediaProcessor): JobHandler {
  return async (job) => {
    const { fileId } = job.payload as { fileId: string };
    const file = await ctx.db.selectFrom('files').select(['id', 'storageKey', 'size', 'mimeType', 'ocrStatus']).where('id', '=', fileId).executeTakeFirst();
    if (!file || file.ocrStatus !== 'pending') return;
    if (!(await readSettings(ctx.db)).ocrEnabled) return settle(ctx, fileId, 'ocrStatus', 'disabled');
    if (!recognisesText(file.mimeType)) return settle(ctx, fileId, 'ocrStatus', 'unsupported');

    const outcome = await onFileBytes(ctx, job, file, (path) => processor.recognize({ path }));
    if ('settle' in outcome) return settle(ctx, fileId, 'ocrStatus', outcome.settle);
    if (!outcome.ok) {
      ctx.log.info({ fileId, reason: outcome.message }, 'no text recognised for this file');
      return settle(ctx, fileId, 'ocrStatus', 'failed');
    }
    const text = outcome.text.slice(0, MAX_TEXT);
    // The search column is written with the text, as every writer of a searched column does (src/shared/search-text.ts).
    await ctx.db
      .updateTable('files')
      .set({ ocrStatus: 'done', ocrText: text, searchOcr: foldForSearch(text) })
      .where('id', '=', fileId)
      .where('ocrStatus', '=', 'pending')
      .$call(ownerLockedFirst(ctx.dialect, fileId))
      .execute();
  };
}
