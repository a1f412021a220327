import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { noBody, ok } from '../responses.ts';
import { sessionListResponse } from '../../api/sign-in-security.ts';
import { endOtherSessions, endSession, listSessions } from '../../auth/sessions.ts';
import { clearSessionCookie } from '../sign-in.ts';
import { notFound } from '../../errors.ts';
import { idParams } from '../schemas.ts';

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
};
