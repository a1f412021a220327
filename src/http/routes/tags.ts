import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams } from '../schemas.ts';
import { noBody, ok } from '../responses.ts';
import { tagListResponse, tagResponse } from '../../api/tags.ts';
import { createTag, deleteTag, listTags, renameTag, tagNameSchema } from '../../organisation/tags.ts';

const tagBody = z.strictObject({ name: tagNameSchema });

/** Tags (contract §3). Management is browser-session only; the listing also answers uploaders. */
export const tagRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['tags'];
  app.get('/api/tags', { schema: { tags, operationId: 'listTags', summary: "The account's tags, sorted by name", response: { 200: tagListResponse } } }, async (request) => ok({ tags: await listTags(ctx.db, principalOf(request).user.id) }));

  app.get(
    '/api/files/tags',
    { schema: { tags, operationId: 'listFileTags', summary: "The account's tags, sorted by name; accepts a browser session or the legacy upload credential", response: { 200: tagListResponse } } },
    async (request) => ok({ tags: await listTags(ctx.db, principalOf(request).user.id) }),
  );

  app.post('/api/tags', { schema: { tags, operationId: 'createTag', summary: 'Create a tag; names are unique per account, ignoring case', body: tagBody, response: { 201: tagResponse } } }, async (request, reply) => {
    const tag = await createTag(ctx.db, ctx.dialect, principalOf(request).user.id, request.body.name);
    return reply.code(201).send(ok({ tag }));
  });

  app.patch('/api/tags/:id', { schema: { tags, operationId: 'renameTag', summary: 'Rename a tag', params: idParams, body: tagBody, response: { 200: tagResponse } } }, async (request) => ok({ tag: await renameTag(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id, request.body.name) }));

  app.delete(
    '/api/tags/:id',
    { schema: { tags, operationId: 'deleteTag', summary: 'Delete a tag: it comes off every file, profile and the upload defaults', params: idParams, response: { 204: noBody('Deleted') } } },
    async (request, reply) => {
      await deleteTag(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id);
      return reply.code(204).send();
    },
  );
};
