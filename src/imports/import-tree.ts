import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AppContext } from '../context.ts';
import type { Principal } from '../auth/principal.ts';
import { hasPermission, type Permission } from '../auth/permissions.ts';
import { loadAccess } from '../auth/roles.ts';
import { normalizeEmail } from '../accounts/users.ts';
import { forAccount } from '../db/account-scope.ts';
import type { Db } from '../db/database.ts';
import { isUniqueViolation } from '../db/unique-violation.ts';
import { AppError } from '../errors.ts';
import { databaseName } from '../config.ts';
import { findOwnedFolder } from '../organisation/folders.ts';
import { findOwnedProfile } from '../organisation/profiles.ts';
import { applyRequest, type ResolvedOptions } from '../shared/upload-options.ts';
import { uploadAllowance, type Allowance } from '../uploads/allowance.ts';
import { commitStored, commitStoredBatch, discardStored, releaseSlots, reserveSlots, type BatchItem, type StoreSlot, type StoredBytes } from '../uploads/store-upload.ts';
import { ORPHAN_GRACE_MS, ORPHAN_PUSH_BACK_MS, pushBackStorageDeletes } from '../jobs/storage-cleanup.ts';
import { mapConcurrently } from '../shared/concurrency.ts';
import { readBufferBytes, StoreThread, type StoreResult } from './store-thread.ts';
import { planUpload, resolveOptions, type UploadPlan } from '../uploads/upload-plan.ts';
import { checkDirectory, measureTree, walkTree, type TreeFile } from './walk-tree.ts';
import { sizeInWords } from '../shared/sizes.ts';

/**
 * Importing a directory tree into an account (docs/decisions.md, "Importing a library";
 * `npm run cli -- import`). Every regular file becomes a file of the account under the rules of
 * POST /api/files (spec, POST /api/files rules 1–4; contract §4): the account's upload defaults and
 * default profile (or the profile named), the folder, the permissions an upload and its options
 * need, the size limit and the quota, the naming rules and type detection, and a commit that carries
 * the media jobs and the file.ready event (contract §5, §10). Files are stored through the same code
 * as an upload (src/uploads/store-upload.ts), streamed, never held in memory.
 *
 * A file counts as already imported when the account has a record of its relative path with the
 * SHA-256 of its bytes (table `importedFiles`, migration 0017-imports); that record is written in
 * the transaction that commits the file and goes with the file.
 */

export interface ImportRequest {
  directory: string;
  email: string;
  /** An owned folder ID, or `none`; as X-Upload-Folder. */
  folderId?: string | undefined;
  /** An owned profile ID, or `none` (no profile, not even the default one); as X-Upload-Profile. */
  profileId?: string | undefined;
}

/** An import that passed every check: what remains is the files. */
export interface PreparedImport {
  email: string;
  principal: Principal;
  plan: UploadPlan;
  directory: string;
  /** The tree's regular files and their bytes when it was measured: the totals progress is shown against. */
  measured: { files: number; bytes: number };
  /** The instance's data directory (real path): never imported, also when the tree holds it. */
  dataDir: string;
}

/** Live counters, updated as files finish: the caller reads them to show progress. */
export interface ImportProgress {
  totalFiles: number;
  totalBytes: number;
  /** Files dealt with so far (imported, skipped or failed), and their bytes as walked. */
  doneFiles: number;
  doneBytes: number;
  imported: number;
  importedBytes: number;
  /** Already imported by an earlier run. */
  skipped: number;
  failed: number;
}

export interface ImportOutcome {
  progress: ImportProgress;
  failures: Array<{ path: string; reason: string }>;
  /** Symbolic links and special files, not imported. */
  notRegular: string[];
  /** Where the tree holds the instance's data directory, left out; null when it does not. */
  dataDir: string | null;
  /** Why the import stopped before the last file (the quota), or null. */
  stopped: string | null;
  /** The caller asked the import to stop (the signal); files not begun were left for a later run. */
  interrupted: boolean;
}

/**
 * Files the storing thread reads and stores at once (and known files hashed again at once): each
 * waits on the disk in turn (its read, the fsync that makes its bytes durable), and a few in flight
 * keep it busy; more only adds memory (docs/decisions.md, "Importing a library").
 */
export const IMPORT_CONCURRENCY = 8;

/** How many relative paths one look-up of earlier imports asks for. */
const LOOKUP_BATCH = 500;

