import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams, isoDateTime } from '../schemas.ts';
import { instantOf } from '../../shared/instants.ts';
import { updateFile } from '../../files/update-file.ts';
import { deleteFileRecord } from '../../files/delete-file.ts';
import { notFound } from '../../errors.ts';
import { noBody, ok } from '../responses.ts';
import { fileResponse } from '../../api/files.ts';

const patchBody = z.strictObject({
  name: z.string().min(1).max(255).optional(),
  visibility: z.enum(['PUBLIC', 'PRIVATE']).optional(),
  password: z.string().max(1024).nullable().optional(),
  expiresAt: isoDateTime.nullable().optional(),
  expiryAction: z.enum(['DELETE', 'SET_PRIVATE']).optional(),
  folderId: z.string().min(1).max(128).nullable().optional(),
  tagIds: z.array(z.string().min(1).max(128)).max(20).optional(),
});

export const fileManagementRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['files'];
  app.patch(
    '/api/files/:id',
    { schema: { tags, operationId: 'updateFile', summary: 'Rename a file or change its visibility, password, expiry, folder or tags', params: idParams, body: patchBody, response: { 200: fileResponse } } },
    async (request) => {
      const principal = principalOf(request);
      const { expiresAt, ...rest } = request.body;
      const file = await updateFile(ctx, principal.user.id, principal.permissions, request.params.id, {
        ...rest,
        ...(expiresAt !== undefined ? { expiresAt: expiresAt === null ? null : instantOf(expiresAt) } : {}),
      });
      return ok({ file });
    },
  );

  app.delete('/api/files/:id', { schema: { tags, operationId: 'deleteFile', summary: 'Delete a file: bytes and metadata', params: idParams, response: { 204: noBody('Deleted') } } }, async (request, reply) => {
    if (!(await deleteFileRecord(ctx, principalOf(request).user.id, request.params.id))) throw notFound('File not found');
    return reply.code(204).send();
  });
};
