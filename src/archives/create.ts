import type { Readable } from 'node:stream';
import yazl from 'yazl';
import type { AppContext } from '../context.ts';
import type { Principal } from '../auth/principal.ts';
import { forAccount } from '../db/account-scope.ts';
import { archiveLimits } from '../api/vocabulary.ts';
import { conflict, notFound } from '../errors.ts';
import { findOwnedFile, type FileRow } from '../files/file-access.ts';
import { StorageLimitError, StorageNotFoundError } from '../storage/storage.ts';
import { extensionOf, nameCandidates, sanitizeFileName } from '../shared/naming.ts';
import type { ResolvedOptions } from '../shared/upload-options.ts';
import { overLimit, uploadAllowance } from '../uploads/allowance.ts';
import { planUpload, resolveOptions } from '../uploads/upload-plan.ts';
import { commitStored, storeBytes } from '../uploads/store-upload.ts';

/** Files one new archive may hold (contract §9): 500 IDs fit the 16 KiB body limit. */
export const ARCHIVE_FILES_LIMIT: number = archiveLimits.files;
const DEFAULT_NAME = 'archive.zip';

export interface CreationRequest {
  fileIds: string[];
  name?: string | undefined;
  folderId?: string | null | undefined;
}

export interface PreparedCreation {
  files: FileRow[];
  name: string;
  folderId: string | null;
  options: ResolvedOptions;
}

/**
 * Everything a new archive is checked against before it takes a slot of archive capacity (contract
 * §9): every file is the caller's (one that is not, or is missing, is a 404 naming it), and the
 * upload rules of POST /api/files hold for the ZIP it makes.
 */
export async function prepareCreation(ctx: AppContext, principal: Principal, request: CreationRequest): Promise<PreparedCreation> {
  const found = await forAccount(ctx.db, principal.user.id).selectFrom('files').selectAll().where('id', 'in', request.fileIds).execute();
  const byId = new Map(found.map((file) => [file.id, file]));
  const missing = request.fileIds.find((id) => !byId.has(id));
  if (missing !== undefined) throw notFound(`File not found: ${missing}`);
  const plan = await planUpload(ctx.db, principal, { folder: request.folderId ?? undefined });
  // An archive holding a private or password-protected file is private, whatever the account's
  // default: made public, it would hand anyone the bytes those files keep to their owner.
  const guarded = found.some((file) => file.visibility === 'PRIVATE' || file.passwordHash !== null);
  const options = await resolveOptions(ctx.db, principal, plan, guarded ? { visibility: 'PRIVATE' } : {});
  const given = request.name?.trim();
  const named = given ? (extensionOf(given) === 'zip' ? given : `${given}.zip`) : DEFAULT_NAME;
  return {
    files: request.fileIds.map((id) => byId.get(id)!),
    // A name of nothing a file name keeps ("???") would be left a bare "zip" by the naming rules.
    name: extensionOf(sanitizeFileName(named)) === 'zip' ? named : DEFAULT_NAME,
    folderId: plan.folderId,
    options,
  };
}

/**
 * Types whose bytes are already compressed: deflating them again costs CPU and gains nothing, so
 * they are stored as they are.
 */
const compressedTypes = new Set([
  'application/zip',
  'application/gzip',
  'application/x-gzip',
  'application/x-bzip2',
  'application/x-xz',
  'application/zstd',
  'application/x-7z-compressed',
  'application/vnd.rar',
  'application/x-rar-compressed',
  'application/pdf',
  'application/epub+zip',
  'application/java-archive',
  'application/vnd.android.package-archive',
  'font/woff',
  'font/woff2',
]);
const uncompressedMedia = new Set(['image/bmp', 'image/svg+xml', 'image/tiff', 'image/x-icon', 'image/vnd.microsoft.icon', 'audio/wav', 'audio/x-aiff', 'audio/aiff']);

export function alreadyCompressed(mimeType: string): boolean {
  if (compressedTypes.has(mimeType)) return true;
  if (/^application\/(vnd\.openxmlformats|vnd\.oasis\.opendocument)/.test(mimeType)) return true;
  return /^(image|audio|video)\//.test(mimeType) && !uncompressedMedia.has(mimeType);
}

/**
 * Entry names unique within the archive, also for a filesystem that ignores case: each file's name,
 * under its `directory` (a path ending in `/`, or none), numbered where another entry has it.
 */
function entryNames(files: Array<{ name: string; directory?: string }>): string[] {
  const taken = new Set<string>();
  return files.map(({ name, directory = '' }) => {
    for (const candidate of nameCandidates(name)) {
      const entry = `${directory}${candidate}`;
      if (taken.has(entry.toLowerCase())) continue;
      taken.add(entry.toLowerCase());
      return entry;
    }
    throw new Error('unreachable');
  });
}

/**
 * Why a file's bytes were not found while its archive was made. Deleted meanwhile (its record went
 * first, then its bytes): the selection is out of date, and nothing is broken. Bytes gone under a
 * record still there are a lost file, logged as one.
 */