/**
 * The longest relative path an import remembers. The record's key holds it, and PostgreSQL refuses
 * index entries beyond about 2.7 KB; one limit keeps both databases alike. Linux paths reach 4 KB.
 */
const MAX_PATH_BYTES = 2048;

const reasons = {
  pathTooLong: `its path in the tree is longer than ${MAX_PATH_BYTES} bytes, more than an import can remember`,
  tooLarge: (limit: number) => `larger than the maximum upload size of ${sizeInWords(limit)}`,
  unreadable: (code: string) => `it cannot be read (${code})`,
};

/**
 * The checks an import passes before any byte is read, each with its own message: the account, the
 * permission to upload (spec, Endpoints: POST /api/files needs files.upload), the profile and folder
 * (owned, as the selectors of POST /api/files), the permissions the resolved options need, and the
 * directory. The account's permissions are read once, now: the import acts for the account as a
 * browser session of it would (no token scope, no profile binding). Then the tree is measured;
 * `onWalk` is called when every check has passed and the walk begins.
 */
export async function prepareImport(ctx: AppContext, request: ImportRequest, onWalk?: () => void): Promise<PreparedImport> {
  const { email } = request;
  const principal = await principalFor(ctx.db, email, databaseName(ctx.config));
  const userId = principal.user.id;
  if (!hasPermission(principal.permissions, 'files.upload')) throw new AppError('forbidden', `${email} may not upload files: no role of theirs grants files.upload`);
  if (request.profileId !== undefined && request.profileId !== 'none' && !(await findOwnedProfile(ctx.db, userId, request.profileId))) {
    throw new AppError('not_found', `No upload profile ${request.profileId} in the account of ${email}`);
  }
  if (request.folderId !== undefined && request.folderId !== 'none' && !(await findOwnedFolder(ctx.db, userId, request.folderId))) {
    throw new AppError('not_found', `No folder ${request.folderId} in the account of ${email}`);
  }
  const plan = await planUpload(ctx.db, principal, { profile: request.profileId, folder: request.folderId });
  try {
    await resolveOptions(ctx.db, principal, plan, {});
  } catch (error) {
    if (error instanceof AppError && error.kind === 'forbidden') throw new AppError('forbidden', `${email} may not upload with these options: ${explainRefusal(principal, plan)}`);
    throw error;
  }
  await checkDirectory(request.directory);
  const dataDir = await ownData(ctx.config.dataDir, request.directory);
  onWalk?.();
  // Walked once to count, for the progress; the import walks it again as it goes (walkTree).
  const measured = await measureTree(request.directory, { exclude: dataDir });
  return { email, principal, plan, directory: request.directory, measured, dataDir };
}

/**
 * The real path of the instance's data directory, after refusing a tree inside it. Its files are the
 * instance's own: the database, stored bytes, temporary files. A tree that holds it (a home
 * directory, a server's whole disk) is imported without it; otherwise each run would import the
 * database being written and the bytes the run before stored (docs/decisions.md, "Importing a
 * library").
 */
async function ownData(configured: string, directory: string): Promise<string> {
  const [dataDir, root] = await Promise.all([realpath(configured), realpath(directory)]);
  const inside = relative(dataDir, root);
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside))) {
    throw new AppError('invalid', `${directory} is inside this instance's data directory (DATA_DIR ${configured}), whose files are the instance's own: nothing there can be imported`);
  }
  return dataDir;
}

async function principalFor(db: Db, email: string, database: string): Promise<Principal> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'urlId', 'emailVerified', 'quotaBytes', 'createdAt', 'listingVersion', 'suspendedAt'])
    .where('email', '=', normalizeEmail(email))
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `No account with the email ${email} in ${database}`);
  // Refused once, here: each file's commit would refuse it too (src/uploads/commit-file.ts), with an
  // upload's words, once per batch (docs/decisions.md, "Suspending an account").
  if (row.suspendedAt !== null) throw new AppError('forbidden', `${email} is suspended: resume the account (Administration → Users) before importing into it`);
  const { listingVersion, suspendedAt: _suspended, ...user } = row;
  const { permissions, roles } = await loadAccess(db, user.id);
  return { via: 'session', user, listingVersion, permissions, roles };
}

/**
 * Which permissions the options of this import need and the account lacks (spec, POST /api/files
 * rules 2 and 3). resolveOptions() enforces them; this only names them for the message, which the
 * API's 403 body may not do (spec, Errors: 403).
 */
