import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams } from '../schemas.ts';
import { noBody, ok } from '../responses.ts';
import { shortLinkListResponse, shortLinkResponse } from '../../api/links.ts';
import { createShortLink, deleteShortLink, listShortLinks, shortLinkLimits } from '../../links/short-links.ts';

const createBody = z.strictObject({
  // The length is checked by createShortLink(), whose 400 says it; the document states it too.
  url: z.string({ error: 'required: the http:// or https:// URL to shorten, as a string' }).meta({ maxLength: shortLinkLimits.targetUrlLength }),
});

/** The short-link routes of the named-token API (spec, GET/POST/DELETE /api/urls). */
export const urlRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['short links'];
  app.get('/api/urls', { schema: { tags, operationId: 'listShortLinks', summary: "The account's short links, newest first", response: { 200: shortLinkListResponse } } }, async (request) =>
    ok({ urls: await listShortLinks(ctx.db, principalOf(request).user.id) }),
  );

  app.post(
    '/api/urls',
    { schema: { tags, operationId: 'createShortLink', summary: 'Create a short link with a new random six-character code', body: createBody, response: { 200: shortLinkResponse } } },
    async (request) => ok(await createShortLink(ctx.db, principalOf(request).user.id, request.body.url)),
  );

  app.delete(
    '/api/urls/:id',
    { schema: { tags, operationId: 'deleteShortLink', summary: 'Delete one of your short links (by record ID, not short code)', params: idParams, response: { 204: noBody('Deleted') } } },
    async (request, reply) => {
      await deleteShortLink(ctx.db, principalOf(request).user.id, request.params.id);
      return reply.code(204).send();
    },
  );
};
