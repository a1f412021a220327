import { z } from 'zod';
import type { Readable } from 'node:stream';
import { principalOf, type App, type RouteModule } from '../route-module.ts';
import { invalid } from '../../errors.ts';
import { MIME_TYPE_MAX_LENGTH } from '../../api/vocabulary.ts';
import { chunkLimits, UPLOAD_ID_PATTERN } from '../../shared/chunk-limits.ts';
import { planUpload } from '../../uploads/upload-plan.ts';
import { requestOptionsShape, toRequestOptions } from '../../uploads/option-fields.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { cancelChunkedUpload, checkUploadId, completeChunkedUpload, parsePartNumber, partUrl, putPart, startChunkedUpload, type CompletionRequest } from '../../chunks/chunked-upload.ts';
import { completionQuery, selectorHeaders, selectorQuery, selectorsOf } from '../upload-selectors.ts';
import { discardRestOfBody } from '../request-body.ts';
import { noBody } from '../responses.ts';
import { fileNameText, onceQueryText } from '../schemas.ts';
import { chunkSessionResponse, partResponse, partUrlQueryResponse, partUrlResponse, uploadLinksSchema, wrappedUploadLinksResponse } from '../../api/uploads.ts';

const initBody = z.strictObject({
  filename: fileNameText(1024),
  mimeType: z.string().min(1).max(MIME_TYPE_MAX_LENGTH).optional(),
  size: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  ...requestOptionsShape,
  // Retired; accepted and ignored (spec).
  copyFormat: z.unknown().optional(),
});

// A part entry may carry more than these two fields, as the S3 SDKs' CompletedPart does (its
// checksums): they are ignored, since a part is known by its ETag (docs/decisions.md, "A failed completion").
const partEntry = z.object({ PartNumber: z.number().int(), ETag: z.string().min(1).max(200) });
// Strict, as the start's body is: a field completion cannot act on (a new name, an expiry) is a 400,
// not silently ignored ("Profile, folder and naming cannot change", spec).
const completionFields = {
  parts: z.array(partEntry).max(10_000),
  visibility: z.enum(['PUBLIC', 'PRIVATE']).optional(),
  password: z.string().max(1024).optional(),
};
// The document gives each path parameter's form, for clients generated from it; the values are
// checked by checkUploadId() and parsePartNumber(), whose 400s name them.
const uploadIdForm = { pattern: UPLOAD_ID_PATTERN.source };
const partNumberForm = { pattern: '^[1-9][0-9]*$', description: `1 to ${chunkLimits.maxPartNumber}` };
const partParams = z.object({ uploadId: z.string().meta(uploadIdForm), partNumber: z.string().meta(partNumberForm) });
/** Optional: the part's exact size in bytes, signed into a presigned URL (src/chunks/chunked-upload.ts, partUrl). */
const partSize = z
  .string()
  .regex(/^\d{1,16}$/, 'must be a whole number of bytes')
  .transform(Number)
  .optional();

/** A query parameter that must be given, once. */
const requiredOnce = onceQueryText();

