import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteModule } from '../route-module.ts';
import { bytes, ok } from '../responses.ts';
import { reserveArchiveSlot } from '../archive-slot.ts';
import { readingArchive, sendEntry } from '../archive-answers.ts';
import { ARCHIVE_BODY_LIMIT } from '../archive-body.ts';
import { viewerOf } from '../viewer.ts';
import { acceptFormBodies } from '../form-body.ts';
import { archiveManifestResponse } from '../../api/archives.ts';
import { openEntry, readManifest } from '../../archives/reader.ts';
import { accessTo, findByUrlPath, type FileRow } from '../../files/file-access.ts';
import { checkFilePassword } from '../../files/unlock.ts';
import { forbidden, notFound } from '../../errors.ts';
import { pathText } from '../schemas.ts';

const shareParams = z.strictObject({ urlId: pathText, name: pathText });
const password = z.string().min(1).max(1024).describe("The file's password, when it has one and this browser has not unlocked it");
// A browser posting the share page's form sends no body for the manifest; JSON and form bodies alike.
const manifestBody = z.strictObject({ password: password.optional() }).nullish();
const entryBody = z.strictObject({
  // Each problem in its own words: one message for all of them said "is required" of a path sent
  // too long, or as a number.
  path: z
    .string({ error: (issue) => (issue.input === undefined || issue.input === null ? 'is required: the entry path as the manifest lists it' : 'must be text: the entry path as the manifest lists it') })
    .min(1, { message: 'is required: the entry path as the manifest lists it' })
    .max(4096, { message: 'must be at most 4096 characters' }),
  password: password.optional(),
});

/**
 * A shared archive's manifest and one entry's bytes (contract §9, "Share pages"): the file's
 * visibility and password rules as on the share page and its downloads — 404 for a private (unless
 * it is the signed-in owner's), expired or missing file; 403 for a password-protected one without
 * the right password in the body or the file's unlock cookie. The password is taken in the body so
 * it never lands in a URL or a log. No extraction.
 *
 * The body rules (16 KiB, 5 seconds) are every archive route's, set in app.ts; the body is read,
 * validated and the file authorized before a slot of archive capacity is taken, so a mistake gets its
 * 4xx even when every slot is busy.
 */
export const shareArchiveRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['archives'];

  // The share page's download buttons are a plain form (no script, contract §9: "the share page of a
  // public archive shows its manifest"), so these two routes also read a form body; in this scope only.
  acceptFormBodies(app, ARCHIVE_BODY_LIMIT);

  /** The file these credentials may read, or the 404/403/429 that says why not. */
  async function sharedFile(request: FastifyRequest, urlId: string, name: string, givenPassword: string | undefined): Promise<FileRow> {
    const found = await findByUrlPath(ctx.db, urlId, name);
    const access = found ? accessTo(found.file, viewerOf(request)) : 'hidden';
    if (!found || access === 'hidden') throw notFound('File not found');
    if (access === 'locked') {
      if (givenPassword === undefined) throw forbidden('This file is protected by a password: send it as "password" in the body, or unlock the file first');
      // A wrong password counts toward the same throttle as POST /api/files/{id}/unlock.
      await checkFilePassword(ctx.db, request.ip, found.file, givenPassword);
    }
    return found.file;
  }

  /** What a cache may keep: nothing of a file that is not open to everyone. */
  function cacheHeaders(reply: FastifyReply, file: FileRow): void {
    if (accessTo(file, { userId: null, cookies: {} }) !== 'open') reply.header('Cache-Control', 'private, no-store');
  }


  app.post(
    '/api/share/:urlId/:name/archive',
    {
      schema: {
        tags,
        operationId: 'getSharedArchiveManifest',
        summary: "The manifest of a shared ZIP or tar file (the file's visibility and password rules; at most 10,000 entries listed, the counts cover all)",
        params: shareParams,
        body: manifestBody,
        // The share page's entry buttons post a form; scripts send JSON.
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: { 200: archiveManifestResponse },
      },
    },
    async (request, reply) => {
      const file = await sharedFile(request, request.params.urlId, request.params.name, request.body?.password);
      const slot = reserveArchiveSlot(ctx.archiveCapacity, ctx.storage, request, reply);
      if (!slot) return reply;
      cacheHeaders(reply, file);
      return ok(await readingArchive(request.log, ctx.db, file, () => readManifest(slot.storage, file.storageKey, file.size), slot.gone));
    },
  );

  app.post(
    '/api/share/:urlId/:name/archive/entry',
    {
      schema: {
        tags,
        operationId: 'getSharedArchiveEntry',
        summary: 'One entry of a shared archive, as an attachment',
        params: shareParams,
        body: entryBody,
        // The share page's entry buttons post a form; scripts send JSON.
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: { 200: bytes("The entry's bytes (`Content-Disposition: attachment`, `nosniff`, the type of the entry's name)") },
      },
    },
    async (request, reply) => {
      const { path } = request.body;
      const file = await sharedFile(request, request.params.urlId, request.params.name, request.body.password);
      const slot = reserveArchiveSlot(ctx.archiveCapacity, ctx.storage, request, reply);
      if (!slot) return reply;
      const entry = await readingArchive(request.log, ctx.db, file, () => openEntry(slot.storage, file.storageKey, file.size, path), slot.gone);
      cacheHeaders(reply, file);
      return sendEntry(reply, path, entry);
    },
  );
};
