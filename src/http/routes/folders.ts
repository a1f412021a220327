import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams } from '../schemas.ts';
import { noBody, ok } from '../responses.ts';
import { folderListResponse, folderResponse } from '../../api/organisation.ts';
import { createFolder, deleteFolder, folderNameSchema, listFolders, updateFolder } from '../../organisation/folders.ts';

const folderId = z.string().min(1).max(128);
const createBody = z.strictObject({
  name: folderNameSchema,
  parentId: folderId.nullable().optional(),
});
const updateBody = z.strictObject({
  name: folderNameSchema.optional(),
  parentId: folderId.nullable().optional(),
});

/** Nested folders (contract §3). Browser session only. */
export const folderRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['folders'];
  app.get('/api/folders', { schema: { tags, operationId: 'listFolders', summary: "Every folder of the account, flat, sorted by name; parentId gives the tree", response: { 200: folderListResponse } } }, async (request) =>
    ok({ folders: await listFolders(ctx.db, principalOf(request).user.id) }),
  );

  app.post('/api/folders', { schema: { tags, operationId: 'createFolder', summary: 'Create a folder, at the top level or inside parentId', body: createBody, response: { 201: folderResponse } } }, async (request, reply) => {
    const folder = await createFolder(ctx.db, ctx.dialect, principalOf(request).user.id, request.body);
    return reply.code(201).send(ok({ folder }));
  });

  app.patch(
    '/api/folders/:id',
    { schema: { tags, operationId: 'updateFolder', summary: 'Rename and/or move a folder (parentId null: to the top level)', params: idParams, body: updateBody, response: { 200: folderResponse } } },
    async (request) => ok({ folder: await updateFolder(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id, request.body) }),
  );

  app.delete(
    '/api/folders/:id',
    { schema: { tags, operationId: 'deleteFolder', summary: 'Delete a folder: its files become unfiled and its subfolders move up one level', params: idParams, response: { 204: noBody('Deleted') } } },
    async (request, reply) => {
      await deleteFolder(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id);
      return reply.code(204).send();
    },
  );
};
