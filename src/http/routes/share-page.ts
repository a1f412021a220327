import { z } from 'zod';
import { text } from 'node:stream/consumers';
import type { RouteModule } from '../route-module.ts';
import { accessTo, findByUrlPath, type FileRow } from '../../files/file-access.ts';
import { StorageNotFoundError } from '../../storage/storage.ts';
import { previewKind, renderNotFoundPage, renderSharePage, sharePagePolicy } from '../../files/share-page.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { viewerOf } from '../viewer.ts';
import { html } from '../responses.ts';

const TEXT_PREVIEW_BYTES = 64 * 1024;

export const sharePageRoutes: RouteModule = async (app, { ctx }) => {
  const policy = sharePagePolicy(ctx.config.baseUrl);

  /**
   * Whether the file's bytes are in storage (a file without them has no share page, as its raw URL
   * has none), with the beginning of a text file when it is previewed: then reading it is the check.
   */
  async function storedBytes(file: FileRow, withText: boolean): Promise<{ textPreview: string | null } | null> {
    if (!withText || file.size === 0) return (await ctx.storage.stat(file.storageKey)) ? { textPreview: null } : null;
    try {
      const object = await ctx.storage.get(file.storageKey, { start: 0, end: Math.min(file.size, TEXT_PREVIEW_BYTES) - 1 });
      return { textPreview: await text(object.stream) };
    } catch (error) {
      if (error instanceof StorageNotFoundError) return null;
      throw error;
    }
  }
  app.get(
    '/:urlId/:name',
    {
      schema: {
        tags: ['files'],
        summary: 'Share page (HTML) of a public file',
        params: z.object({ urlId: z.string().max(64), name: z.string().max(512) }),
        // The 404 is a page for people who followed a link, not an error body.
        response: { 200: html('The share page: a preview, or a password form for a protected file'), 404: html('"File not found" page: private, expired or missing') },
      },
    },
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
      const notFoundPage = () => reply.code(404).header('Cache-Control', 'no-store').send(renderNotFoundPage());
      if (!found || access === 'hidden') return notFoundPage();
      const { file } = found;
      const links = uploadLinks(ctx.config.baseUrl, found.urlId, file);
      const bytes = await storedBytes(file, access === 'open' && previewKind(file.mimeType) === 'text');
      if (bytes === null) {
        ctx.log.error({ fileId: file.id, storageKey: file.storageKey }, 'file record without bytes');
        return notFoundPage();
      }
      const { textPreview } = bytes;
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
