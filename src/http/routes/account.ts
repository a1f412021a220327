import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { noBody, ok } from '../responses.ts';
import { accountResponse } from '../../api/organisation.ts';
import { hasPermission } from '../../auth/permissions.ts';
import type { Principal } from '../../auth/principal.ts';
import { profileOptionsSchema } from '../../shared/upload-options.ts';
import { accountNameSchema, deleteOwnAccount, emailSchema, getAccountSettings, passwordSchema, updateAccountSettings } from '../../accounts/account-settings.ts';
import { idParams, passwordBody } from '../schemas.ts';
import { dismissNotice, listNotices } from '../../accounts/notices.ts';
import { accountNoticeListResponse } from '../../api/accounts.ts';
import { clearSessionCookie } from '../sign-in.ts';

const updateBody = z.strictObject({
  name: accountNameSchema.optional(),
  defaultProfileId: z.string().min(1).max(128).nullable().optional(),
  uploadDefaults: profileOptionsSchema.optional(),
  currentPassword: z.string().min(1).max(1024).optional(),
  newPassword: passwordSchema.optional(),
  email: emailSchema.optional().describe("A new address to sign in with; needs currentPassword. The account's verification stays as it is"),
});

const exemptFromDefaultQuota = (principal: Principal) => hasPermission(principal.permissions, 'quotas.bypass');

/** The signed-in account's own settings. Browser session only. */
export const accountRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['account'];
  app.get('/api/account', { schema: { tags, operationId: 'getAccount', summary: 'Your account: name, upload defaults, default profile, storage used and quota', response: { 200: accountResponse } } }, async (request) => {
    const principal = principalOf(request);
    return ok({ account: await getAccountSettings(ctx.db, principal.user.id, { exemptFromDefaultQuota: exemptFromDefaultQuota(principal) }) });
  });

  app.patch(
    '/api/account',
    { schema: { tags, operationId: 'updateAccount', summary: 'Change your name, upload defaults, default profile, email or password (a new password ends your other sessions)', body: updateBody, response: { 200: accountResponse } } },
    async (request) => {
      const principal = principalOf(request);
      const account = await updateAccountSettings(
        ctx.db,
        ctx.dialect,
        { userId: principal.user.id, sessionId: principal.sessionId, exemptFromDefaultQuota: exemptFromDefaultQuota(principal), mayUpdateProfile: hasPermission(principal.permissions, 'profile.update') },
        request.body,
      );
      return ok({ account });
    },
  );

  app.delete(
    '/api/account',
    { schema: { tags, operationId: 'deleteAccount', summary: 'Delete your account and everything it owns (needs the password; the last administrator is refused)', body: passwordBody, response: { 204: noBody('Deleted; the session cookie is cleared') } } },
    async (request, reply) => {
      const principal = principalOf(request);
      await deleteOwnAccount(ctx.db, ctx.dialect, principal.user, request.body.password, request.ip);
      clearSessionCookie(ctx, reply);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/account/notices',
    { schema: { tags, operationId: 'listAccountNotices', summary: 'What you are told until you dismiss it: files and short links of yours an administrator took down, and why', response: { 200: accountNoticeListResponse } } },
    async (request, reply) => {
      reply.header('Cache-Control', 'private, no-store');
      return ok({ notices: await listNotices(ctx.db, principalOf(request).user.id) });
    },
  );

  app.delete('/api/account/notices/:id', { schema: { tags, operationId: 'dismissAccountNotice', summary: 'Dismiss a notice', params: idParams, response: { 204: noBody('Dismissed') } } }, async (request, reply) => {
    await dismissNotice(ctx.db, principalOf(request).user.id, request.params.id);
    return reply.code(204).send();
  });
};