function explainRefusal(principal: Principal, plan: UploadPlan): string {
  const options = applyRequest(plan.base, {}, Date.now());
  const needs: Array<[Permission, string]> = [];
  if (plan.folderId !== null) needs.push(['folders.manage', 'a folder needs folders.manage']);
  if (options.tagIds.length > 0) needs.push(['tags.manage', 'tags need tags.manage']);
  if (options.expiresAt !== null) {
    needs.push(options.expiryAction === 'DELETE' ? ['files.delete', 'an expiration that deletes needs files.delete'] : ['files.share', 'an expiration that makes files private needs files.share']);
  }
  const missing = needs.filter(([permission]) => !hasPermission(principal.permissions, permission)).map(([, why]) => why);
  return missing.length > 0 ? missing.join('; ') : 'a permission they need is missing';
}

export function newImportProgress(prepared: PreparedImport): ImportProgress {
  const { measured } = prepared;
  return { totalFiles: measured.files, totalBytes: measured.bytes, doneFiles: 0, doneBytes: 0, imported: 0, importedBytes: 0, skipped: 0, failed: 0 };
}

/** Raised inside a commit whose record an earlier or concurrent run already wrote: the file is rolled back. */
class AlreadyImported extends Error {}

/** A file of the tree whose bytes are stored, waiting for its commit. */
interface StoredFile {
  file: TreeFile;
  stored: StoredBytes;
  /** Quota held for it while in flight (its size as walked). */
  reserved: number;
}

/**
 * Imports the files of a prepared import in the tree's order, IMPORT_BATCH_FILES at a time: each
 * batch's bytes are stored (IMPORT_CONCURRENCY files at once), their names made durable together,
 * and the batch committed in one transaction. A file too large or unreadable is a failure and the
 * import goes on; a file over the quota stops it (files before it stay; a later run continues from
 * there). `signal` stops it between batches.
 */
