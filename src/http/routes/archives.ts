import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf, type RouteModule } from '../route-module.ts';
import { bytes, ok } from '../responses.ts';
import { reserveArchiveSlot } from '../archive-slot.ts';
import { readingArchive, sendEntry, whileWanted } from '../archive-answers.ts';
import { loadedAsOwnCode, NOT_AS_CODE } from '../fetch-metadata.ts';
import { archiveCreatedResponse, archiveExtractionResponse, archiveManifestResponse } from '../../api/archives.ts';
import { extractArchive, prepareExtraction } from '../../archives/extract.ts';
import { ARCHIVE_FILES_LIMIT, createArchive, prepareCreation } from '../../archives/create.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { openEntry, readManifest } from '../../archives/reader.ts';
import { findOwnedFile } from '../../files/file-access.ts';
import { forbidden, notFound } from '../../errors.ts';
import { fileNameText, onceQueryText, pathText } from '../schemas.ts';

const fileParams = z.strictObject({ fileId: pathText });
const fileId = z.string().min(1).max(128);
const folderId = z.string().min(1).max(128).nullable().optional().describe('The folder the new files go to; null or absent: unfiled');
const extractBody = z.strictObject({
  paths: z
    .array(z.string().min(1).max(4096))
    .min(1)
    .max(10_000)
    .refine((paths) => new Set(paths).size === paths.length, 'must not name an entry twice')
    .optional()
    .describe('Entry paths as the manifest lists them; by default every file entry'),
  folderId,
})
  // Every field has its default, so no body at all is every file entry, unfiled (contract §9).
  .nullish();
const createBody = z.strictObject({
  fileIds: z
    .array(fileId)
    .min(1)
    .max(ARCHIVE_FILES_LIMIT)
    .refine((ids) => new Set(ids).size === ids.length, 'must not name a file twice')
    .describe(`1 to ${ARCHIVE_FILES_LIMIT} of your file IDs, each once`),
  name: fileNameText(200).optional().describe("The new file's name; `.zip` is added when missing (default `archive.zip`)"),
  folderId,
});
const entryQuery = z.object({
  path: onceQueryText('is required: the entry path as the manifest lists it')
    .min(1, { message: 'is required: the entry path as the manifest lists it' })
    .max(4096, { message: 'must be at most 4096 characters' }),
});

/**
 * Archives in the owner's library (contract §9): the manifest of an owned ZIP or tar file and one
 * entry's bytes, read where the file is stored. The request is validated and the file authorized
 * before a slot of archive capacity is taken, so a client mistake gets its 4xx even when every slot
 * is busy.
 */
export const archiveRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['archives'];
  const reserve = (request: FastifyRequest, reply: FastifyReply) => reserveArchiveSlot(ctx.archiveCapacity, ctx.storage, request, reply);

  /** The caller's own file, or 404 (another account's file too). */
  async function ownedFile(request: FastifyRequest, fileId: string) {
    const file = await findOwnedFile(ctx.db, principalOf(request).user.id, fileId);
    if (!file) throw notFound('File not found');
    return file;
  }

  app.get(
    '/api/archives/:fileId',
    { schema: { tags, operationId: 'getArchiveManifest', summary: "The manifest of one of your ZIP or tar files (at most 10,000 entries listed; the counts cover all)", params: fileParams, response: { 200: archiveManifestResponse } } },
    async (request, reply) => {
      const file = await ownedFile(request, request.params.fileId);
      const slot = reserve(request, reply);
      if (!slot) return reply;
      reply.header('Cache-Control', 'private, no-store');
      return ok(await readingArchive(request.log, ctx.db, file, () => readManifest(slot.storage, file.storageKey, file.size), slot.gone));
    },
  );

  app.get(
    '/api/archives/:fileId/entry',
    {
      schema: {
        tags,
        operationId: 'getArchiveEntry',
        summary: 'One entry of one of your archives, as an attachment',
        params: fileParams,
        querystring: entryQuery,
        response: { 200: bytes("The entry's bytes (`Content-Disposition: attachment`, `nosniff`, the type of the entry's name)") },
      },
    },
    async (request, reply) => {
      if (loadedAsOwnCode(request)) throw forbidden(NOT_AS_CODE);
      const file = await ownedFile(request, request.params.fileId);
      const slot = reserve(request, reply);
      if (!slot) return reply;
      const entry = await readingArchive(request.log, ctx.db, file, () => openEntry(slot.storage, file.storageKey, file.size, request.query.path), slot.gone);
      return sendEntry(reply.header('Cache-Control', 'private, no-store'), request.query.path, entry);
    },
  );

  app.post(
    '/api/archives/:fileId/extract',
    {
      schema: {
        tags,
        operationId: 'extractArchive',
        summary: 'Extract entries of one of your archives into your library, each a new file under the rules of POST /api/files',
        params: fileParams,
        body: extractBody,
        response: { 201: archiveExtractionResponse },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const prepared = await prepareExtraction(ctx, principal, request.params.fileId, request.body ?? {});
      const slot = reserve(request, reply);
      if (!slot) return reply;
      // Extraction reads through storage itself and stops when the client goes: the entry being
      // stored is abandoned, its bytes removed, and the files committed before it stay
      // (src/archives/extract.ts).
      const result = await readingArchive(request.log, ctx.db, prepared.archive, () => extractArchive(ctx, principal, prepared, slot.gone), slot.gone);
      return reply.code(201).send(ok(result));
    },
  );

  app.post(
    '/api/archives',
    {
      schema: {
        tags,
        operationId: 'createArchive',
        summary: 'Make a new ZIP file of some of your files (names made unique), streamed to storage',
        body: createBody,
        response: { 201: archiveCreatedResponse },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const prepared = await prepareCreation(ctx, principal, request.body);
      const slot = reserve(request, reply);
      if (!slot) return reply;
      const file = await whileWanted(slot.gone, () => createArchive(ctx, principal, prepared, slot.gone));
      return reply.code(201).send(ok(uploadLinks(ctx.config.baseUrl, principal.user.urlId, file)));
    },
  );
};
