import { z } from 'zod';
import type { RouteModule } from '../route-module.ts';
import { listAuditRecords } from '../../audit/audit-query.ts';
import { ok } from '../responses.ts';
import { adminActionPageResponse, auditPageResponse } from '../../api/admin.ts';
import { listAdminActions } from '../../audit/admin-actions.ts';

const id = z.string().min(1).max(128);
const badLimit = 'limit must be a whole number from 1 to 100';
const auditQuery = z.object({
  userId: id.optional().describe("only this account's records"),
  tokenId: id.optional().describe("only this named token's records"),
  // Record IDs sort by time (db/ids.ts), so any other text would still be a position somewhere in
  // the list: refused instead, as a cursor that could only be a mistake.
  before: z
    .string()
    .regex(/^[a-z0-9]{20}$/, "before must be a record ID (the previous page's nextBefore)")
    .optional()
    .describe("records older than this record ID (the previous page's nextBefore)"),
  limit: z.coerce.number({ error: badLimit }).int(badLimit).min(1, badLimit).max(100, badLimit).optional().describe('1 to 100; default 50'),
});

const adminActionQuery = z.object({
  targetId: id.optional().describe("only the records of this account, role, invite, file or short link"),
  before: auditQuery.shape.before,
  limit: auditQuery.shape.limit,
});

/** Reading the audit records (browser session with audit.read; never a token, spec rule 11). */
export const auditRoutes: RouteModule = async (app, { ctx }) => {
  app.get(
    '/api/audit',
    { schema: { tags: ['administration'], operationId: 'listAuditRecords', summary: 'Records of token- and legacy-authorized requests, newest first', querystring: auditQuery, response: { 200: auditPageResponse } } },
    async (request, reply) => {
      const { userId, tokenId, before, limit } = request.query;
      const page = await listAuditRecords(ctx.db, { userId: userId ?? null, tokenId: tokenId ?? null, before: before ?? null, limit: limit ?? 50 });
      reply.header('Cache-Control', 'private, no-store');
      return ok(page);
    },
  );

  app.get(
    '/api/admin/actions',
    {
      schema: {
        tags: ['administration'],
        operationId: 'listAdminActions',
        summary: "The administration log: changes administrators made to accounts, roles, settings, invites and other accounts' content, newest first",
        querystring: adminActionQuery,
        response: { 200: adminActionPageResponse },
      },
    },
    async (request, reply) => {
      const { targetId, before, limit } = request.query;
      const page = await listAdminActions(ctx.db, { targetId: targetId ?? null, before: before ?? null, limit: limit ?? 50 });
      reply.header('Cache-Control', 'private, no-store');
      return ok(page);
    },
  );
};
