import { join } from 'node:path';
import type { AppContext } from '../context.ts';
import type { Executor } from '../db/account-scope.ts';
import { cancelJob, cancelJobs, cancelUnclaimedJobs, enqueueJob, enqueueJobs, errorText, postponeUnclaimedJobs, retryDelayMs, retryJob, type ClaimedJob, type JobHandler, type JobOutcome } from './queue.ts';
import { sweepTemporaryDir } from '../storage/tmp-sweep.ts';

export const STORAGE_CLEANUP_JOB = 'storage.cleanup';
const keyFor = (storageKey: string) => `storage-cleanup:${storageKey}`;
/** A clean-up job's payload: the key, and the multipart upload a write began at the provider, if any. */
const cleanupPayload = (storageKey: string, multipartUploadId?: string) => (multipartUploadId === undefined ? { storageKey } : { storageKey, multipartUploadId });

/**
 * How long bytes being written may wait for their record before the crash safety net removes them.
 * Short, so a dead process's debris goes within minutes; a live write keeps pushing it back (see
 * CleanupNet), so no upload, however long, loses its bytes to it.
 */
export const ORPHAN_GRACE_MS = 5 * 60 * 1000;
/** A live write pushes its safety net back at most this often (one job update a minute). */
export const ORPHAN_PUSH_BACK_MS = 60 * 1000;

/**
 * Deletes the bytes at `storageKey` at `runAt` unless a file record still points at them. Uploads
 * schedule this before streaming and cancel it when they commit, so bytes orphaned by a crash
 * between storing and committing are removed; deletions schedule it as a safety net.
 */
export async function scheduleStorageDelete(executor: Executor, storageKey: string, runAt: number): Promise<void> {
  await enqueueJob(executor, { type: STORAGE_CLEANUP_JOB, payload: cleanupPayload(storageKey), runAt, dedupeKey: keyFor(storageKey) });
}

/** scheduleStorageDelete for several keys, in one statement. */
export async function scheduleStorageDeletes(executor: Executor, storageKeys: readonly string[], runAt: number): Promise<void> {
  await enqueueJobs(
    executor,
    storageKeys.map((storageKey) => ({ type: STORAGE_CLEANUP_JOB, payload: { storageKey }, runAt, dedupeKey: keyFor(storageKey) })),
  );
}

export async function cancelStorageDelete(executor: Executor, storageKey: string): Promise<void> {
  await cancelJob(executor, keyFor(storageKey));
}

/**
 * Cancels the nets of bytes that get their records now, in the transaction that writes the records:
 * true when every one was there and no process had claimed it. A net a process has claimed may be
 * removing the bytes (it found no record, and removes them next), and one that is gone has removed
 * them: recorded all the same, the file had no bytes. That happens only to a write that stood still
 * for ORPHAN_GRACE_MS between its last push-back and its commit; the caller refuses the commit (the
 * transaction rolls back these cancellations with it) and its bytes go. A claim and this deletion
 * write the same row, so one of the two comes second and sees the other (docs/decisions.md, "A net
 * that ran before its commit").
 */
export async function takeBackStorageDeletes(executor: Executor, storageKeys: readonly string[]): Promise<boolean> {
  return (await cancelUnclaimedJobs(executor, storageKeys.map(keyFor))) === storageKeys.length;
}

/**
 * Moves nets of live writes to `runAt`, each only while no process has claimed it, and never lays
 * one again. Replacing the job, as enqueueing does, cleared the claim of a net being run: the
 * commit then took that net back as if it were idle while it removed the bytes, and a net already
 * run came back for bytes that were gone (docs/decisions.md, "A net that ran before its commit").
 */
export async function pushBackStorageDeletes(executor: Executor, storageKeys: readonly string[], runAt: number): Promise<void> {
  await postponeUnclaimedJobs(executor, storageKeys.map(keyFor), runAt);
}

export async function cancelStorageDeletes(executor: Executor, storageKeys: readonly string[]): Promise<void> {
  await cancelJobs(executor, storageKeys.map(keyFor));
}

/**
 * The crash safety net of one write in progress: scheduled ORPHAN_GRACE_MS ahead before the first
 * byte is stored, and moved ORPHAN_GRACE_MS ahead again (at most once a minute) while the write
 * shows signs of life. Only a write whose process died stops pushing it back.
 */
export class CleanupNet {
  readonly #ctx: AppContext;
  readonly #storageKey: string;
  /** The multipart upload the write began at the provider, once it has one (S3). */
  #uploadId: string | undefined;
  #pushedAt = 0;
  #pending: Promise<void> = Promise.resolve();

  constructor(ctx: AppContext, storageKey: string) {
    this.#ctx = ctx;
    this.#storageKey = storageKey;
  }

