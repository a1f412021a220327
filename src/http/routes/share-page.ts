import { z } from 'zod';
import { text } from 'node:stream/consumers';
import type { RouteModule } from '../app.ts';
import { accessTo, findByUrlPath } from '../../files/file-access.ts';
import { previewKind, renderNotFoundPage, renderSharePage, sharePagePolicy } from '../../files/share-page.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { viewerOf } from './file-serving.ts';

const TEXT_PREVIEW_BYTES = 64 * 1024;

export const sharePageRoutes: RouteModule = (app, ctx) => {
  const policy = sharePagePolicy(ctx.config.baseUrl);
  app.get(
    '/:urlId/:name',
    { schema: { tags: ['files'], summary: 'Share page (HTML) of a public file', params: z.object({ urlId: z.string().max(64), name: z.string().max(512) }) } },
    async (request, reply) => {
      const found = await findByUrlPath(ctx.db, request.params.urlId, request.params.name);
      const access = found ? accessTo(found.file, viewerOf(request)) : 'hidden';
      reply
        .type('text/html; charset=utf-8')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Referrer-Policy', 'same-origin')
        .header('Content-Security-Policy', policy)
        // For browsers without CSP frame-ancestors.
        .header('X-Frame-Options', 'DENY');
      if (!found || access === 'hidden') return reply.code(404).header('Cache-Control', 'no-store').send(renderNotFoundPage());
      const { file } = found;
      const links = uploadLinks(ctx.config.baseUrl, found.urlId, file);
      let textPreview: string | null = null;
      if (access === 'open' && previewKind(file.mimeType) === 'text' && file.size > 0) {
        const object = await ctx.storage.get(file.storageKey, { start: 0, end: Math.min(file.size, TEXT_PREVIEW_BYTES) - 1 });
        textPreview = await text(object.stream);
      }
      reply.header('Cache-Control', file.visibility === 'PUBLIC' && file.passwordHash === null ? 'public, max-age=60' : 'private, no-store');
      return reply.send(
        renderSharePage({
          file,
          locked: access === 'locked',
          pageUrl: links.pageUrl,
          rawUrl: links.rawUrl,
          downloadUrl: links.downloadUrl,
          unlockUrl: `${ctx.config.baseUrl}/api/files/${file.id}/unlock`,
          textPreview,
        }),
      );
    },
  );
};
