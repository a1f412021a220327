import { z } from 'zod';
import type { RouteModule } from '../route-module.ts';
import { accessTo, findById, unlockCookieName, unlockToken } from '../../files/file-access.ts';
import { checkFilePassword } from '../../files/unlock.ts';
import { renderSharePage, sharePagePolicy, unlockMessages } from '../../files/share-page.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { thumbnailUrl } from '../../media/media-kinds.ts';
import { errorSchema } from '../../api/errors.ts';
import { AppError, notFound } from '../../errors.ts';
import { acceptFormBodies } from '../form-body.ts';
import { sharePageHeaders } from '../share-page-headers.ts';
import { noBody, redirect } from '../responses.ts';
import { pathText } from '../schemas.ts';

/** The password form's body: one field of at most 1,024 characters, percent-encoded. */
const UNLOCK_FORM_LIMIT = 16 * 1024;

/** An answer that is the error body to a script, the share page's password form again to a browser's form. */
const errorOrPage = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorSchema }, 'text/html': { schema: z.string() } },
});

/**
 * Unlocking a password-protected file. The share page's script sends the password as JSON and is
 * answered 204 with the unlock cookie. The page's form works without the script too: a browser
 * without one posts the form here (never a GET, which would put the password in the URL, the
 * browser's history and the access log) and is sent back to the page, or shown the form again with
 * what was wrong (docs/decisions.md, "The password form without a script").
 */
export const unlockRoutes: RouteModule = async (app, { ctx }) => {
  const policy = sharePagePolicy(ctx.config.baseUrl);
  acceptFormBodies(app, UNLOCK_FORM_LIMIT);

  app.post(
    '/api/files/:id/unlock',
    {
      schema: {
        tags: ['files'],
        summary: 'Unlock a password-protected file for this browser (JSON, or the share page\'s form)',
        params: z.object({ id: pathText }),
        body: z.strictObject({ password: z.string().min(1).max(1024) }),
        response: {
          204: noBody('Unlocked: a cookie now opens this one file in this browser'),
          303: redirect("The share page's form was sent: unlocked, `Location` is the share page"),
          403: errorOrPage('Wrong password; to a form, the password form again saying so'),
          429: errorOrPage('Too many wrong passwords (`Retry-After`); to a form, the password form again saying so'),
        },
      },
    },
    async (request, reply) => {
      const found = await findById(ctx.db, request.params.id);
      if (!found || accessTo(found.file, { userId: null, cookies: {} }) === 'hidden' || found.file.passwordHash === null) throw notFound('File not found');
      const { file } = found;
      const fromForm = /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');
      const links = uploadLinks(ctx.config.baseUrl, found.urlId, file);
      try {
        await checkFilePassword(ctx.db, request.ip, file, request.body.password);
      } catch (error) {
        if (!fromForm || !(error instanceof AppError) || (error.kind !== 'forbidden' && error.kind !== 'rate_limited')) throw error;
        if (error.retryAfter !== undefined) reply.header('Retry-After', String(error.retryAfter));
        sharePageHeaders(reply, policy);
        return reply
          .code(error.kind === 'forbidden' ? 403 : 429)
          .header('Cache-Control', 'no-store')
          .send(
            renderSharePage({
              file,
              locked: true,
              pageUrl: links.pageUrl,
              rawUrl: links.rawUrl,
              downloadUrl: links.downloadUrl,
              unlockUrl: `${ctx.config.baseUrl}/api/files/${file.id}/unlock`,
              unlockError: error.kind === 'forbidden' ? unlockMessages.wrong : unlockMessages.throttled,
              textPreview: null,
              thumbnailUrl: thumbnailUrl(ctx.config.baseUrl, file),
            }),
          );
      }
      // Opens this one file in this browser for a week.
      reply.setCookie(unlockCookieName(file.id), unlockToken(file), { httpOnly: true, sameSite: 'lax', secure: ctx.config.baseUrl.startsWith('https:'), path: '/', maxAge: 7 * 24 * 3600 });
      if (fromForm) return reply.code(303).header('Location', links.pageUrl).header('Cache-Control', 'no-store').send();
      return reply.code(204).send();
    },
  );
};
