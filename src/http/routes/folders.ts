import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams } from '../schemas.ts';
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
  app.get('/api/folders', { schema: { tags, summary: "Every folder of the account, flat, sorted by name; parentId gives the tree" } }, async (request) => ({
    success: true,
    data: { folders: await listFolders(ctx.db, principalOf(request).user.id) },
  }));

  app.post('/api/folders', { schema: { tags, summary: 'Create a folder, at the top level or inside parentId', body: createBody } }, async (request, reply) => {
    const folder = await createFolder(ctx.db, ctx.dialect, principalOf(request).user.id, request.body);
    return reply.code(201).send({ success: true, data: { folder } });
  });

  app.patch(
    '/api/folders/:id',
    { schema: { tags, summary: 'Rename and/or move a folder (parentId null: to the top level)', params: idParams, body: updateBody } },
    async (request) => ({
      success: true,
      data: { folder: await updateFolder(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id, request.body) },
    }),
  );

  app.delete(
    '/api/folders/:id',
    { schema: { tags, summary: 'Delete a folder: its files become unfiled and its subfolders move up one level', params: idParams } },
    async (request, reply) => {
      await deleteFolder(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id);
      return reply.code(204).send();
    },
  );
};
