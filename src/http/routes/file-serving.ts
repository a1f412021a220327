import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteModule } from '../route-module.ts';
import type { AppContext } from '../../context.ts';
import { isDatabaseFull, isDatabaseUnavailable } from '../../db/database.ts';
import { dropFileHeaders, sendError } from '../error-responses.ts';
import { isUnfurler } from '../unfurlers.ts';
import { accessTo, countDownload, countView, findById, findByUrlPath, isActiveContent, parseRange, servedContentType, type FileRow } from '../../files/file-access.ts';
import { viewerOf } from '../viewer.ts';
import { publicCaching } from '../public-caching.ts';
import { forbidden, notFound, unauthorized } from '../../errors.ts';
import { StorageNotFoundError, type ByteRange, type StoredObject } from '../../storage/storage.ts';
import { bytes, headNotModifiedWithoutLength, noBody, ok } from '../responses.ts';
import { fileOcrResponse } from '../../api/files.ts';
import { thumbnailVersion } from '../../media/media-kinds.ts';
import { contentDisposition } from '../content-disposition.ts';
import { loadedAsOwnCode, NOT_AS_CODE } from '../fetch-metadata.ts';
import { pathText } from '../schemas.ts';
import { failedPrecondition, notModified, rangeStillValid } from '../conditional-requests.ts';


/** Up to this many bytes from the start is a player's probe of the file, not a viewing. */
const PROBE_BYTES = 2;

/**
 * Streams a file's bytes with Range, ETag and headers that stop a browser from running them.
 * `count` (a view or a download) is called for a GET that gets the file from its first byte: the
 * whole file, a range from byte 0, or a 304 for a copy the client holds. A player's further ranges
 * and a 416 are not counted, so one playing of a video is one view.
 */
