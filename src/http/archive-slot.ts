import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ArchiveCapacity } from '../archives/capacity.ts';
import { ARCHIVE_RETRY_AFTER_SECONDS } from '../archives/capacity.ts';
import { abortableReads } from '../archives/abortable-reads.ts';
import type { Storage } from '../storage/storage.ts';
import { sendError } from './error-responses.ts';

/** A request's slot of archive capacity: the storage its work reads through, stopped when its client goes away. */
export interface ArchiveSlot {
  storage: Storage;
  /** Aborted when the client goes away before its answer is complete. */
  gone: AbortSignal;
}

/**
 * Takes a slot of the process's archive capacity for this request (contract §9), held until its
 * response ends or its client goes away. A client that goes away stops the work too: every read of
 * the archive through `storage` is destroyed at once, so hanging up cannot leave work running beyond
 * ARCHIVE_CONCURRENCY (docs/decisions.md, "Archive capacity"). Call it only once the request is
 * validated and its file authorized, so a client mistake gets its 4xx whatever the capacity. Null:
 * every slot is busy and the 503 with Retry-After has been sent.
 */
export function reserveArchiveSlot(capacity: ArchiveCapacity, storage: Storage, request: FastifyRequest, reply: FastifyReply): ArchiveSlot | null {
  const release = capacity.reserve();
  if (release === null) {
    reply.header('Retry-After', String(ARCHIVE_RETRY_AFTER_SECONDS));
    sendError(request, reply, 503, 'Too many archives are being read right now; try again shortly');
    return null;
  }
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
    release();
  });
  reply.raw.once('finish', release);
  return { storage: abortableReads(storage, controller.signal), gone: controller.signal };
}
