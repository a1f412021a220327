import { principalOf, type RouteModule } from '../route-module.ts';
import { noBody, ok } from '../responses.ts';
import { confirmationResponse, sessionListResponse } from '../../api/sign-in-security.ts';
import { endOtherSessions, endSession, listSessions, RECENT_SIGN_IN_MS } from '../../auth/sessions.ts';
import { confirmSignIn } from '../../accounts/confirm-password.ts';
import { clearSessionCookie } from '../sign-in.ts';
import { notFound } from '../../errors.ts';
import { idParams, passwordBody } from '../schemas.ts';

/**
 * Session history (contract §8): the account's live browser sessions, and ending them. Browser
 * session only; ending sessions never touches named tokens or the legacy credential (spec,
 * Authentication 10).
 */
export const sessionRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['sign-in security'];
  app.get('/api/auth/sessions', { schema: { tags, operationId: 'listSessions', summary: 'Your live browser sessions, newest first', response: { 200: sessionListResponse } } }, async (request) => {
    const principal = principalOf(request);
    return ok({ sessions: await listSessions(ctx.db, principal.user.id, principal.sessionId) });
  });

  app.delete(
    '/api/auth/sessions/:id',
    { schema: { tags, operationId: 'endSession', summary: 'End one of your sessions (this one too, if it is its ID)', params: idParams, response: { 204: noBody('Ended') } } },
    async (request, reply) => {
      const principal = principalOf(request);
      const ended = await endSession(ctx.db, principal.user.id, request.params.id, principal.sessionId);
      if (!ended) throw notFound('Session not found');
      if (ended.wasCurrent) clearSessionCookie(ctx, reply);
      return reply.code(204).send();
    },
  );

  app.delete('/api/auth/sessions', { schema: { tags, operationId: 'endOtherSessions', summary: 'End every session of yours but this one', response: { 204: noBody('Ended') } } }, async (request, reply) => {
    const principal = principalOf(request);
    await endOtherSessions(ctx.db, principal.user.id, principal.sessionId);
    return reply.code(204).send();
  });

  // What adds a way into the account (a passkey, a second factor) needs a recent sign-in; a session
  // signed in earlier proves the password again here (docs/decisions.md, "Recent sign-in").
  app.get('/api/auth/confirm', { schema: { tags, operationId: 'getSessionConfirmation', summary: 'Until when this session may add a passkey or turn on two-factor', response: { 200: confirmationResponse } } }, async (request) =>
    ok({ confirmedUntil: new Date(principalOf(request).sessionProvedAt! + RECENT_SIGN_IN_MS).toISOString() }),
  );

  app.post(
    '/api/auth/confirm',
    { schema: { tags, operationId: 'confirmSession', summary: 'Prove the password again, for an hour of adding passkeys or two-factor; a wrong password is 403 and counts as a failed sign-in', body: passwordBody, response: { 200: confirmationResponse } } },
    async (request) => {
      const principal = principalOf(request);
      const until = await confirmSignIn(ctx.db, principal.user, principal.sessionId!, request.body.password, request.ip);
      return ok({ confirmedUntil: new Date(until).toISOString() });
    },
  );
};
