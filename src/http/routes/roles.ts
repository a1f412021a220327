import { z } from 'zod';
import { actorOf, principalOf, type RouteModule } from '../route-module.ts';
import { idParams } from '../schemas.ts';
import { allPermissions, type Permission } from '../../auth/permissions.ts';
import { createRole, deleteRole, listRoles, updateRole } from '../../accounts/roles-admin.ts';
import { changesBetween, madeWith, recordAdminAction, roleFacts } from '../../audit/admin-actions.ts';
import { noBody, ok } from '../responses.ts';
import { nameSchema } from '../../shared/display-name.ts';
import { roleListResponse, roleResponse } from '../../api/admin.ts';

const permissionList = z.array(z.enum(allPermissions as [Permission, ...Permission[]], { message: `must be one of ${allPermissions.join(', ')}` })).max(allPermissions.length * 2);
// Trimmed, 1 to 64 characters, no control characters, like every display name.
const roleName = nameSchema(64);

export const roleRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['administration'];
  app.get('/api/roles', { schema: { tags, operationId: 'listRoles', summary: 'All roles, built-in first', response: { 200: roleListResponse } } }, async () =>
    ok({ roles: await listRoles(ctx.db), permissions: [...allPermissions] }),
  );

  app.post('/api/roles', { schema: { tags, operationId: 'createRole', summary: 'Create a role', body: z.strictObject({ name: roleName, permissions: permissionList }), response: { 201: roleResponse } } }, async (request, reply) => {
    const role = await createRole(ctx.db, principalOf(request).permissions, request.body, (trx, made) =>
      recordAdminAction(trx, { actor: actorOf(request), action: 'role.create', target: { id: made.id, label: made.name }, changes: madeWith(roleFacts(made)) }),
    );
    return reply.code(201).send(ok({ role }));
  });

  app.patch(
    '/api/roles/:id',
    { schema: { tags, operationId: 'updateRole', summary: 'Rename a role or change its permissions', params: idParams, body: z.strictObject({ name: roleName.optional(), permissions: permissionList.optional() }), response: { 200: roleResponse } } },
    async (request) => {
      const role = await updateRole(ctx.db, ctx.dialect, principalOf(request).permissions, request.params.id, request.body, async (trx, { before, after }) => {
        const changes = changesBetween(roleFacts(before), roleFacts(after));
        if (changes.length > 0) await recordAdminAction(trx, { actor: actorOf(request), action: 'role.change', target: { id: after.id, label: after.name }, changes });
      });
      return ok({ role });
    },
  );

  app.delete('/api/roles/:id', { schema: { tags, operationId: 'deleteRole', summary: 'Delete a custom role', params: idParams, response: { 204: noBody('Deleted') } } }, async (request, reply) => {
    await deleteRole(ctx.db, ctx.dialect, principalOf(request).permissions, request.params.id, (trx, role) =>
      recordAdminAction(trx, { actor: actorOf(request), action: 'role.delete', target: { id: role.id, label: role.name }, changes: [{ field: 'permissions', from: role.permissions }] }),
    );
    return reply.code(204).send();
  });
};
