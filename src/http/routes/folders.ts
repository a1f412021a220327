import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams, isoDateTime } from '../schemas.ts';
import { instantOf } from '../../shared/instants.ts';
import { noBody, ok } from '../responses.ts';
import { folderListResponse, folderResponse, folderShareListResponse, folderShareResponse } from '../../api/organisation.ts';
import { createFolder, deleteFolder, folderNameSchema, listFolders, updateFolder } from '../../organisation/folders.ts';
import { folderShareOf, listFolderShares, shareFolder, unshareFolder } from '../../organisation/folder-shares.ts';

const folderId = z.string().min(1).max(128);
const createBody = z.strictObject({
  name: folderNameSchema,
  parentId: folderId.nullable().optional(),
});
const updateBody = z.strictObject({
  name: folderNameSchema.optional(),
  parentId: folderId.nullable().optional(),
});
const shareBody = z
  .strictObject({
    expiresAt: isoDateTime
      .nullable()
      .optional()
      .describe('When the address stops working (an instant to come); null: never. Left out, a share there keeps its end'),
    subfolders: z.boolean().optional().describe("List the public files of the folder's subfolders too (default false). Left out, a share there keeps its choice"),
  })
  .nullish();

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

  // A folder's public address (docs/decisions.md, "Sharing a folder").
  app.get('/api/folder-shares', { schema: { tags, operationId: 'listFolderShares', summary: "The account's shared folders and their public addresses", response: { 200: folderShareListResponse } } }, async (request) =>
    ok({ shares: await listFolderShares(ctx.db, ctx.config.baseUrl, principalOf(request).user.id) }),
  );

  app.get(
    '/api/folders/:id/share',
    { schema: { tags, operationId: 'getFolderShare', summary: "The folder's public address, or null when it is not shared", params: idParams, response: { 200: folderShareResponse } } },
    async (request) => ok({ share: await folderShareOf(ctx.db, ctx.config.baseUrl, principalOf(request).user.id, request.params.id) }),
  );

  app.put(
    '/api/folders/:id/share',
    {
      schema: {
        tags,
        operationId: 'shareFolder',
        summary: "Share the folder by a public address that lists its public files (not its private, password-protected or expired ones), its subfolders' too if asked, until expiresAt if given; a folder shared already keeps its address",
        params: idParams,
        body: shareBody,
        response: { 200: folderShareResponse, 201: folderShareResponse },
      },
    },
    async (request, reply) => {
      const { expiresAt, subfolders } = request.body ?? {};
      const options = { expiresAt: expiresAt === undefined ? undefined : expiresAt === null ? null : instantOf(expiresAt), subfolders };
      const { share, created } = await shareFolder(ctx.db, ctx.config.baseUrl, principalOf(request).user.id, request.params.id, options);
      return reply.code(created ? 201 : 200).send(ok({ share }));
    },
  );

  app.delete(
    '/api/folders/:id/share',
    { schema: { tags, operationId: 'unshareFolder', summary: 'Stop sharing the folder: its address answers 404 from now on', params: idParams, response: { 204: noBody('Not shared') } } },
    async (request, reply) => {
      await unshareFolder(ctx.db, principalOf(request).user.id, request.params.id);
      return reply.code(204).send();
    },
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
