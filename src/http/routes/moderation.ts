import { z } from 'zod';
import { actorOf, principalOf, type RouteModule } from '../route-module.ts';
import { recordAdminAction } from '../../audit/admin-actions.ts';
import { idParams } from '../schemas.ts';
import { noBody, ok } from '../responses.ts';
import { noteSchema } from '../../shared/display-name.ts';
import { reportedContentResponse } from '../../api/admin.ts';
import { findReported, TAKE_DOWN_REASON_LENGTH, takeDownFile, takeDownLink } from '../../moderation/takedowns.ts';

/** Why, in a few words the owner is shown (the notice of the take-down); optional, and no body at all is none. */
const takeDownBody = z
  .strictObject({ reason: noteSchema(TAKE_DOWN_REASON_LENGTH).optional().describe("Why it is taken down, shown to its owner (\"reported as copyright infringement\"); blank: no reason given") })
  .nullish();

/** The reason given, as the administration log's change; none when none was given. */
const reasonChange = (reason: string | null) => (reason === null ? [] : [{ field: 'reason', to: reason }]);

/** Taking down one file or short link of any account (docs/decisions.md, "Taking down content"). */
export const moderationRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['administration'];
  app.get(
    '/api/moderation/lookup',
    {
      schema: {
        tags,
        operationId: 'findReportedContent',
        summary: 'What an address of this instance (a share page, a file link, a short link) leads to, and whose it is',
        querystring: z.strictObject({ address: z.string({ error: 'required: the address of a file or short link' }).max(4096) }),
        response: { 200: reportedContentResponse },
      },
    },
    async (request) => ok(await findReported(ctx.db, request.query.address)),
  );

  app.delete(
    '/api/moderation/files/:id',
    {
      schema: {
        tags,
        operationId: 'takeDownFile',
        summary: "Delete a file of any account: its bytes, thumbnail and record; its owner's quota is given back, and its owner is told",
        params: idParams,
        body: takeDownBody,
        response: { 204: noBody('Taken down') },
      },
    },
    async (request, reply) => {
      const reason = request.body?.reason ?? null;
      const { owner, name } = await takeDownFile(ctx, principalOf(request).permissions, request.params.id, reason, (trx, taken) => {
        const changes = [{ field: 'owner', from: taken.owner.email }, { field: 'size', from: taken.size }, ...reasonChange(reason)];
        return recordAdminAction(trx, { actor: actorOf(request), action: 'file.take-down', target: { id: request.params.id, label: taken.name }, changes });
      });
      request.log.info({ by: principalOf(request).user.id, owner: owner.id, fileId: request.params.id, name }, 'an administrator took down a file');
      return reply.code(204).send();
    },
  );

  app.delete(
    '/api/moderation/links/:id',
    { schema: { tags, operationId: 'takeDownShortLink', summary: 'Delete a short link of any account; its owner is told', params: idParams, body: takeDownBody, response: { 204: noBody('Taken down') } } },
    async (request, reply) => {
      const reason = request.body?.reason ?? null;
      const { owner, targetUrl } = await takeDownLink(ctx.db, ctx.config.baseUrl, principalOf(request).permissions, request.params.id, reason, (trx, taken) => {
        const changes = [{ field: 'owner', from: taken.owner.email }, { field: 'targetUrl', from: taken.targetUrl }, ...reasonChange(reason)];
        return recordAdminAction(trx, { actor: actorOf(request), action: 'link.take-down', target: { id: request.params.id, label: taken.address }, changes });
      });
      request.log.info({ by: principalOf(request).user.id, owner: owner.id, linkId: request.params.id, targetUrl }, 'an administrator took down a short link');
      return reply.code(204).send();
    },
  );
};
