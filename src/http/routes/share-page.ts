import { z } from 'zod';
import { buffer } from 'node:stream/consumers';
import type { RouteModule } from '../route-module.ts';
import { accessTo, findByUrlPath, type FileRow } from '../../files/file-access.ts';
import { StorageNotFoundError } from '../../storage/storage.ts';
import { thumbnailUrl } from '../../media/media-kinds.ts';
import { mayBeArchive, previewKind, renderNotFoundPage, renderSharePage, sharePagePolicy, unlockMessageOf } from '../../files/share-page.ts';
import { NotAnArchiveError, readManifest, type ArchiveManifest } from '../../archives/reader.ts';
import { abortableReads, ArchiveReadAborted } from '../../archives/abortable-reads.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { viewerOf } from '../viewer.ts';
import { html } from '../responses.ts';
import { sharePageHeaders } from '../share-page-headers.ts';
import { publicCaching } from '../public-caching.ts';
import { pathText } from '../schemas.ts';

const TEXT_PREVIEW_BYTES = 64 * 1024;
/**
 * An archive's tree on its share page (contract §9) lists at most this many entries (the counts
 * cover all), and is given up when its manifest is not read within this time: the page of a
 * 10,000-entry ZIP or of a large tar.gz still comes quickly, and the full manifest is the API's.
 */
const SHARE_PAGE_ENTRIES = 1000;
const SHARE_PAGE_MANIFEST_MS = 2000;

/**
 * A text file's encoding by its byte-order mark: UTF-16 as Windows writes it (PowerShell 5's `>`,
 * Notepad's "Unicode") was previewed as UTF-8, its letters between NUL bytes. Without one, UTF-8;
 * null for UTF-32.
 */
function textEncodingOf(bytes: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | null {
  // UTF-32, whose byte-order marks begin as UTF-16's do, is no encoding a browser's decoder reads:
  // no preview, rather than letters between NUL bytes.
  if ((bytes[0] === 0xff && bytes[1] === 0xfe && bytes[2] === 0 && bytes[3] === 0) || (bytes[0] === 0 && bytes[1] === 0 && bytes[2] === 0xfe && bytes[3] === 0xff)) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

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
      const bytes = await buffer(object.stream);
      const encoding = textEncodingOf(bytes);
      if (encoding === null) return { textPreview: null };
      const decoder = new TextDecoder(encoding);
      if (file.size <= TEXT_PREVIEW_BYTES) return { textPreview: decoder.decode(bytes) };
      // Cut short: not in the middle of a character (the decoder keeps an unfinished one back), and said so.
      return { textPreview: `${decoder.decode(bytes, { stream: true })}\n…` };
    } catch (error) {
      if (error instanceof StorageNotFoundError) return null;
      throw error;
    }
  }
  /**
   * An open archive's manifest for its page; null: not an archive, or unreadable; `later`: too slow,
   * or every slot of archive capacity busy — reading it is archive work like the archive routes', so
   * it takes a slot, but the page never waits for one (it is shown without the tree instead, and
   * not kept by caches, so the next visit may have it).
   */
  async function archiveManifest(file: FileRow): Promise<ArchiveManifest | null | 'later'> {
    if (!mayBeArchive(file)) return null;
    const release = ctx.archiveCapacity.reserve();
    if (release === null) return 'later';
    const budget = new AbortController();
    const timer = setTimeout(() => budget.abort(), SHARE_PAGE_MANIFEST_MS);
    const reading = readManifest(abortableReads(ctx.storage, budget.signal), file.storageKey, file.size, SHARE_PAGE_ENTRIES);
    // Aborting destroys the reads under way; whatever the reader then throws is already answered.
    reading.catch(() => undefined);
    const givenUp = new Promise<'later'>((resolve) => budget.signal.addEventListener('abort', () => resolve('later'), { once: true }));
    try {
      return await Promise.race([reading, givenUp]);
    } catch (error) {
      if (error instanceof ArchiveReadAborted) return 'later';
      if (!(error instanceof NotAnArchiveError || error instanceof StorageNotFoundError)) {
        ctx.log.warn({ err: error, fileId: file.id }, 'archive manifest for the share page failed');
      }
      return null;
    } finally {
      clearTimeout(timer);
      budget.abort();
      release();
    }
  }

  app.get(
    '/:urlId/:name',
    {
      schema: {
        tags: ['files'],
        operationId: 'getSharePage',
        summary: 'Share page (HTML) of a public file',
        params: z.object({ urlId: pathText, name: pathText }),
        // Set by the password form's answer when it was sent without the page's script (src/http/routes/unlock.ts).
        querystring: z.object({ unlock: z.string().optional().describe('Why the password sent by the form did not open the file: `wrong`, `throttled` or `empty`') }),
        // The 404 is a page for people who followed a link, not an error body.
        response: { 200: html('The share page: a preview, or a password form for a protected file'), 404: html('"File not found" page: private, expired or missing') },
      },
    },
    async (request, reply) => {
      // No account's URL ID is "api" (they are 8 characters): /api/<word> is a route that does not
      // exist, answered as every unknown /api route is, in JSON.
      if (request.params.urlId === 'api') return reply.callNotFound();
      const found = await findByUrlPath(ctx.db, request.params.urlId, request.params.name);
      const access = found ? accessTo(found.file, viewerOf(request)) : 'hidden';
      sharePageHeaders(reply, policy);
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
      // The tree only for an archive this browser may open. A HEAD request reads it too: its answer says
      // what a GET's would (RFC 9110 §9.3.2), its length and its caching, which depend on the tree.
      const manifest = access === 'open' ? await archiveManifest(file) : null;
      // A page whose thumbnail and dimensions are still to come (contract §10) changes in a moment:
      // a chat app that unfurled it without og:image must not get the same page from a cache for
      // a minute, nor must an archive's page before its tree is read.
      const settled = manifest !== 'later' && file.thumbnailStatus !== 'pending';
      const cacheable = file.visibility === 'PUBLIC' && file.passwordHash === null && settled;
      reply.header('Cache-Control', cacheable ? publicCaching(file, 60) : 'private, no-store');
      return reply.send(
        renderSharePage({
          file,
          locked: access === 'locked',
          pageUrl: links.pageUrl,
          rawUrl: links.rawUrl,
          downloadUrl: links.downloadUrl,
          unlockUrl: `${ctx.config.baseUrl}/api/files/${file.id}/unlock`,
          unlockError: access === 'locked' ? unlockMessageOf(request.query.unlock) : undefined,
          textPreview,
          thumbnailUrl: thumbnailUrl(ctx.config.baseUrl, file),
          archive: manifest === 'later' || manifest === null ? null : {
            manifest,
            entryUrl: `${ctx.config.baseUrl}/api/share/${encodeURIComponent(found.urlId)}/${encodeURIComponent(file.name)}/archive/entry`,
          },
        }),
      );
    },
  );
};
