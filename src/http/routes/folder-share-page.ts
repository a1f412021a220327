import { z } from 'zod';
import type { RouteModule } from '../route-module.ts';
import { bytes, html } from '../responses.ts';
import { sharePageHeaders } from '../share-page-headers.ts';
import { renderFolderPage, renderNotFoundPage, sharePagePolicy } from '../../files/share-page.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { thumbnailUrl } from '../../media/media-kinds.ts';
import { FOLDER_ZIP_FILES, sharedFolderFiles, sharedFolderPage } from '../../organisation/folder-shares.ts';
import { folderZip } from '../../archives/create.ts';
import { contentDisposition } from '../content-disposition.ts';
import { invalid, notFound } from '../../errors.ts';
import { pathText } from '../schemas.ts';

/** A shared folder's public page, `{base_url}/folder/<shareId>` (docs/decisions.md, "Sharing a folder"). */
export const folderSharePageRoutes: RouteModule = async (app, { ctx }) => {
  const policy = sharePagePolicy(ctx.config.baseUrl);
  app.get(
    '/folder/:shareId',
    {
      schema: {
        tags: ['folders'],
        operationId: 'getSharedFolderPage',
        summary: "A shared folder's page (HTML): its public files, newest first, 60 a page",
        params: z.object({ shareId: pathText }),
        // A page number that is none is the first page, as a link someone cut short should still open.
        querystring: z.object({ page: z.string().optional().describe('The page, from 1; a page past the last is the last') }),
        response: { 200: html('The folder: a grid of its public files, each linking to its share page'), 404: html('"Folder not found" page: not shared, or no such address') },
      },
    },
    async (request, reply) => {
      sharePageHeaders(reply, policy);
      // The list changes with every upload to the folder: asked again each time.
      reply.header('Cache-Control', 'no-store');
      const asked = Number(request.query.page ?? '1');
      const shared = await sharedFolderPage(ctx.db, request.params.shareId, Number.isInteger(asked) ? asked : 1);
      if (!shared) return reply.code(404).send(renderNotFoundPage('Folder not found', 'This folder does not exist or is no longer shared.'));
      const { baseUrl } = ctx.config;
      return reply.send(
        renderFolderPage({
          folderName: shared.folderName,
          pageUrl: `${baseUrl}/folder/${encodeURIComponent(request.params.shareId)}`,
          total: shared.total,
          page: shared.page,
          pageCount: shared.pageCount,
          expiresAt: shared.expiresAt,
          zip: shared.totalBytes === null ? null : { url: `${baseUrl}/folder/${encodeURIComponent(request.params.shareId)}/zip`, bytes: shared.totalBytes },
          files: shared.files.map((file) => ({
            name: file.name,
            mimeType: file.mimeType,
            size: Number(file.size),
            pageUrl: uploadLinks(baseUrl, shared.urlId, file).pageUrl,
            thumbnailUrl: thumbnailUrl(baseUrl, file),
            subfolder: file.subfolder,
          })),
        }),
      );
    },
  );

  app.get(
    '/folder/:shareId/zip',
    {
      schema: {
        tags: ['folders'],
        operationId: 'downloadSharedFolder',
        summary: `A shared folder's listed files as one ZIP (stored, each under its subfolder path), at most ${FOLDER_ZIP_FILES} files; counts no view or download`,
        params: z.object({ shareId: pathText }),
        response: { 200: bytes('The ZIP, `Content-Disposition: attachment`, with its length', 'application/zip') },
      },
    },
    async (request, reply) => {
      const shared = await sharedFolderFiles(ctx.db, request.params.shareId);
      if (shared === null) throw notFound('This folder does not exist or is no longer shared');
      if (shared === 'too many') throw invalid(`This folder lists more than ${FOLDER_ZIP_FILES} files, more than one ZIP holds: download them one by one from its page`);
      if (shared.files.length === 0) throw notFound('Nothing in this folder is shared with anyone yet');
      const zip = await folderZip(ctx, shared.files);
      // The list changes with every upload to the folder: asked again each time.
      return reply
        .type('application/zip')
        .header('Content-Disposition', contentDisposition('attachment', `${shared.folderName}.zip`))
        .header('Content-Length', String(zip.size))
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cache-Control', 'no-store')
        .send(zip.stream);
    },
  );
};
