import { z } from 'zod';
import type { RouteModule } from '../route-module.ts';
import { resolveShortCode } from '../../links/short-links.ts';
import { html, redirect } from '../responses.ts';
import { isUnfurler } from '../unfurlers.ts';
import { sharePageHeaders } from '../share-page-headers.ts';
import { renderNotFoundPage, sharePagePolicy } from '../../files/share-page.ts';


/** The public address of a short link, `{base_url}/u/<shortCode>` (contract §6). */
export const shortLinkRedirectRoutes: RouteModule = async (app, { ctx }) => {
  const policy = sharePagePolicy(ctx.config.baseUrl);
  app.get(
    '/u/:shortCode',
    {
      schema: {
        tags: ['short links'],
        operationId: 'followShortLink',
        summary: 'Public redirect: 302 to the target URL, counting one click; an HTML 404 page when unknown',
        params: z.object({ shortCode: z.string() }),
        // The 404 is a page for people who followed a link, not an error body.
        response: { 302: redirect('To the target URL (Location)'), 404: html('"Link not found" page') },
      },
    },
    async (request, reply) => {
      // HEAD (link checkers), and a chat app or crawler previewing the link, resolve it without counting a click.
      const target = await resolveShortCode(ctx.db, request.params.shortCode, { count: request.method !== 'HEAD' && !isUnfurler(request.headers['user-agent']) });
      reply.header('Cache-Control', 'no-store');
      if (target === undefined) {
        // The share page's look and headers: no framing, no sniffing, nothing but its style.
        sharePageHeaders(reply, policy);
        return reply.code(404).send(renderNotFoundPage('Link not found', 'This short link does not exist or has been deleted.'));
      }
      return reply.code(302).header('Location', target).send();
    },
  );
};
