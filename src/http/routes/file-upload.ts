import { z } from 'zod';
import { requestOptionsShape } from '../../uploads/option-fields.ts';
import multipart from '@fastify/multipart';
import { principalOf, type RouteModule } from '../route-module.ts';
import { invalid } from '../../errors.ts';
import { planUpload } from '../../uploads/upload-plan.ts';
import { receiveSingleUpload, UPLOAD_FORM_LIMITS } from '../../uploads/single-upload.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { discardRestOfBody, multipartBoundaryProblem, multipartMistake } from '../request-body.ts';
import { selectorHeaders, selectorQuery, selectorsOf } from '../upload-selectors.ts';
import { ok } from '../responses.ts';
import { uploadResponse } from '../../api/uploads.ts';

/** The form POST /api/files reads (contract §4), for the OpenAPI document: every value is text. */
const uploadForm = z.object({
  file: z.string().meta({ format: 'binary' }).describe('The file: exactly one part named "file"; its Content-Type is the declared type'),
  visibility: requestOptionsShape.visibility,
  password: requestOptionsShape.password,
  expiration: requestOptionsShape.expiration,
  expiresAt: z.string().optional().describe('ISO 8601 with an offset; empty or "null" for no expiry'),
  expiryAction: requestOptionsShape.expiryAction,
  randomizeFileUrls: z.enum(['true', 'false']).optional(),
  shareStyle: requestOptionsShape.shareStyle,
  tagIds: z.string().optional().describe('A JSON array of owned tag IDs, as text'),
});

export const fileUploadRoutes: RouteModule = async (app, { ctx }) => {
  // The form parser is this route's alone (other routes answer a form with a 400 naming the type to send). The file size is
  // enforced by the upload code while streaming to storage, against the instance setting and the
  // quota; busboy only bounds the form's shape.
  // `preservePath`: the name arrives whole and is cut to its last segment by the naming rules
  // (src/shared/naming.ts), after RFC 2047 encoded words are decoded; the parser's own cut at "/"
  // split the base64 of most Cyrillic names.
  await app.register(multipart, { preservePath: true, limits: { fileSize: Number.MAX_SAFE_INTEGER, ...UPLOAD_FORM_LIMITS } });

  app.post(
    '/api/files',
    {
      schema: {
        tags: ['files'],
        operationId: 'uploadFile',
        summary: 'Upload one file (multipart/form-data, part "file"), streamed to storage',
        querystring: selectorQuery,
        documentedHeaders: selectorHeaders,
        documentedBody: uploadForm,
        consumes: ['multipart/form-data'],
        response: { 200: uploadResponse },
      },
    },
    async (request) => {
      if (!request.isMultipart()) throw invalid('Send the file as multipart/form-data with one part named "file"');
      const boundaryProblem = multipartBoundaryProblem(request.headers['content-type']);
      if (boundaryProblem) throw invalid(boundaryProblem);
      const principal = principalOf(request);
      const plan = await planUpload(ctx.db, principal, selectorsOf(request));
      let file;
      try {
        const length = request.headers['content-length'];
        file = await receiveSingleUpload(ctx, principal, plan, request.parts(), length !== undefined && /^\d+$/.test(length) ? Number(length) : null);
      } catch (error) {
        discardRestOfBody(request.raw);
        // The upload code has removed whatever it stored; the parser's error is the client's mistake.
        throw multipartMistake(error) ?? error;
      }
      return ok(uploadLinks(ctx.config.baseUrl, principal.user.urlId, file));
    },
  );
};
