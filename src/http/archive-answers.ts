import mime from 'mime';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Readable } from 'node:stream';
import { NotAnArchiveError } from '../archives/reader.ts';
import { findOwnedFile, type FileRow } from '../files/file-access.ts';
import type { Executor } from '../db/account-scope.ts';
import { StorageNotFoundError } from '../storage/storage.ts';
import { invalid, notFound } from '../errors.ts';
import { contentDisposition } from './content-disposition.ts';
import { withoutDirectionControls } from '../api/display-text.ts';

/**
 * Work on an archive's bytes, as every archive route answers it (contract §9): a file that is not a
 * readable archive is the client's 400; a record whose bytes are gone is a 404 (and logged), as its
 * download would be, unless the file was deleted while it was read (its record goes first): then
 * nothing was lost, and the 404 is logged as the ordinary thing it is; work stopped because its
 * client went away (`gone`) is a 400 nobody reads.
 */
export async function readingArchive<T>(
  log: FastifyBaseLogger,
  db: Executor,
  file: Pick<FileRow, 'id' | 'userId' | 'storageKey'>,
  work: () => Promise<T>,
  gone?: AbortSignal,
): Promise<T> {
  try {
    return await whileWanted(gone, work);
  } catch (error) {
    if (error instanceof NotAnArchiveError) throw invalid(error.message);
    if (error instanceof StorageNotFoundError) {
      if (!(await findOwnedFile(db, file.userId, file.id))) log.info({ fileId: file.id }, 'the archive was deleted while it was read');
      else log.error({ fileId: file.id, storageKey: file.storageKey }, 'file record without bytes');
      throw notFound('File not found');
    }
    throw error;
  }
}

/**
 * One entry's bytes as an attachment, typed by its name, never sniffed, and sandboxed should a
 * browser render it anyway; 404 for a path the archive lacks, 400 for an encrypted entry.
 */
export function sendEntry(reply: FastifyReply, path: string, entry: { stream: Readable; encrypted: boolean } | null): FastifyReply {
  if (!entry) throw notFound('No such entry in the archive');
  if (entry.encrypted) throw invalid('The entry is encrypted; Hoard cannot read it');
  // A name of direction controls alone shows nothing (src/api/display-text.ts): saved as `entry`.
  const name = withoutDirectionControls(path.split('/').pop() ?? '') || 'entry';
  return reply
    .header('Content-Disposition', contentDisposition('attachment', name))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', "default-src 'none'; sandbox")
    .type(mime.getType(name) ?? 'application/octet-stream')
    .send(entry.stream);
}

/**
 * Archive work for a client that may hang up (`gone`): once it has, whatever the stopped work failed
 * with is a client's mistake answered to nobody (a 400, logged at info as any hang-up), not a server
 * error in the log.
 */
export async function whileWanted<T>(gone: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (gone?.aborted) throw invalid('The request was given up before its answer');
    throw error;
  }
}