export const chunkUploadRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['chunked uploads'];

  app.post('/api/files/chunks', { schema: { tags, operationId: 'startChunkedUpload', summary: 'Start a chunked upload', querystring: selectorQuery, documentedHeaders: selectorHeaders, body: initBody, response: { 200: chunkSessionResponse } } }, async (request) => {
    const principal = principalOf(request);
    const plan = await planUpload(ctx.db, principal, selectorsOf(request));
    const { filename, mimeType, size, copyFormat: _ignored, ...options } = request.body;
    const data = await startChunkedUpload(ctx, principal, plan, { filename, mimeType, size, options: toRequestOptions(options) });
    return { data };
  });

  app.get(
    '/api/files/chunks',
    { schema: { tags, operationId: 'getPartUrlByQuery', summary: 'Part upload URL (query form)', querystring: z.object({ uploadId: requiredOnce.meta(uploadIdForm), partNumber: requiredOnce.meta(partNumberForm), size: partSize }), response: { 200: partUrlQueryResponse } } },
    async (request) => {
      const url = await partUrl(ctx, principalOf(request), checkUploadId(request.query.uploadId), parsePartNumber(request.query.partNumber), request.query.size);
      return { url, presignedUrl: url };
    },
  );

  app.get('/api/files/chunks/:uploadId/part/:partNumber', { schema: { tags, operationId: 'getPartUrl', summary: 'Part upload URL', params: partParams, querystring: z.object({ size: partSize }), response: { 200: partUrlResponse } } }, async (request) => {
    const url = await partUrl(ctx, principalOf(request), checkUploadId(request.params.uploadId), parsePartNumber(request.params.partNumber), request.query.size);
    return { data: { url } };
  });

  // Part bodies are raw bytes, streamed to storage as they arrive; never parsed or buffered here.
  // The parser is this route's alone (its own encapsulated scope): any other route answers such a
  // body with a 400 naming the type to send.
  await app.register(async (rawBody: App) => {
    rawBody.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
    rawBody.put(
      '/api/files/chunks/:uploadId/part/:partNumber',
      {
        schema: {
          tags,
          operationId: 'uploadPart',
          summary: 'Upload one part (raw application/octet-stream, at most 64 MiB)',
          params: partParams,
          consumes: ['application/octet-stream'],
          documentedBody: z.string().meta({ format: 'binary' }).describe("The part's bytes"),
          response: { 200: partResponse },
        },
      },
      async (request) => {
        const uploadId = checkUploadId(request.params.uploadId);
        const partNumber = parsePartNumber(request.params.partNumber);
        const body = request.body as Readable | undefined;
        if (!body || typeof (body as Readable).pipe !== 'function') throw invalid('Send the part as a raw application/octet-stream body');
        const length = request.headers['content-length'];
        try {
          const etag = await putPart(ctx, principalOf(request), uploadId, partNumber, body, length === undefined ? undefined : Number(length));
          return { data: { etag } };
        } catch (error) {
          discardRestOfBody(request.raw);
          throw error;
        }
      },
    );
  });

  app.post(
    '/api/files/chunks/:uploadId/complete',
    {
      schema: {
        tags,
        operationId: 'completeChunkedUpload',
        summary: 'Complete a chunked upload (upload links, unwrapped)',
        params: z.object({ uploadId: z.string() }),
        querystring: completionQuery,
        // The wrapped route's body is taken here too, its uploadId the path's.
        body: z.strictObject({ ...completionFields, uploadId: z.string().optional() }),
        response: { 200: uploadLinksSchema },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const { uploadId, ...completion } = request.body;
      if (uploadId !== undefined && uploadId !== request.params.uploadId) throw invalid('body.uploadId: names another upload than the path');
      const file = await completeChunkedUpload(ctx, principal, checkUploadId(request.params.uploadId), completion as CompletionRequest);
      return uploadLinks(ctx.config.baseUrl, principal.user.urlId, file);
    },
  );

  app.delete(
    '/api/files/chunks/:uploadId',
    {
      schema: {
        tags,
        operationId: 'cancelChunkedUpload',
        summary: 'Cancel a chunked upload: its parts are removed and its size no longer counts against the quota',
        params: z.object({ uploadId: z.string().meta(uploadIdForm) }),
        response: { 204: noBody('Cancelled') },
      },
    },
    async (request, reply) => {
      await cancelChunkedUpload(ctx, principalOf(request), request.params.uploadId);
      return reply.code(204).send();
    },
  );

  app.put(
    '/api/files/chunks',
    { schema: { tags, operationId: 'completeChunkedUploadByBody', summary: 'Complete a chunked upload ({data: upload links})', querystring: completionQuery, body: z.strictObject({ uploadId: z.string(), ...completionFields }), response: { 200: wrappedUploadLinksResponse } } },
    async (request) => {
      const principal = principalOf(request);
      const { uploadId, ...completion } = request.body;
      const file = await completeChunkedUpload(ctx, principal, checkUploadId(uploadId), completion as CompletionRequest);
      return { data: uploadLinks(ctx.config.baseUrl, principal.user.urlId, file) };
    },
  );
};
