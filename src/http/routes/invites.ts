import { z } from 'zod';
import { actorOf, principalOf, type RouteModule } from '../route-module.ts';
import { recordAdminAction } from '../../audit/admin-actions.ts';
import { idParams, isoDateTime } from '../schemas.ts';
import { instantOf } from '../../shared/instants.ts';
import { noteSchema } from '../../shared/display-name.ts';
import { createInvite, deleteInvite, INVITE_NOTE_LENGTH, listInvites } from '../../accounts/invites.ts';
import { noBody, ok } from '../responses.ts';
import { inviteListResponse, inviteResponse } from '../../api/admin.ts';

const createBody = z
  .strictObject({
    expiresAt: isoDateTime.optional(),
    note: noteSchema(INVITE_NOTE_LENGTH).optional().describe('Who the invite is for, or anything that tells it apart; shown in the list. Blank: no note'),
  })
  .nullish();

const inviteLabel = (note: string | null) => note ?? 'An invite without a note';

export const inviteRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['administration'];
  app.get('/api/invites', { schema: { tags, operationId: 'listInvites', summary: 'Invites, newest first', response: { 200: inviteListResponse } } }, async () => ok({ invites: await listInvites(ctx.db) }));

  app.post(
    '/api/invites',
    { schema: { tags, operationId: 'createInvite', summary: 'Create a single-use invite code (valid 7 days unless expiresAt is given)', body: createBody, response: { 201: inviteResponse } } },
    async (request, reply) => {
      const expiresAt = request.body?.expiresAt ? instantOf(request.body.expiresAt) : undefined;
      const invite = await createInvite(ctx.db, principalOf(request).user.id, { expiresAt, note: request.body?.note ?? null }, (trx, made) => {
        // The code is a way in: the log names the invite by its note, never by its code.
        const changes = [{ field: 'expiresAt', to: made.expiresAt }, ...(made.note === null ? [] : [{ field: 'note', to: made.note }])];
        return recordAdminAction(trx, { actor: actorOf(request), action: 'invite.create', target: { id: made.id, label: inviteLabel(made.note) }, changes });
      });
      return reply.code(201).send(ok(invite));
    },
  );

  app.delete('/api/invites/:id', { schema: { tags, operationId: 'deleteInvite', summary: 'Withdraw an invite', params: idParams, response: { 204: noBody('Withdrawn') } } }, async (request, reply) => {
    await deleteInvite(ctx.db, request.params.id, (trx, { note }) =>
      recordAdminAction(trx, { actor: actorOf(request), action: 'invite.withdraw', target: { id: request.params.id, label: inviteLabel(note) } }),
    );
    return reply.code(204).send();
  });
};