export async function runImport(
  ctx: AppContext,
  prepared: PreparedImport,
  progress: ImportProgress,
  options: { signal?: AbortSignal; concurrency?: number; /** How often the nets of files in flight are renewed (tests shorten it). */ renewNetsMs?: number } = {},
): Promise<ImportOutcome> {
  const { principal, plan, directory, email } = prepared;
  const userId = principal.user.id;
  const concurrency = Math.max(1, options.concurrency ?? IMPORT_CONCURRENCY);
  const allowance: Allowance = await uploadAllowance(ctx.db, principal);
  // The quota the files in flight may still use: a file that does not fit stops the import before
  // its bytes are stored. The commit checks the quota again (other uploads may use it meanwhile).
  let quotaLeft = allowance.quotaRemaining;
  const outcome: ImportOutcome = { progress, failures: [], notRegular: [], dataDir: null, stopped: null, interrupted: false };
  const tree = new TreeChunks(
    ctx.db,
    userId,
    walkTree(
      directory,
      {
        notRegular: (path) => outcome.notRegular.push(path),
        unreadable: (path, reason) => {
          outcome.failures.push({ path, reason });
          progress.failed += 1;
        },
        excluded: (path) => (outcome.dataDir = path),
      },
      { exclude: prepared.dataDir },
    ),
  );

  const stop = (file: TreeFile, detail: string) => {
    outcome.stopped ??= `The storage quota of ${email} is reached at ${file.relativePath} (${detail}): the import stopped. The files imported so far stay; run the import again once there is room, and it continues from there.`;
  };
  const done = (file: TreeFile, result: 'imported' | 'skipped' | 'failed') => {
    progress[result] += 1;
    progress.doneFiles += 1;
    progress.doneBytes += file.size;
  };
  const fail = (file: TreeFile, error: unknown): 'failed' => {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    // The file's own trouble (gone, not readable); anything else (the database, storage) is the import's.
    if (typeof code !== 'string' || !fileErrors.has(code)) throw error;
    outcome.failures.push({ path: file.relativePath, reason: reasons.unreadable(code) });
    return 'failed';
  };

  /** 'store' when the file is to be stored; else how it was dealt with here. */
  const check = async (file: TreeFile, known: ReadonlySet<string> | undefined): Promise<'store' | 'skipped' | 'failed'> => {
    if (Buffer.byteLength(file.relativePath) > MAX_PATH_BYTES) {
      outcome.failures.push({ path: file.relativePath, reason: reasons.pathTooLong });
      return 'failed';
    }
    try {
      // Known paths are read once more, to compare their bytes; a path never imported is not.
      if (known && known.has(await sha256Of(file.absolutePath, file.size))) return 'skipped';
    } catch (error) {
      return fail(file, error);
    }
    if (file.size > allowance.sizeLimit) {
      outcome.failures.push({ path: file.relativePath, reason: reasons.tooLarge(allowance.sizeLimit) });
      return 'failed';
    }
    return 'store';
  };

  const itemOf = (fileOptions: ResolvedOptions, { file, stored }: StoredFile): BatchItem => ({
    stored,
    file: { name: file.relativePath.slice(file.relativePath.lastIndexOf('/') + 1), declaredType: undefined, folderId: plan.folderId, options: fileOptions },
    trxHook: async (trx, row) => {
      try {
        await forAccount(trx, userId).insertInto('importedFiles', { relativePath: file.relativePath, sha256: stored.sha256, fileId: row.id, importedAt: row.createdAt }).execute();
      } catch (error) {
        // The same bytes at the same path were imported by another run since this one looked.
        if (isUniqueViolation(error)) throw new AlreadyImported();
        throw error;
      }
    },
  });

  /**
   * Commits the batch's stored files: in one transaction, or, should that be refused (the quota
   * reached meanwhile, a file another run imported since), one by one, each with its own outcome.
   */
  const commit = async (batch: StoredFile[]): Promise<void> => {
    if (batch.length === 0) return;
    // Resolved per batch, as each upload resolves its own: an expiration counts from the commit.
    const fileOptions = await resolveOptions(ctx.db, principal, plan, {});
    try {
      const rows = await commitStoredBatch(ctx, principal, batch.map((stored) => itemOf(fileOptions, stored)));
      for (const [i, row] of rows.entries()) settle(batch[i]!, row.size, 'imported');
      return;
    } catch {
      // Each file again on its own, below, which tells which one was refused and why.
    }
    for (const [i, item] of batch.entries()) {
      if (outcome.stopped !== null) {
        // Stopped by an earlier file of the batch: the rest is left for the next run.
        await Promise.all(batch.slice(i).map((rest) => discardStored(ctx, rest.stored)));
        for (const rest of batch.slice(i)) release(rest, 0);
        return;
      }
      try {
        const { file, trxHook } = itemOf(fileOptions, item);
        const row = await commitStored(ctx, principal, item.stored, file, trxHook);
        settle(item, row.size, 'imported');
      } catch (error) {
        if (error instanceof AlreadyImported) {
          settle(item, 0, 'skipped');
          continue;
        }
        release(item, 0);
        // The commit's own quota check (src/uploads/commit-file.ts) refused it.
        if (error instanceof AppError && error.kind === 'too_large') {
          stop(item.file, `${sizeInWords(item.file.size)}; ${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}`);
          continue;
        }
        await Promise.all(batch.slice(i + 1).map((rest) => discardStored(ctx, rest.stored)));
        throw error;
      }
    }
  };
  const release = (item: { reserved: number }, charged: number) => {
    if (quotaLeft !== null) quotaLeft += item.reserved - charged;
  };
  const settle = (item: StoredFile, charged: number, result: 'imported' | 'skipped') => {
    release(item, charged);
    if (result === 'imported') progress.importedBytes += charged;
    done(item.file, result);
  };

  /**
   * A batch whose files are being stored: its place in the tree, the files, their slots, and the
   * storing's outcome — settled at once, so that a failure while the import is busy elsewhere is
   * not unhandled, and read when the batch's turn comes.
   */
  interface InFlight {
    indexes: number[];
    toStore: Array<{ file: TreeFile; reserved: number }>;
    slots: StoreSlot[];
    settled: Promise<{ results: StoreResult[] } | { error: unknown }>;
  }
  const nets = new Map<string, StoreSlot['net']>();
  const thread = new StoreThread(ctx.config, { concurrency, onAlive: (key) => nets.get(key)?.alive() });
  // A net fires ORPHAN_GRACE_MS after its last renewal, for bytes whose process died before their
  // commit. A file's bytes wait for the slowest file of its batch and for the batch before it, which
  // may take longer than that (a large video among small photos): every net in flight is renewed
  // while this process lives, or the files stored first had their bytes removed before the commit
  // that then made records of them.
  // In one statement for them all, one at a time.
  let renewal: Promise<void> | null = null;
  const renewing = setInterval(() => {
    if (renewal !== null || nets.size === 0) return;
    renewal = pushBackStorageDeletes(ctx.db, [...nets.keys()], Date.now() + ORPHAN_GRACE_MS)
      .catch((error: unknown) => ctx.log.warn({ err: error }, "could not push back the clean-ups of an import's files"))
      .finally(() => (renewal = null));
  }, options.renewNetsMs ?? ORPHAN_PUSH_BACK_MS);

  let start = 0;
  /** Checks the next batch's files and sends them to be stored; null when there is none. */
  const sendNext = async (): Promise<InFlight | null> => {
    while (outcome.stopped === null) {
      if (options.signal?.aborted) {
        outcome.interrupted = true;
        return null;
      }
      const count = await tree.available(start, IMPORT_BATCH_FILES);
      if (count === 0) break;
      const indexes = Array.from({ length: count }, (_, i) => start + i);
      start += indexes.length;
      // Checks first (reading known files again to compare them), then the quota in the tree's order.
      const known = await Promise.all(indexes.map((index) => tree.recorded(index)));
      const checked = await mapConcurrently(indexes, concurrency, (index, i) => check(tree.file(index), known[i]));
      const toStore: Array<{ file: TreeFile; reserved: number }> = [];
      for (const [i, result] of checked.entries()) {
        const file = tree.file(indexes[i]!);
        if (result !== 'store') {
          done(file, result);
          continue;
        }
        if (quotaLeft !== null && file.size > quotaLeft) {
          // Room held by unfinished chunked uploads is named, as the API's 413 names it: the
          // account's usage does not show it.
          const held = allowance.reserved > 0 ? `; ${sizeInWords(allowance.reserved)} more are held by unfinished chunked uploads` : '';
          stop(file, `${sizeInWords(file.size)}, ${sizeInWords(quotaLeft)} left${held}`);
          break;
        }
        if (quotaLeft !== null) quotaLeft -= file.size;
        toStore.push({ file, reserved: file.size });
      }
      if (toStore.length === 0) {
        for (const index of indexes) tree.release(index);
        continue;
      }
      const slots = await reserveSlots(ctx, userId, toStore.length);
      for (const slot of slots) nets.set(slot.key, slot.net);
      // Each path copied to a buffer of its own: a small Buffer is a view of a shared 8 KiB block,
      // which the message to the thread would copy whole.
      const settled = thread.store(toStore.map(({ file }, i) => ({ path: new Uint8Array(file.absolutePath), key: slots[i]!.key, maxBytes: allowance.sizeLimit, walkedSize: file.size }))).then(
        (results) => ({ results }),
        (error: unknown) => ({ error }),
      );
      return { indexes, toStore, slots, settled };
    }
    return null;
  };

  /** Waits for a batch's bytes: the stored files; the failed ones are counted and their slots released. */
  const receive = async (flight: InFlight): Promise<StoredFile[]> => {
    try {
      const answer = await flight.settled;
      // Should storing fail for the import (not for one file), bytes already stored are removed by their nets.
      if ('error' in answer) throw answer.error;
      const batch: StoredFile[] = [];
      const unused: StoreSlot[] = [];
      for (const [i, result] of answer.results.entries()) {
        const { file, reserved } = flight.toStore[i]!;
        const slot = flight.slots[i]!;
        if (result.kind === 'stored') {
          const { size, sha256, head } = result;
          batch.push({ file, reserved, stored: { id: slot.id, key: slot.key, size, sha256, head: Buffer.from(head.buffer, head.byteOffset, head.byteLength) } });
          continue;
        }
        outcome.failures.push({ path: file.relativePath, reason: result.kind === 'tooLarge' ? reasons.tooLarge(allowance.sizeLimit) : reasons.unreadable(result.code) });
        release(flight.toStore[i]!, 0);
        unused.push(slot);
        nets.delete(slot.key);
        done(file, 'failed');
      }
      // Released only when no renewal could schedule their clean-ups again.
      await renewal;
      await releaseSlots(ctx, unused);
      return batch;
    } finally {
      for (const slot of flight.slots) nets.delete(slot.key);
      for (const index of flight.indexes) tree.release(index);
      // No renewal may land after the commit cancels the nets (it would schedule one again).
      await Promise.all([renewal, ...flight.slots.map((slot) => slot.net.settled())]);
    }
  };

  // Batches are stored (in the storing thread) while the ones before commit (here): the storing
  // thread is sent AHEAD batches beyond the one being committed, so it always has work queued.
  const flights: InFlight[] = [];
  try {
    for (;;) {
      while (flights.length <= AHEAD) {
        const flight = await sendNext();
        if (flight === null) break;
        flights.push(flight);
      }
      const current = flights.shift();
      if (current === undefined) break;
      const batch = await receive(current);
      const stoppedHere = outcome.stopped !== null;
      await commit(batch);
      if (outcome.stopped !== null && !stoppedHere) {
        // This batch's commit met the quota: the batches after it are left for the next run.
        for (const flight of flights.splice(0)) await Promise.all((await receive(flight)).map((item) => discardStored(ctx, item.stored)));
        break;
      }
    }
  } finally {
    clearInterval(renewing);
    await Promise.all([thread.close(), tree.close()]);
  }
  return outcome;
}

