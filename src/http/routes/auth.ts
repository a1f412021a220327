import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { accountNameSchema, emailSchema, passwordSchema } from '../../accounts/account-settings.ts';
import { loadSignInSecurity, register, selfView } from '../../accounts/users.ts';
import { invalidSignIn, login } from '../../accounts/login.ts';
import { deleteSession } from '../../auth/sessions.ts';
import { clearSessionCookie, startSession } from '../sign-in.ts';
import { noBody, ok } from '../responses.ts';
import { meResponse } from '../../api/accounts.ts';
import { loginResponse } from '../../api/sign-in-security.ts';
import { completeTwoFactorSignIn, issueSignInTicket, twoFactorEnabled } from '../../accounts/two-factor.ts';
import { unauthorized } from '../../errors.ts';

const registerBody = z.strictObject({
  email: emailSchema,
  password: passwordSchema,
  name: accountNameSchema.optional(),
  inviteCode: z.string().min(1).max(200).optional(),
});
const loginBody = z.strictObject({ email: z.string().min(1).max(254), password: z.string().min(1).max(1024) });
const twoFactorBody = z.strictObject({ ticket: z.string().min(1).max(200), code: z.string().min(1).max(100) });

export const authRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['auth'];
  app.post('/api/auth/register', { schema: { tags, operationId: 'register', summary: 'Create an account; the first one becomes Administrator', body: registerBody, response: { 201: meResponse } } }, async (request, reply) => {
    const user = await register(ctx.db, ctx.dialect, { ...request.body, ip: request.ip });
    const data = await startSession(ctx, request, reply, user, 'password');
    return reply.code(201).send(ok(data));
  });

  app.post(
    '/api/auth/login',
    { schema: { tags, operationId: 'login', summary: 'Sign in with email and password; with two-factor on, the answer is a ticket for the code step and no session', body: loginBody, response: { 200: loginResponse } } },
    async (request, reply) => {
      const { user, passwordFingerprint } = await login(ctx.db, { ...request.body, ip: request.ip });
      // With two-factor on, the password step sets no cookie (contract §8).
      if (await twoFactorEnabled(ctx.db, user.id)) return ok({ twoFactorRequired: true as const, ticket: await issueSignInTicket(ctx.db, user.id, passwordFingerprint), methods: ['totp' as const, 'recovery' as const] });
      return ok(await startSession(ctx, request, reply, user, 'password', { passwordFingerprint, refused: invalidSignIn }));
    },
  );

  app.post(
    '/api/auth/login/two-factor',
    { schema: { tags, operationId: 'loginWithSecondFactor', summary: "Sign in's code step: the ticket of the password step and a current code or an unused recovery code", body: twoFactorBody, response: { 200: meResponse } } },
    async (request, reply) => {
      const { user, passwordFingerprint } = await completeTwoFactorSignIn(ctx, { ...request.body, ip: request.ip });
      return ok(await startSession(ctx, request, reply, user, 'two-factor', { passwordFingerprint, refused: unauthorized }));
    },
  );

  app.post('/api/auth/logout', { schema: { tags, operationId: 'logout', summary: 'End this browser session', response: { 204: noBody('Signed out; the session cookie is cleared') } } }, async (request, reply) => {
    const principal = principalOf(request);
    if (principal.sessionId) await deleteSession(ctx.db, principal.sessionId);
    clearSessionCookie(ctx, reply);
    return reply.code(204).send();
  });

  app.get('/api/auth/me', { schema: { tags, operationId: 'getSignedInAccount', summary: 'The signed-in account', response: { 200: meResponse } } }, async (request) => {
    const principal = principalOf(request);
    return ok({ user: selfView(principal.user, principal, await loadSignInSecurity(ctx.db, principal.user.id)) });
  });
};
