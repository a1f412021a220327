import { z } from 'zod';
import type { RouteModule } from '../route-module.ts';
import { accessTo, findById, unlockCookieName, unlockToken } from '../../files/file-access.ts';
import { checkFilePassword } from '../../files/unlock.ts';
import { renderNotFoundPage, sharePagePolicy, type UnlockOutcome } from '../../files/share-page.ts';
import { uploadLinks } from '../../files/file-views.ts';
import { apiErrorSchema } from '../../api/errors.ts';
import { AppError, invalid, notFound } from '../../errors.ts';
import { acceptFormBodies } from '../form-body.ts';
import { sharePageHeaders } from '../share-page-headers.ts';
import { noBody, redirect } from '../responses.ts';
import { pathText } from '../schemas.ts';

/** The password form's body: one field of at most 1,024 characters, percent-encoded. */
const UNLOCK_FORM_LIMIT = 16 * 1024;

/** An answer that is the error body to a script, the share page's password form again to a browser's form. */
const errorOrPage = (description: string) => ({
  description,
  content: { 'application/json': { schema: apiErrorSchema }, 'text/html': { schema: z.string() } },
});

/**
 * Unlocking a password-protected file. The share page's script sends the password as JSON and is
 * answered 204 with the unlock cookie. The page's form works without the script too: a browser
 * without one posts the form here (never a GET, which would put the password in the URL, the
 * browser's history and the access log) and is sent back to the page, opened or saying what was
 * wrong (docs/decisions.md, "The password form without a script").
 */
export const unlockRoutes: RouteModule = async (app, { ctx }) => {
  const policy = sharePagePolicy(ctx.config.baseUrl);
  acceptFormBodies(app, UNLOCK_FORM_LIMIT);

  app.post(
    '/api/files/:id/unlock',
    {
      schema: {
        tags: ['files'],
        operationId: 'unlockFile',
        summary: 'Unlock a password-protected file for this browser (JSON, or the share page\'s form)',
        params: z.object({ id: pathText }),
        // An empty password is answered by the route: a form is sent back to the page saying so
        // (text browsers send the form whatever `required` says), a script gets a 400.
        body: z.strictObject({ password: z.string().max(1024) }),
        // The share page's form posts the same field, urlencoded, and is answered 303.
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: {
          204: noBody('Unlocked: a cookie now opens this one file in this browser'),
          303: redirect("The share page's form was sent: `Location` is the share page, opened, or with `?unlock=wrong|throttled|empty` saying why not"),
          404: errorOrPage('No such protected file (private, expired or missing); to a form, the "File not found" page'),
        },
      },
    },
    async (request, reply) => {
      const fromForm = /^application\/x-www-form-urlencoded\b/i.test(request.headers['content-type'] ?? '');
      const found = await findById(ctx.db, request.params.id);
      if (!found || accessTo(found.file, { userId: null, cookies: {} }) === 'hidden' || found.file.passwordHash === null) {
        // Gone, private or expired since the page was loaded: to a browser's form, the page it would now see.
        if (fromForm) {
          sharePageHeaders(reply, policy);
          return reply.code(404).header('Cache-Control', 'no-store').send(renderNotFoundPage());
        }
        throw notFound('File not found');
      }
      const { file } = found;
      const { pageUrl } = uploadLinks(ctx.config.baseUrl, found.urlId, file);
      // A form is always sent back to the share page (post, then redirect): the address bar shows the
      // page, Back and reload post nothing again, and the page says what went wrong
      // (`?unlock=wrong|throttled|empty`; never the password).
      const back = (outcome?: UnlockOutcome) => reply.code(303).header('Location', outcome ? `${pageUrl}?unlock=${outcome}` : pageUrl).header('Cache-Control', 'no-store').send();
      if (request.body.password === '') {
        if (fromForm) return back('empty');
        throw invalid('body.password: is required');
      }
      try {
        await checkFilePassword(ctx.db, request.ip, file, request.body.password);
      } catch (error) {
        if (!fromForm || !(error instanceof AppError) || (error.kind !== 'forbidden' && error.kind !== 'rate_limited')) throw error;
        return back(error.kind === 'forbidden' ? 'wrong' : 'throttled');
      }
      // Opens this one file in this browser for a week.
      reply.setCookie(unlockCookieName(file.id), unlockToken(file), { httpOnly: true, sameSite: 'lax', secure: ctx.config.baseUrl.startsWith('https:'), path: '/', maxAge: 7 * 24 * 3600 });
      if (fromForm) return back();
      return reply.code(204).send();
    },
  );
};