  /** Schedules the net; awaited before any byte is written. */
  async arm(): Promise<void> {
    this.#pushedAt = Date.now();
    await scheduleStorageDelete(this.#ctx.db, this.#storageKey, this.#pushedAt + ORPHAN_GRACE_MS);
  }

  /** The nets of several writes about to start (an import's batch), scheduled in one statement. */
  static async armAll(ctx: AppContext, storageKeys: readonly string[]): Promise<CleanupNet[]> {
    const now = Date.now();
    await scheduleStorageDeletes(ctx.db, storageKeys, now + ORPHAN_GRACE_MS);
    return storageKeys.map((storageKey) => {
      const net = new CleanupNet(ctx, storageKey);
      net.#pushedAt = now;
      return net;
    });
  }

  /** Called as the write progresses: cheap, and at most one job update a minute. */
  readonly alive = (): void => {
    const now = Date.now();
    if (now - this.#pushedAt < ORPHAN_PUSH_BACK_MS) return;
    this.#push(now);
  };

  /**
   * Called when the provider has begun a multipart upload for the write: the net then aborts it too,
   * which a dead process's write would otherwise leave in the bucket for ever. Recorded at once.
   */
  readonly multipart = (uploadId: string): void => {
    this.#uploadId = uploadId;
    this.#push(Date.now());
  };

  #push(now: number): void {
    this.#pushedAt = now;
    this.#pending = this.#pending
      .then(() => postponeUnclaimedJobs(this.#ctx.db, [keyFor(this.#storageKey)], now + ORPHAN_GRACE_MS, cleanupPayload(this.#storageKey, this.#uploadId)))
      .catch((error: unknown) => this.#ctx.log.warn({ err: error, storageKey: this.#storageKey }, 'could not push back a storage clean-up'));
  }

  /** Waits for a push-back in flight, so none lands after the caller cancels the net. */
  async settled(): Promise<void> {
    await this.#pending;
  }
}

export function storageCleanupHandler(ctx: AppContext): JobHandler {
  return async (job) => {
    const { storageKey, multipartUploadId } = job.payload as { storageKey: string; multipartUploadId?: string };
    // A key is a file's bytes or its thumbnail (src/media/media-kinds.ts); each lookup uses its index.
    const referenced =
      (await ctx.db.selectFrom('files').select('id').where('storageKey', '=', storageKey).executeTakeFirst()) ??
      (await ctx.db.selectFrom('files').select('id').where('thumbnailKey', '=', storageKey).executeTakeFirst());
    if (referenced) return;
    return removeOrRetry(ctx, job, { storageKey }, async () => {
      // A write that died part-way through a multipart upload left its parts in the bucket; aborting
      // one that completed or was aborted already does nothing.
      if (multipartUploadId !== undefined) await ctx.storage.abortMultipart(storageKey, multipartUploadId);
      await ctx.storage.delete(storageKey);
    });
  };
}

/**
 * Runs a job's removal of bytes from storage; when the store refuses it, the job is tried again,
 * never given up. Such a job is the only thing that knows those bytes, and nothing sweeps the store
 * for them: dropped after ten failures (the tenth about 85 minutes into an outage), as a failing job is, it
 * left them for good. Tried again at most an hour apart until the store takes the removal.
 */
export async function removeOrRetry(ctx: AppContext, job: ClaimedJob, about: Record<string, unknown>, remove: () => Promise<void>): Promise<JobOutcome | void> {
  try {
    await remove();
  } catch (error) {
    ctx.log.warn({ err: error, ...about, jobType: job.type, attempt: job.attempt }, 'could not remove stored bytes; will try again');
    return retryJob(retryDelayMs(job.attempt), errorText(error));
  }
}

export const TMP_SWEEP_JOB = 'storage.tmpSweep';
const TMP_SWEEP_KEY = 'storage-tmp-sweep';
/** How often DATA_DIR/tmp is swept. */
export const TMP_SWEEP_INTERVAL_MS = 15 * 60 * 1000;
/**
 * Temporary items untouched this long are debris of a dead write. Live writers touch theirs at least
 * every minute (and the body-idle timeout ends a silent upload in seconds): an hour is a wide margin.
 */
export const TMP_SAFE_AGE_MS = 60 * 60 * 1000;

/**
 * Sweeps DATA_DIR/tmp now (every start calls this), then every TMP_SWEEP_INTERVAL_MS. One job per
 * DATA_DIR: processes sharing one (as local storage requires) share the job; with S3, a process may
 * have a DATA_DIR of its own, and so a job of its own.
 */
export async function scheduleTmpSweep(executor: Executor, dataDir: string, runAt = Date.now()): Promise<void> {
  await enqueueJob(executor, { type: TMP_SWEEP_JOB, payload: { dataDir }, runAt, dedupeKey: `${TMP_SWEEP_KEY}:${dataDir}` });
}

export function tmpSweepHandler(ctx: AppContext): JobHandler {
  return async (job) => {
    const { dataDir } = job.payload as { dataDir: string };
    // Another process's directory: left for that process, which moves the job to its own start
    // anyway. Not retried at once: a DATA_DIR whose process is gone for good would otherwise keep
    // every other process claiming its job every second.
    if (dataDir !== ctx.config.dataDir) return retryJob(TMP_SWEEP_INTERVAL_MS, 'the sweep of another DATA_DIR');
    // A chunked upload's directory is in use while a session that has not completed names it.
    const inUse = async (uploadId: string) =>
      Boolean(await ctx.db.selectFrom('chunkSessions').select('id').where('storageUploadId', '=', uploadId).where('state', '!=', 'completed').executeTakeFirst());
    const removed = await sweepTemporaryDir(join(dataDir, 'tmp'), TMP_SAFE_AGE_MS, inUse);
    if (removed.items > 0) ctx.log.info(removed, 'removed leftovers of interrupted writes from DATA_DIR/tmp');
    await scheduleTmpSweep(ctx.db, dataDir, Date.now() + TMP_SWEEP_INTERVAL_MS);
  };
}
