import type { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import type { Principal } from '../auth/principal.ts';
import type { ArchiveExtraction, SkippedEntry } from '../api/archives.ts';
import { AppError, notFound } from '../errors.ts';
import { findOwnedFile, type FileRow } from '../files/file-access.ts';
import { uploadLinks } from '../files/file-views.ts';
import { isStorageFull, StorageLimitError, StorageNotFoundError, StorageUnavailableError } from '../storage/storage.ts';
import { isDatabaseFull } from '../db/database.ts';
import type { ResolvedOptions } from '../shared/upload-options.ts';
import { uploadAllowance } from '../uploads/allowance.ts';
import { planUpload, resolveOptions } from '../uploads/upload-plan.ts';
import { commitStored, storeBytes } from '../uploads/store-upload.ts';
import { DamagedEntryError, entryDataProblem, entryDataProblems, NotAnArchiveError, walkEntries, type ArchiveEntry, type TarSpecial } from './reader.ts';
import { sizeInWords } from '../shared/sizes.ts';

/** The archive being extracted was deleted meanwhile (see `deletedMeanwhile` in extractArchive). */
class ArchiveDeleted extends Error {}

/** At most this many files come out of one extraction (the manifest's limit); the rest are skipped. */
export const EXTRACTED_FILES_LIMIT = 10_000;

export interface ExtractionRequest {
  /** Entry paths as the manifest lists them; by default every file entry. */
  paths?: string[] | undefined;
  /** The folder the files go to; null or absent: unfiled. */
  folderId?: string | null | undefined;
}

/** An extraction that passed validation and authorization: what remains is the archive work. */
export interface PreparedExtraction {
  archive: FileRow;
  folderId: string | null;
  options: ResolvedOptions;
  wanted: Set<string> | null;
}

/**
 * Everything an extraction is checked against before it takes a slot of archive capacity (contract
 * §9): the archive is the caller's, and the upload rules of POST /api/files hold for what it would
 * make — the account's defaults and default profile, the folder, and the permissions those options
 * need (a missing one is the 403 an upload would get).
 */
export async function prepareExtraction(ctx: AppContext, principal: Principal, fileId: string, request: ExtractionRequest): Promise<PreparedExtraction> {
  const archive = await findOwnedFile(ctx.db, principal.user.id, fileId);
  if (!archive) throw notFound('File not found');
  const plan = await planUpload(ctx.db, principal, { folder: request.folderId ?? undefined });
  // What a private or password-protected archive holds stays private, whatever the account's
  // default: made public, the entries would hand anyone what the archive keeps to its owner.
  const guarded = archive.visibility === 'PRIVATE' || archive.passwordHash !== null;
  const options = await resolveOptions(ctx.db, principal, plan, guarded ? { visibility: 'PRIVATE' } : {});
  return { archive, folderId: plan.folderId, options, wanted: request.paths ? new Set(request.paths) : null };
}

/** The reasons `skipped` gives, one wording each. */
const reasons = {
  encrypted: 'encrypted: Hoard cannot decrypt it',
  directory: 'a directory: name the files in it instead',
  missing: 'not in the archive',
  tooMany: `more than ${EXTRACTED_FILES_LIMIT} files in one extraction: extract the rest in another`,
  ...entryDataProblems,
  unreadable: 'it is damaged in the archive and cannot be read',
  special: (kind: TarSpecial) =>
    kind === 'symlink' || kind === 'link'
      ? `a ${kind === 'symlink' ? 'symbolic' : 'hard'} link, not a file: Hoard extracts the files links point to, not links`
      : `a special file (${kind}), not a file`,
  // yauzl reads stored and deflated entries; LZMA, bzip2, Zstandard… are not damage.
  method: (method: string) => `it is compressed with a method Hoard cannot read (${method})`,
  archiveDamaged: 'the archive is damaged from here on: extraction stopped',
  archiveDamagedAfter: (path: string) => `the archive is damaged after "${path}": extraction stopped, and the entries after it cannot be read`,
  storeStopped: 'the archive could not be read from storage right now: extraction stopped here; extract the rest later',
  archiveDeleted: 'the archive was deleted while it was extracted: extraction stopped here',
  quota: 'over your storage quota',
  outOfSpace: 'the server is out of storage space',
  tooLarge: (limit: number) => `larger than the maximum upload size of ${sizeInWords(limit)}`,
};

/** Why an entry's bytes could not be stored, or null when the failure is not the entry's. */
function entryFailure(error: unknown): string | null {
  if (error instanceof StorageLimitError) return reasons.inflates;
  if (error instanceof AppError && error.kind === 'too_large') return reasons.quota;
  // A full disk is the server's state, but it stops only the entries that do not fit: the ones
  // extracted stay, and smaller ones may still fit (docs/decisions.md, "A full disk"). So does a
  // database that has no room for an entry's record: the files made before it are in the answer.
  if (isStorageFull(error) || isDatabaseFull(error)) return reasons.outOfSpace;
  return entryDataProblem(error);
}

/**
 * Extracts entries of an owned archive into the account (contract §9), one at a time, streamed from
 * where the archive is stored to where the new file goes. Every entry is a file of its own under the
 * rules of POST /api/files: named after its last path segment (sanitised and made unique when
 * committed, so nothing is written outside the account and no directory structure is kept), typed
 * from its content or name, within the size limit and the quota, committed atomically with its
 * file.ready event. An entry that is encrypted, too large, over the quota, or that inflates past its
 * declared size (the declared size is the limit its stream is held to: the zip-bomb rule) is skipped
 * with its reason and leaves no bytes and no record. `signal` (the client went away) stops the work.
 */
export async function extractArchive(ctx: AppContext, principal: Principal, prepared: PreparedExtraction, signal: AbortSignal): Promise<ArchiveExtraction> {
  const { archive, wanted, folderId, options } = prepared;
  /**
   * The archive's record is gone: its owner deleted it while it was read (the record goes first,
   * then the bytes). An entry that failed then failed for that, not for damage of its own: the
   * extraction stops there, keeping and listing what it made, rather than a 404 after making files,
   * or every later entry skipped as "damaged".
   */
  const deletedMeanwhile = async () => !(await findOwnedFile(ctx.db, archive.userId, archive.id));
  const allowance = await uploadAllowance(ctx.db, principal);
  let quotaLeft = allowance.quotaRemaining;
  const files: ArchiveExtraction['files'] = [];
  const skipped: SkippedEntry[] = [];
  const seen = new Set<string>();

  const extractOne = async (entry: ArchiveEntry, open: () => Promise<Readable>) => {
    if (entry.encrypted) return skipped.push({ path: entry.path, reason: reasons.encrypted });
    if (entry.size > allowance.sizeLimit) return skipped.push({ path: entry.path, reason: reasons.tooLarge(allowance.sizeLimit) });
    if (quotaLeft !== null && entry.size > quotaLeft) return skipped.push({ path: entry.path, reason: reasons.quota });
    if (files.length >= EXTRACTED_FILES_LIMIT) return skipped.push({ path: entry.path, reason: reasons.tooMany });
    let stream: Readable;
    try {
      stream = await open();
    } catch (error) {
      if ((error instanceof DamagedEntryError || error instanceof StorageNotFoundError) && (await deletedMeanwhile())) throw new ArchiveDeleted();
      if (!(error instanceof DamagedEntryError)) throw error;
      const method = /unsupported compression method: (\d+)/.exec(error.message)?.[1];
      return skipped.push({ path: entry.path, reason: method === undefined ? reasons.unreadable : reasons.method(method) });
    }
    const stop = () => stream.destroy(new Error('The client went away'));
    signal.addEventListener('abort', stop, { once: true });
    try {
      // Held to its declared size: an entry that inflates past it is cut off here even where the
      // archive format itself would not notice.
      const stored = await storeBytes(ctx, principal.user.id, stream, { maxBytes: entry.size });
      const name = entry.path.split('/').pop() || 'file';
      const file = await commitStored(ctx, principal, stored, { name, declaredType: undefined, folderId, options });
      if (quotaLeft !== null) quotaLeft -= file.size;
      files.push(uploadLinks(ctx.config.baseUrl, principal.user.urlId, file));
    } catch (error) {
      if (!stream.destroyed) stream.destroy();
      if (signal.aborted) throw error;
      const reason = entryFailure(error);
      if ((reason !== null || error instanceof StorageNotFoundError) && (await deletedMeanwhile())) throw new ArchiveDeleted();
      if (reason === null) throw error;
      skipped.push({ path: entry.path, reason });
    } finally {
      signal.removeEventListener('abort', stop);
    }
  };

  const visit = async (entry: ArchiveEntry, open: () => Promise<Readable>) => {
    if (wanted && !wanted.has(entry.path)) return;
    if (entry.special !== undefined) {
      skipped.push({ path: entry.path, reason: reasons.special(entry.special) });
      return;
    }
    if (entry.directory) {
      if (wanted) skipped.push({ path: entry.path, reason: reasons.directory });
      return;
    }
    await extractOne(entry, open);
  };
  /** The last entry the walk met, and whether it was dealt with. */
  let last: { path: string; done: boolean } | null = null;

  try {
    await walkEntries(
      ctx.storage,
      archive.storageKey,
      archive.size,
      async (entry, open) => {
        seen.add(entry.path);
        const met = { path: entry.path, done: false };
        last = met;
        await visit(entry, open);
        met.done = true;
      },
      signal,
    );
  } catch (error) {
    if (!signal.aborted && (error instanceof ArchiveDeleted || ((error instanceof StorageNotFoundError || error instanceof NotAnArchiveError) && (await deletedMeanwhile())))) {
      // Nothing made yet: the file is simply gone, as its download would say.
      if (files.length === 0) throw notFound('File not found');
      skipped.push({ path: '', reason: reasons.archiveDeleted });
      return { files, skipped };
    }
    // Damage met after the walk began: what was extracted stays, and the answer says where it stopped.
    // A store that stopped answering ends it the same way, saying so: what was made is kept and listed.
    const storeStopped = error instanceof StorageUnavailableError;
    if (!(error instanceof NotAnArchiveError || storeStopped) || last === null || signal.aborted) throw error;
    // In the middle of an entry's bytes: that entry. At the header after one already dealt with (and
    // perhaps extracted), whose name cannot be read: the archive itself (no path), after that entry.
    const stopped: { path: string; done: boolean } = last;
    if (storeStopped) skipped.push({ path: stopped.done ? '' : stopped.path, reason: reasons.storeStopped });
    else skipped.push(stopped.done ? { path: '', reason: reasons.archiveDamagedAfter(stopped.path) } : { path: stopped.path, reason: reasons.archiveDamaged });
    return { files, skipped };
  }
  if (wanted) for (const path of wanted) if (!seen.has(path)) skipped.push({ path, reason: reasons.missing });
  return { files, skipped };
}