async function missingBytes(ctx: AppContext, file: FileRow): Promise<Error> {
  if (!(await findOwnedFile(ctx.db, file.userId, file.id))) return conflict(`${file.name} was deleted while the archive was being made; make it again without it`);
  ctx.log.error({ fileId: file.id, storageKey: file.storageKey }, 'file record without bytes: the archive is not made');
  return notFound(`The bytes of ${file.name} are missing; remove it from the selection`);
}

/**
 * The ZIP of the files, streamed: each file is read from storage only when its turn comes, and the
 * archive goes to storage as it is made (contract §9: never held whole). A file whose bytes cannot
 * be read fails the stream, so nothing half-made is committed.
 */
function zipStream(ctx: AppContext, files: FileRow[]): Readable {
  const names = entryNames(files);
  return zipOf(ctx, files.map((file, index) => ({ file, name: names[index]!, compress: !alreadyCompressed(file.mimeType) }))).output;
}

/**
 * A ZIP of the entries, streamed, each file read from storage when its turn comes. `size` is the
 * ZIP's length, known before it starts when no entry is compressed; else -1.
 */
function zipOf(ctx: AppContext, entries: Array<{ file: FileRow; name: string; compress: boolean }>): { output: Readable; size: Promise<number> } {
  const zip = new yazl.ZipFile();
  const output = zip.outputStream as unknown as Readable;
  // The file being read: piping does not pass an end on, so it is stopped here with the archive.
  let reading: Readable | null = null;
  const fail = (error: Error) => output.destroy(error);
  zip.on('error', fail);
  // The first file's bytes are asked for as soon as the ZIP starts, before whoever stores the
  // archive pipes it anywhere: a failure then (bytes gone from local disk fail at once) was an
  // 'error' event nobody listened to, which ends the process. The consumer still meets the error,
  // from the stream's errored state, when it pipes it.
  output.on('error', () => {});
  output.once('close', () => reading?.destroy());
  for (const { file, name, compress } of entries) {
    zip.addReadStreamLazy(name, { mtime: new Date(file.createdAt), compress, size: file.size }, (callback) => {
      ctx.storage.get(file.storageKey).then(
        ({ stream }) => {
          if (output.destroyed) return stream.destroy();
          reading = stream;
          stream.on('error', fail);
          callback(null, stream);
        },
        (error: unknown) => {
          // Only bytes that are gone are the selection's fault; a store that cannot be read right now
          // fails the archive with its own error, answered as any storage outage is (503).
          const asError = (problem: unknown) => (problem instanceof Error ? problem : new Error(String(problem)));
          if (!(error instanceof StorageNotFoundError)) return fail(asError(error));
          missingBytes(ctx, file).then(fail, (lookup: unknown) => fail(asError(lookup)));
        },
      );
    });
  }
  // yazl calls back with the total length (its published types leave the argument out).
  const size = new Promise<number>((resolve) => zip.end(undefined, ((total: number) => resolve(total)) as unknown as () => void));
  return { output, size };
}

/** A folder's name as one segment of a path in a ZIP: no separator, and no `.` or `..` that would climb. */
function pathSegment(name: string): string {
  const segment = name.replace(/[\\/]/g, '_');
  return segment === '.' || segment === '..' ? '_' : segment;
}

/**
 * A shared folder's files as one ZIP for its visitors (docs/decisions.md, "Sharing a folder"), each
 * under its folder path from the shared folder, names made unique within a directory as a new
 * archive's are. Stored, not compressed: a folder shared as an album is photos and videos, which
 * compress no further, and a ZIP of stored entries has a length known before it starts, which a
 * browser shows as the download's progress. Nothing is held: each file is read when its turn comes.
 */
export async function folderZip(ctx: AppContext, entries: Array<{ file: FileRow; path: string[] }>): Promise<{ stream: Readable; size: number }> {
  const names = entryNames(entries.map(({ file, path }) => ({ name: file.name, directory: path.map((segment) => `${pathSegment(segment)}/`).join('') })));
  const { output, size } = zipOf(ctx, entries.map(({ file }, index) => ({ file, name: names[index]!, compress: false })));
  return { stream: output, size: await size };
}

/**
 * Makes a new ZIP file of the account's files (contract §9) under the rules of POST /api/files: the
 * size limit and the quota bound the archive while it streams, and the commit is the same atomic
 * one, with its file.ready event.
 */
export async function createArchive(ctx: AppContext, principal: Principal, prepared: PreparedCreation, signal: AbortSignal): Promise<FileRow> {
  const allowance = await uploadAllowance(ctx.db, principal);
  const source = zipStream(ctx, prepared.files);
  const stop = () => source.destroy(new Error('The client went away'));
  signal.addEventListener('abort', stop, { once: true });
  try {
    const stored = await storeBytes(ctx, principal.user.id, source, { maxBytes: allowance.maxBytes, contentType: 'application/zip' });
    return await commitStored(ctx, principal, stored, { name: prepared.name, declaredType: 'application/zip', folderId: prepared.folderId, options: prepared.options });
  } catch (error) {
    if (error instanceof StorageLimitError) throw overLimit(allowance);
    throw error;
  } finally {
    signal.removeEventListener('abort', stop);
    source.destroy();
  }
}