async function sendBytes(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, file: FileRow, disposition: 'inline' | 'attachment', count?: (fileId: string) => Promise<void>): Promise<FastifyReply> {
  if (loadedAsOwnCode(request)) return sendError(request, reply, 403, NOT_AS_CODE);
  const counted = async () => {
    if (!count || request.method !== 'GET' || isUnfurler(request.headers['user-agent'])) return;
    try {
      await count(file.id);
    } catch (error) {
      // Serving a file needs no write: a database that cannot write right now (its disk full, its
      // lock held past the wait) costs the count, not the download (docs/decisions.md, "A full disk").
      if (!isDatabaseFull(error) && !isDatabaseUnavailable(error)) throw error;
      request.log.warn({ fileId: file.id, error: (error as Error).message }, 'a view or download could not be counted; the file is served');
    }
  };
  // A file's bytes never change after upload, so its ID is as strong a validator as its digest.
  const etag = `"${file.sha256 ?? file.id}"`;
  // ...and the upload time is when they were last modified, to the second an HTTP date can say.
  const lastModified = new Date(file.createdAt).toUTCString();
  const active = isActiveContent(file.mimeType);
  reply
    .header('ETag', etag)
    .header('Last-Modified', lastModified)
    .header('Accept-Ranges', 'bytes')
    .header('X-Content-Type-Options', 'nosniff')
    // Even if a browser were to render the bytes, they get no script and no access to this origin.
    .header('Content-Security-Policy', bytesPolicy(file.mimeType))
    .header('Cache-Control', file.visibility === 'PUBLIC' && file.passwordHash === null ? publicCaching(file, 300) : 'private, no-store')
    .header('Content-Disposition', contentDisposition(active ? 'attachment' : disposition, file.name))
    .type(servedContentType(file.mimeType));

  // The preconditions in the order of RFC 9110 §13.2.2: If-Match, If-Unmodified-Since, then the
  // revalidations, then If-Range. A client that asks for these bytes only (a resumer, a sync tool)
  // gets no others and is not counted.
  const failed = failedPrecondition(request, etag, lastModified);
  if (failed) return sendError(request, dropFileHeaders(reply), 412, failed);
  if (notModified(request, etag, lastModified)) {
    await counted();
    return reply.code(304).send();
  }

  // A range applies only while If-Range (when sent) still names these bytes; else the whole file.
  const range = rangeStillValid(request, etag) ? parseRange(request.headers.range, file.size) : null;
  if (range === 'unsatisfiable') {
    // No bytes of the file: none of its naming or caching headers, which would let a cache keep the 416 for it.
    // In the route's error shape: the raw route's `Error`, the download's `ApiError` (contract §3).
    return sendError(request, dropFileHeaders(reply).header('Content-Range', `bytes */${file.size}`), 416, 'The requested range is outside the file');
  }
  const object = await openStored(ctx, file.id, file.storageKey, 'File not found', range ?? undefined, file.size);
  // Counted once the bytes can be sent: a record without bytes, or bytes of another size, is no view.
  // Of the ranges, the one from the first byte, unless it is a player's probe of at most two bytes
  // (Apple's players ask for `bytes=0-1`, then for the file from its start: one playing, one view).
  if (range === null || (range.start === 0 && (range.end >= PROBE_BYTES || range.end === file.size - 1))) {
    try {
      await counted();
    } catch (error) {
      object.stream.destroy();
      throw error;
    }
  }
  if (range) {
    reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`).header('Content-Length', String(range.end - range.start + 1));
  } else {
    reply.header('Content-Length', String(file.size));
  }
  return reply.send(object.stream);
}

/**
 * The policy of a file's bytes opened in a browser. `sandbox` gives the document an opaque origin,
 * and Chromium then asks for the bytes of the player it builds around a sound or a video as a
 * cross-origin request, which this answer does not allow: opened at its raw address (the share
 * page's Open raw, the app's Open in a new tab), in a frame (`twitter:player`), the player stayed
 * empty. A document that is only a player runs no script of the file's, so those types go without
 * it; everything else, HTML and SVG above all, keeps it.
 */
function bytesPolicy(mimeType: string): string {
  // Not a type a browser reads as a document of its own (`audio/…+xml`), which stays active content.
  const playable = /^(audio|video)\//i.test(mimeType) && !isActiveContent(mimeType);
  return `default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'${playable ? '' : '; sandbox'}`;
}

/**
 * The stored bytes a record names; their absence is logged (a record without bytes) and answered 404.
 * With `size` (the record's), bytes of another size are the server's fault, answered 500 at once:
 * sent under the record's Content-Length, a shorter object left the client waiting for the rest
 * until the connection's keep-alive ran out.
 */
async function openStored(ctx: AppContext, fileId: string, storageKey: string, missing: string, range?: ByteRange, size?: number): Promise<StoredObject> {
  const differs = () => {
    ctx.log.error({ fileId, storageKey, recorded: size }, 'stored bytes of another size than the record');
    return new Error('The stored bytes differ in size from the record');
  };
  let object: StoredObject;
  try {
    object = await ctx.storage.get(storageKey, range);
  } catch (error) {
    if (error instanceof StorageNotFoundError) {
      ctx.log.error({ fileId, storageKey }, 'file record without bytes');
      throw notFound(missing);
    }
    // The range was checked against the record's size before: only shorter bytes can refuse it.
    if (size !== undefined && error instanceof RangeError) throw differs();
    throw error;
  }
  if (size !== undefined && object.size !== size) {
    object.stream.destroy();
    throw differs();
  }
  return object;
}

/** The file whose bytes this request may have: 404 when hidden or missing, 403 while locked. */
function openableFile(found: { file: FileRow } | null, request: FastifyRequest): FileRow {
  const access = found ? accessTo(found.file, viewerOf(request)) : 'hidden';
  if (!found || access === 'hidden') throw notFound('File not found');
  if (access === 'locked') throw forbidden('This file is protected by a password; unlock it first');
  return found.file;
}

/**
 * A named token or the legacy credential never opens a file that is not open to anyone (private,
 * expired or password-protected): private downloads are outside named-token access, so such a
 * request gets the generic 401 rather than a 404 (contract §10, "Private file bytes and named tokens").
 */
function refuseBearerUnlessPublic(request: FastifyRequest, file: FileRow): void {
  if (request.headers.authorization !== undefined && accessTo(file, { userId: null, cookies: {} }) !== 'open') throw unauthorized();
}

/** What sendBytes answers: the bytes, the range asked for, or a revalidation's 304. */
function byteResponses(whole: string) {
  return {
    200: bytes(whole),
    206: bytes('The byte range asked for with `Range` (one range), with `Content-Range`'),
    304: noBody("Not modified: `If-None-Match` names the file's ETag, or without it `If-Modified-Since` is not before the upload"),
  };
}

/**
 * A file's thumbnail (contract §10): a public file's (no password, not expired) to anyone, any other
 * file's to its owner's browser session only; 404 while there is none.
 */
async function sendThumbnail(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, file: FileRow): Promise<FastifyReply> {
  refuseBearerUnlessPublic(request, file);
  const everyone = accessTo(file, { userId: null, cookies: {} }) === 'open';
  const owner = file.userId === viewerOf(request).userId && request.headers.authorization === undefined;
  if (!everyone && !owner) throw notFound('File not found');
  if (file.thumbnailStatus !== 'done' || file.thumbnailKey === null) throw notFound('This file has no thumbnail');
  const etag = `"${thumbnailVersion(file.thumbnailKey)}"`;
  reply
    .header('ETag', etag)
    .header('X-Content-Type-Options', 'nosniff')
    // The listing's thumbnailUrl carries the version (`?v=`): a remade thumbnail has another URL, so
    // browsers may keep one long. Shared caches get a day, so a file made private stops being shown soon.
    .header('Cache-Control', everyone ? publicCaching(file, 86400) : 'private, max-age=31536000, immutable')
    .type('image/webp');
  if (notModified(request, etag)) return reply.code(304).send();
  const object = await openStored(ctx, file.id, file.thumbnailKey, 'This file has no thumbnail');
  return reply.header('Content-Length', String(object.size)).send(object.stream);
}

export const fileServingRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['files'];
  app.addHook('onSend', headNotModifiedWithoutLength);

  async function sendRaw(request: FastifyRequest, reply: FastifyReply, found: { file: FileRow } | null) {
    const file = openableFile(found, request);
    return sendBytes(ctx, request, reply, file, 'inline', (id) => countView(ctx.db, ctx.dialect, id));
  }

  app.get(
    '/api/files/:urlId/:name',
    {
      schema: {
        tags,
        operationId: 'getFileBytes',
        summary: 'Raw bytes of a file (public, unlocked, or your own); counts a view',
        params: z.object({ urlId: pathText, name: pathText }),
        response: byteResponses("The file's bytes with its stored Content-Type; types a browser would run (HTML, SVG, XML) come as an attachment"),
      },
    },
    async (request, reply) => sendRaw(request, reply, await findByUrlPath(ctx.db, request.params.urlId, request.params.name)),
  );

  /**
   * `/api/files/<segment>/<word>` is also the raw URL of a file named `<word>` when `<segment>` is an
   * account's URL ID: when no file has that ID, such a request gets that file's raw bytes. (File IDs
   * and URL IDs differ in length, so one segment never names both.)
   */
  async function byIdOrRawNamed(request: FastifyRequest, reply: FastifyReply, id: string, word: string, serve: (found: { file: FileRow }) => Promise<FastifyReply>) {
    const found = await findById(ctx.db, id);
    if (found) return serve(found);
    const raw = await findByUrlPath(ctx.db, id, word);
    // A bearer credential gets the generic 401 for every file that is not public, one that does not
    // exist included: a 404 there would tell a token which file IDs exist.
    if (request.headers.authorization !== undefined && (!raw || accessTo(raw.file, { userId: null, cookies: {} }) !== 'open')) throw unauthorized();
    return sendRaw(request, reply, raw);
  }

  app.get(
    '/api/files/:id/download',
    {
      schema: {
        tags,
        operationId: 'downloadFile',
        summary: 'Download a file as an attachment; counts a download',
        params: z.object({ id: pathText }),
        response: byteResponses("The file's bytes, `Content-Disposition: attachment`"),
      },
    },
    (request, reply) =>
      byIdOrRawNamed(request, reply, request.params.id, 'download', async (found) => {
        refuseBearerUnlessPublic(request, found.file);
        const file = openableFile(found, request);
        return sendBytes(ctx, request, reply, file, 'attachment', (id) => countDownload(ctx.db, ctx.dialect, id));
      }),
  );

  app.get(
    '/api/files/:id/preview',
    {
      schema: {
        tags,
        operationId: 'previewFile',
        summary: 'Your own file, inline, for previews in the web app (browser session only); counts no view',
        params: z.object({ id: pathText }),
        response: byteResponses("The file's bytes, inline unless a browser would run them"),
      },
    },
    (request, reply) =>
      byIdOrRawNamed(request, reply, request.params.id, 'preview', async ({ file }) => {
        // Only the owner, signed in in this browser: previews are how the owner looks through their
        // files, which is not what the view count counts. A bearer credential is never that session,
        // and is refused like on a private download (contract §10).
        if (request.headers.authorization !== undefined) throw unauthorized();
        if (file.userId !== viewerOf(request).userId) throw notFound('File not found');
        return sendBytes(ctx, request, reply, file, 'inline');
      }),
  );

  app.get(
    '/api/files/:id/thumbnail',
    {
      schema: {
        tags,
        operationId: 'getThumbnail',
        summary: "A file's thumbnail: WebP, longest side at most 512 px, no metadata (public files to anyone, others to their owner)",
        params: z.object({ id: pathText }),
        querystring: z.object({ v: z.string().max(64).optional().describe('The version the listing puts in `thumbnailUrl`; any value gives the current thumbnail') }),
        response: {
          200: bytes('The thumbnail', 'image/webp'),
          304: noBody("Not modified: `If-None-Match` names the thumbnail's ETag"),
        },
      },
    },
    (request, reply) => byIdOrRawNamed(request, reply, request.params.id, 'thumbnail', ({ file }) => sendThumbnail(ctx, request, reply, file)),
  );

  app.get(
    '/api/files/:id/ocr',
    {
      schema: {
        tags,
        operationId: 'getRecognisedText',
        summary: "The text recognised in your own image (browser session only)",
        params: z.object({ id: pathText }),
        response: { 200: fileOcrResponse },
      },
    },
    (request, reply) =>
      byIdOrRawNamed(request, reply, request.params.id, 'ocr', async ({ file }) => {
        // Text is the owner's alone: tokens never read it (contract §10), other people never learn the file exists.
        if (request.headers.authorization !== undefined) throw unauthorized();
        if (file.userId !== viewerOf(request).userId) throw notFound('File not found');
        return reply.send(ok({ status: file.ocrStatus, text: file.ocrStatus === 'done' ? (file.ocrText ?? '') : null }));
      }),
  );
};
