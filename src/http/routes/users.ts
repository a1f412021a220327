import { z } from 'zod';
import { actorOf, principalOf, type RouteModule } from '../route-module.ts';
import { accountNameSchema, emailSchema, passwordSchema } from '../../accounts/account-settings.ts';
import { idParams } from '../schemas.ts';
import { createUserAsAdmin, deleteUserAsAdmin, listUsers, updateUserAsAdmin } from '../../accounts/users.ts';
import { accountFacts, changesBetween, madeWith, recordAdminAction } from '../../audit/admin-actions.ts';
import { noBody, ok } from '../responses.ts';
import { resetTwoFactorAsAdmin } from '../../accounts/two-factor.ts';
import { adminUserListResponse, adminUserResponse } from '../../api/admin.ts';

const roleIds = z.array(z.string().min(1).max(128)).max(100);
const createBody = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  name: accountNameSchema.optional(),
  roleIds: roleIds.optional(),
  emailVerified: z.boolean().optional(),
});
const updateBody = z.strictObject({
  name: accountNameSchema.optional(),
  email: emailSchema.optional().describe("Another account's new address (a typo at sign-up); it signs in with it from then on, verified unless emailVerified says otherwise"),
  roleIds: roleIds.optional(),
  emailVerified: z.boolean().optional(),
  quotaBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable().optional(),
  password: passwordSchema.optional().describe("A new password for another account (a user who forgot theirs); ends the account's browser sessions, named tokens stay"),
  suspended: z.boolean().optional().describe("Suspend (true) or resume (false) another account: suspended, it cannot sign in, its sessions end and its tokens and legacy credential are refused; nothing is deleted, and its shared files stay up"),
});

export const userRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['administration'];
  app.get('/api/users', { schema: { tags, operationId: 'listUsers', summary: 'All accounts', response: { 200: adminUserListResponse } } }, async () => ok({ users: await listUsers(ctx.db) }));

  app.post('/api/users', { schema: { tags, operationId: 'createUser', summary: 'Create an account', body: createBody, response: { 201: adminUserResponse } } }, async (request, reply) => {
    const user = await createUserAsAdmin(ctx.db, ctx.dialect, principalOf(request).permissions, request.body, async (trx, made) => {
      const { quotaBytes, suspended, ...facts } = accountFacts(made);
      await recordAdminAction(trx, { actor: actorOf(request), action: 'account.create', target: { id: made.id, label: made.email }, changes: madeWith(facts) });
    });
    return reply.code(201).send(ok({ user }));
  });

  app.patch('/api/users/:id', { schema: { tags, operationId: 'updateUser', summary: 'Change an account: name, email, roles, verification, quota, password, suspension', params: idParams, body: updateBody, response: { 200: adminUserResponse } } }, async (request) => {
    const principal = principalOf(request);
    const user = await updateUserAsAdmin(ctx.db, ctx.dialect, { id: principal.user.id, permissions: principal.permissions }, request.params.id, request.body, async (trx, { before, after }) => {
      const changes = changesBetween(accountFacts(before), accountFacts(after));
      // A new password is recorded as set, never as its value.
      if (request.body.password !== undefined) changes.push({ field: 'password' });
      if (changes.length > 0) await recordAdminAction(trx, { actor: actorOf(request), action: 'account.change', target: { id: after.id, label: after.email }, changes });
    });
    return ok({ user });
  });

  app.delete('/api/users/:id', { schema: { tags, operationId: 'deleteUser', summary: 'Delete an account and everything it owns', params: idParams, response: { 204: noBody('Deleted') } } }, async (request, reply) => {
    const principal = principalOf(request);
    await deleteUserAsAdmin(ctx.db, ctx.dialect, { id: principal.user.id, permissions: principal.permissions }, request.params.id, async (trx, before) => {
      // What went with it, as it stood.
      const changes = [{ field: 'files', from: before.fileCount }, { field: 'usedBytes', from: before.usedBytes }];
      await recordAdminAction(trx, { actor: actorOf(request), action: 'account.delete', target: { id: before.id, label: before.email }, changes });
    });
    ctx.jobs.wake();
    return reply.code(204).send();
  });

  app.delete(
    '/api/users/:id/two-factor',
    { schema: { tags, operationId: 'resetUserTwoFactor', summary: "Turn another account's two-factor off, for a user locked out of it", params: idParams, response: { 204: noBody('Two-factor is off') } } },
    async (request, reply) => {
      const principal = principalOf(request);
      await resetTwoFactorAsAdmin(ctx.db, { id: principal.user.id, permissions: principal.permissions }, request.params.id, (trx, { email }) =>
        recordAdminAction(trx, { actor: actorOf(request), action: 'account.two-factor-reset', target: { id: request.params.id, label: email } }),
      );
      return reply.code(204).send();
    },
  );
};
