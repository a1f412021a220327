import { z } from 'zod';
import mime from 'mime';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf, type RouteModule } from '../route-module.ts';
import { bytes, ok } from '../responses.ts';
import { reserveArchiveSlot } from '../archive-slot.ts';
import { contentDisposition } from '../content-disposition.ts';
import { archiveManifestResponse } from '../../api/archives.ts';
import { NotAnArchiveError, openEntry, readManifest } from '../../archives/reader.ts';
import { findById } from '../../files/file-access.ts';
import { invalid, notFound } from '../../errors.ts';

const fileParams = z.strictObject({ fileId: z.string().min(1).max(128) });
const entryQuery = z.object({ path: z.string({ error: 'is required: the entry path as the manifest lists it' }).min(1).max(4096) });

/**
 * Archives in the owner's library (contract §9): the manifest of an owned ZIP or tar file and one
 * entry's bytes, read where the file is stored. The request is validated and the file authorized
 * before a slot of archive capacity is taken, so a client mistake gets its 4xx even when every slot
 * is busy.
 */
export const archiveRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['archives'];
  const reserve = (request: FastifyRequest, reply: FastifyReply) => reserveArchiveSlot(ctx.archiveCapacity, request, reply);

  /** The caller's own file, or 404 (another account's file too). */
  async function ownedFile(request: FastifyRequest, fileId: string) {
    const found = await findById(ctx.db, fileId);
    if (!found || found.file.userId !== principalOf(request).user.id) throw notFound('File not found');
    return found.file;
  }

  const readable = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof NotAnArchiveError) throw invalid(`${error.message}`);
      throw error;
    }
  };

  app.get(
    '/api/archives/:fileId',
    { schema: { tags, summary: "The manifest of one of your ZIP or tar files (at most 10,000 entries listed; the counts cover all)", params: fileParams, response: { 200: archiveManifestResponse } } },
    async (request, reply) => {
      const file = await ownedFile(request, request.params.fileId);
      if (!reserve(request, reply)) return reply;
      reply.header('Cache-Control', 'private, no-store');
      return ok(await readable(() => readManifest(ctx.storage, file.storageKey, file.size)));
    },
  );

  app.get(
    '/api/archives/:fileId/entry',
    {
      schema: {
        tags,
        summary: 'One entry of one of your archives, as an attachment',
        params: fileParams,
        querystring: entryQuery,
        response: { 200: bytes("The entry's bytes (`Content-Disposition: attachment`, `nosniff`, the type of the entry's name)") },
      },
    },
    async (request, reply) => {
      const file = await ownedFile(request, request.params.fileId);
      if (!reserve(request, reply)) return reply;
      const entry = await readable(() => openEntry(ctx.storage, file.storageKey, file.size, request.query.path));
      if (!entry) throw notFound('No such entry in the archive');
      if (entry.encrypted) throw invalid('The entry is encrypted; Hoard cannot read it');
      const name = request.query.path.split('/').pop() || 'entry';
      return reply
        .header('Content-Disposition', contentDisposition('attachment', name))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'private, no-store')
        .type(mime.getType(name) ?? 'application/octet-stream')
        .send(entry.stream);
    },
  );
};