/**
 * Files stored and committed together (see runImport). Each commit writes the pages the batch
 * changed to the database's journal, and the batch's jobs take statements of their own; at 32 files
 * a batch that was an eighth of the import thread's time (docs/decisions.md, "Importing a library").
 */
export const IMPORT_BATCH_FILES = 128;
/** Batches sent to the storing thread beyond the one being committed. */
const AHEAD = 1;


/** Errors of reading one file that make that file a failure, not the import's. */
const fileErrors = new Set(['ENOENT', 'EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'ELOOP', 'EIO', 'ENXIO', 'ESTALE']);

async function sha256Of(path: Buffer, walkedSize: number): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path, { highWaterMark: readBufferBytes(walkedSize) }), hash);
  return hash.digest('hex');
}

/**
 * The tree's files as the walk yields them, LOOKUP_BATCH at a time (a chunk), each chunk with the
 * earlier imports of its paths (relative path → SHA-256 of what was imported there), looked up in
 * one query when a file of it is first checked. A chunk is dropped once all its files are done, so
 * an import holds the chunks of the batches in flight, never the tree, nor a query per file, nor the
 * whole table.
 */
class TreeChunks {
  readonly #chunks = new Map<number, { files: TreeFile[]; paths: Promise<Map<string, Set<string>>> | null; pending: number }>();
  readonly #db: Db;
  readonly #userId: string;
  readonly #walk: AsyncGenerator<TreeFile>;
  /** Files taken from the walk so far, and whether it is over. */
  #taken = 0;
  #ended = false;

