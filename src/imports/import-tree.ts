import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
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
import { findOwnedFolder } from '../organisation/folders.ts';
import { findOwnedProfile } from '../organisation/profiles.ts';
import { applyRequest } from '../shared/upload-options.ts';
import { StorageLimitError } from '../storage/storage.ts';
import { uploadAllowance, type Allowance } from '../uploads/allowance.ts';
import { commitStored, storeBytes } from '../uploads/store-upload.ts';
import { planUpload, resolveOptions, type UploadPlan } from '../uploads/upload-plan.ts';
import { checkDirectory, walkTree, type Tree, type TreeFile } from './walk-tree.ts';

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
  tree: Tree;
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
  /** Why the import stopped before the last file (the quota), or null. */
  stopped: string | null;
  /** The caller asked the import to stop (the signal); files not begun were left for a later run. */
  interrupted: boolean;
}

/**
 * Files in flight at once. Each one waits on the disk (its read, the fsyncs that make its bytes
 * durable) and on the database (its commit) in turn: a few in flight keep both busy. On SQLite every
 * commit takes the one write lock anyway, so more than this only adds memory (docs/decisions.md).
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
  tooLarge: (limit: number) => `larger than the maximum upload size of ${limit} bytes`,
  unreadable: (code: string) => `it cannot be read (${code})`,
};

/**
 * The checks an import passes before any byte is read, each with its own message: the account, the
 * permission to upload (spec, Endpoints: POST /api/files needs files.upload), the profile and folder
 * (owned, as the selectors of POST /api/files), the permissions the resolved options need, and the
 * directory. The account's permissions are read once, now: the import acts for the account as a
 * browser session of it would (no token scope, no profile binding). Then the tree is walked;
 * `onWalk` is called when every check has passed and the walk begins.
 */
export async function prepareImport(ctx: AppContext, request: ImportRequest, onWalk?: () => void): Promise<PreparedImport> {
  const { email } = request;
  const principal = await principalFor(ctx.db, email);
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
  onWalk?.();
  const tree = await walkTree(request.directory);
  return { email, principal, plan, tree };
}

async function principalFor(db: Db, email: string): Promise<Principal> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'email', 'name', 'urlId', 'emailVerified', 'quotaBytes', 'createdAt', 'listingVersion'])
    .where('email', '=', normalizeEmail(email))
    .executeTakeFirst();
  if (!row) throw new AppError('not_found', `No account with the email ${email}`);
  const { listingVersion, ...user } = row;
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
  const { tree } = prepared;
  return { totalFiles: tree.files.length, totalBytes: tree.totalBytes, doneFiles: 0, doneBytes: 0, imported: 0, importedBytes: 0, skipped: 0, failed: 0 };
}

/** Raised inside a commit whose record an earlier or concurrent run already wrote: the file is rolled back. */
class AlreadyImported extends Error {}

/**
 * Imports the files of a prepared import, IMPORT_CONCURRENCY at a time, in the tree's order. A file
 * too large or unreadable is a failure and the import goes on; a file over the quota stops it (files
 * already imported stay; a later run continues from there). `signal` stops it between files.
 */
