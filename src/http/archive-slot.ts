import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ArchiveCapacity } from '../archives/capacity.ts';
import { ARCHIVE_RETRY_AFTER_SECONDS } from '../archives/capacity.ts';
import { sendError } from './error-responses.ts';

/**
 * Takes a slot of the process's archive capacity for this request (contract §9), held until its
 * response ends or its client goes away. Call it only once the request is validated and its file
 * authorized, so a client mistake gets its 4xx whatever the capacity. False: every slot is busy and
 * the 503 with Retry-After has been sent.
 */
export function reserveArchiveSlot(capacity: ArchiveCapacity, request: FastifyRequest, reply: FastifyReply, use: 'library' | 'shared'): boolean {
  const release = capacity.reserve(use);
  if (!release) {
    reply.header('Retry-After', String(ARCHIVE_RETRY_AFTER_SECONDS));
    sendError(request, reply, 503, 'Too many archives are being read right now; try again shortly');
    return false;
  }
  reply.raw.once('close', release);
  reply.raw.once('finish', release);
  return true;
}