  constructor(db: Db, userId: string, walk: AsyncGenerator<TreeFile>) {
    this.#db = db;
    this.#userId = userId;
    this.#walk = walk;
  }

  /** How many files there are from `index` on, up to `most`, taking chunks from the walk as needed. */
  async available(index: number, most: number): Promise<number> {
    while (!this.#ended && this.#taken < index + most) {
      const files: TreeFile[] = [];
      while (files.length < LOOKUP_BATCH) {
        const next = await this.#walk.next();
        if (next.done) {
          this.#ended = true;
          break;
        }
        files.push(next.value);
      }
      if (files.length > 0) this.#chunks.set(this.#taken / LOOKUP_BATCH, { files, paths: null, pending: files.length });
      this.#taken += files.length;
    }
    return Math.max(0, Math.min(most, this.#taken - index));
  }

  /** A file made available (and not yet released). */
  file(index: number): TreeFile {
    return this.#chunk(index).files[index % LOOKUP_BATCH]!;
  }

  async recorded(index: number): Promise<ReadonlySet<string> | undefined> {
    const chunk = this.#chunk(index);
    chunk.paths ??= this.#load(chunk.files.map((file) => file.relativePath));
    return (await chunk.paths).get(chunk.files[index % LOOKUP_BATCH]!.relativePath);
  }

  release(index: number): void {
    const number = Math.floor(index / LOOKUP_BATCH);
    const chunk = this.#chunks.get(number);
    if (chunk && --chunk.pending === 0) this.#chunks.delete(number);
  }

  /** Ends the walk, should the import stop before its end. */
  async close(): Promise<void> {
    await this.#walk.return(undefined);
  }

  #chunk(index: number) {
    const chunk = this.#chunks.get(Math.floor(index / LOOKUP_BATCH));
    if (!chunk) throw new Error(`File ${index} of the tree is not at hand`);
    return chunk;
  }

  async #load(relativePaths: string[]): Promise<Map<string, Set<string>>> {
    const rows = await forAccount(this.#db, this.#userId).selectFrom('importedFiles').select(['relativePath', 'sha256']).where('relativePath', 'in', relativePaths).execute();
    const paths = new Map<string, Set<string>>();
    for (const row of rows) {
      const known = paths.get(row.relativePath) ?? new Set<string>();
      known.add(row.sha256);
      paths.set(row.relativePath, known);
    }
    return paths;
  }
}
