import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { invalid } from '../../errors.ts';
import { pickSelector, planUpload } from '../../uploads/upload-plan.ts';
import { receiveSingleUpload } from '../../uploads/single-upload.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { discardRestOfBody, multipartBoundaryProblem, multipartMistake } from '../request-body.ts';

/** Selectors may also come as query parameters; other parameters are ignored (uploader tools add their own). */
export const selectorQuery = z.object({ profileId: z.string().max(128).optional(), folderId: z.string().max(128).optional() });

export function selectorsOf(request: { headers: Record<string, string | string[] | undefined>; query: z.infer<typeof selectorQuery> }) {
  return {
    profile: pickSelector('X-Upload-Profile', request.headers['x-upload-profile'], request.query.profileId),
    folder: pickSelector('X-Upload-Folder', request.headers['x-upload-folder'], request.query.folderId),
  };
}

export const fileUploadRoutes: RouteModule = (app, ctx) => {
  app.post(
    '/api/files',
    {
      schema: {
        tags: ['files'],
        summary: 'Upload one file (multipart/form-data, part "file"), streamed to storage',
        description:
          'Optional text fields: visibility, password, expiration, expiresAt, expiryAction, randomizeFileUrls, shareStyle, tagIds (JSON array). Selectors: X-Upload-Profile / profileId, X-Upload-Folder / folderId (an ID or "none").',
        querystring: selectorQuery,
        consumes: ['multipart/form-data'],
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
        file = await receiveSingleUpload(ctx, principal, plan, request.parts());
      } catch (error) {
        discardRestOfBody(request.raw);
        // The upload code has removed whatever it stored; the parser's error is the client's mistake.
        throw multipartMistake(error) ?? error;
      }
      return { success: true, data: uploadLinks(ctx.config.baseUrl, principal.user.urlId, file) };
    },
  );
};