export async function runImport(ctx: AppContext, prepared: PreparedImport, progress: ImportProgress, options: { signal?: AbortSignal; concurrency?: number } = {}): Promise<ImportOutcome> {
  const { principal, plan, tree, email } = prepared;
  const userId = principal.user.id;
  const allowance: Allowance = await uploadAllowance(ctx.db, principal);
  // The quota the files in flight may still use: a file that does not fit stops the import before
  // its bytes are stored. The commit checks the quota again (other uploads may use it meanwhile).
  let quotaLeft = allowance.quotaRemaining;
  const outcome: ImportOutcome = { progress, failures: [...tree.unreadable], notRegular: tree.notRegular, stopped: null, interrupted: false };
  progress.failed += tree.unreadable.length;
  const recorded = new RecordedImports(ctx.db, userId, tree.files);

  const stop = (file: TreeFile, detail: string) => {
    outcome.stopped ??= `The storage quota of ${email} is reached at ${file.relativePath} (${detail}): the import stopped. The files imported so far stay; run the import again once there is room, and it continues from there.`;
  };

  const importOne = async (file: TreeFile, known: ReadonlySet<string> | undefined): Promise<'imported' | 'skipped' | 'failed' | 'stopped'> => {
    if (Buffer.byteLength(file.relativePath) > MAX_PATH_BYTES) {
      outcome.failures.push({ path: file.relativePath, reason: reasons.pathTooLong });
      return 'failed';
    }
    try {
      // Known paths are read once more, to compare their bytes; a path never imported is not.
      if (known && known.has(await sha256Of(file.absolutePath))) return 'skipped';
    } catch (error) {
      return fail(file, error);
    }
    // Stopped while this file was being compared: it is left for the next run, as are those after it.
    if (outcome.stopped !== null) return 'stopped';
    if (file.size > allowance.sizeLimit) {
      outcome.failures.push({ path: file.relativePath, reason: reasons.tooLarge(allowance.sizeLimit) });
      return 'failed';
    }
    if (quotaLeft !== null && file.size > quotaLeft) {
      stop(file, `${file.size} bytes, ${quotaLeft} bytes left`);
      return 'stopped';
    }
    const reserved = file.size;
    if (quotaLeft !== null) quotaLeft -= reserved;
    let charged = 0;
    try {
      const source = createReadStream(file.absolutePath);
      // An error of reading the file is the file's failure; one of writing to storage is the import's.
      let readError: unknown = null;
      source.once('error', (error) => void (readError ??= error));
      let stored;
      try {
        stored = await storeBytes(ctx, userId, source, { maxBytes: allowance.sizeLimit });
      } catch (error) {
        source.destroy();
        if (error instanceof StorageLimitError) {
          outcome.failures.push({ path: file.relativePath, reason: reasons.tooLarge(allowance.sizeLimit) });
          return 'failed';
        }
        if (readError !== null) return fail(file, readError);
        throw error;
      }
      // Resolved per file, as each upload resolves its own: an expiration counts from the file's commit.
      const fileOptions = await resolveOptions(ctx.db, principal, plan, {});
      const name = file.relativePath.slice(file.relativePath.lastIndexOf('/') + 1);
      const committed = await commitStored(ctx, principal, stored, { name, declaredType: undefined, folderId: plan.folderId, options: fileOptions }, async (trx, row) => {
        try {
          await forAccount(trx, userId).insertInto('importedFiles', { relativePath: file.relativePath, sha256: stored.sha256, fileId: row.id, importedAt: row.createdAt }).execute();
        } catch (error) {
          // The same bytes at the same path were imported by another run since this one looked.
          if (isUniqueViolation(error)) throw new AlreadyImported();
          throw error;
        }
      });
      charged = committed.size;
      progress.importedBytes += committed.size;
      return 'imported';
    } catch (error) {
      if (error instanceof AlreadyImported) return 'skipped';
      // The commit's own quota check (src/uploads/commit-file.ts) refused it.
      if (error instanceof AppError && error.kind === 'too_large') {
        stop(file, `${file.size} bytes; ${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}`);
        return 'stopped';
      }
      throw error;
    } finally {
      if (quotaLeft !== null) quotaLeft += reserved - charged;
    }
  };

  const fail = (file: TreeFile, error: unknown): 'failed' => {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    // The file's own trouble (gone, not readable); anything else (the database, storage) is the import's.
    if (typeof code !== 'string' || !fileErrors.has(code)) throw error;
    outcome.failures.push({ path: file.relativePath, reason: reasons.unreadable(code) });
    return 'failed';
  };

  let next = 0;
  const worker = async () => {
    while (next < tree.files.length && outcome.stopped === null) {
      if (options.signal?.aborted) {
        outcome.interrupted = true;
        return;
      }
      const index = next++;
      const file = tree.files[index]!;
      const known = await recorded.at(index);
      try {
        const result = await importOne(file, known);
        if (result === 'stopped') return;
        if (result === 'imported') progress.imported += 1;
        else if (result === 'skipped') progress.skipped += 1;
        else progress.failed += 1;
        progress.doneFiles += 1;
        progress.doneBytes += file.size;
      } finally {
        recorded.release(index);
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, options.concurrency ?? IMPORT_CONCURRENCY) }, worker);
  // Every worker finishes its file before the import ends, also when one of them fails.
  const settled = await Promise.allSettled(workers);
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return outcome;
}

/** Errors of reading one file that make that file a failure, not the import's. */
const fileErrors = new Set(['ENOENT', 'EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'ELOOP', 'EIO', 'ENXIO', 'ESTALE']);

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/**
 * The earlier imports of the tree's paths (relative path → SHA-256 of what was imported there),
 * looked up LOOKUP_BATCH paths at a time in the tree's order and dropped once their files are done,
 * so neither a query per file nor the whole table in memory is needed.
 */
class RecordedImports {
  readonly #batches = new Map<number, { paths: Promise<Map<string, Set<string>>>; pending: number }>();
  readonly #db: Db;
  readonly #userId: string;
  readonly #files: TreeFile[];

  constructor(db: Db, userId: string, files: TreeFile[]) {
    this.#db = db;
    this.#userId = userId;
    this.#files = files;
  }

  async at(index: number): Promise<ReadonlySet<string> | undefined> {
    const number = Math.floor(index / LOOKUP_BATCH);
    let batch = this.#batches.get(number);
    if (!batch) {
      const files = this.#files.slice(number * LOOKUP_BATCH, (number + 1) * LOOKUP_BATCH);
      batch = { paths: this.#load(files.map((file) => file.relativePath)), pending: files.length };
      this.#batches.set(number, batch);
    }
    return (await batch.paths).get(this.#files[index]!.relativePath);
  }

  release(index: number): void {
    const number = Math.floor(index / LOOKUP_BATCH);
    const batch = this.#batches.get(number);
    if (batch && --batch.pending === 0) this.#batches.delete(number);
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
