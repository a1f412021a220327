import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams, isoDateTime } from '../schemas.ts';
import { instantOf } from '../../shared/instants.ts';
import { scopes } from '../../auth/route-policy.ts';
import { noBody, ok } from '../responses.ts';
import { createdTokenResponse, tokenListResponse } from '../../api/tokens.ts';
import { createToken, listTokens, revokeToken, rotateToken, tokenNameSchema } from '../../tokens/named-tokens.ts';

const createBody = z.strictObject({
  name: tokenNameSchema,
  scopes: z.array(z.enum(scopes, { message: `must be one of ${scopes.join(', ')}` })).min(1, { message: 'at least one scope is required' }).max(scopes.length * 2),
  expiresAt: isoDateTime.nullable().optional(),
  profileId: z.string().min(1).max(128).nullable().optional(),
});

export const tokenRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['tokens'];
  // Credentials are answered here (a secret, once; the upload credential and the configurations
  // that embed it): no cache along the way, nor the browser's, may keep a copy.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
  });
  app.post(
    '/api/tokens',
    { schema: { tags, operationId: 'createToken', summary: 'Create a named API token; the secret is shown only in this response', body: createBody, response: { 201: createdTokenResponse } } },
    async (request, reply) => {
      const { expiresAt, ...rest } = request.body;
      const created = await createToken(ctx.db, ctx.dialect, principalOf(request).user.id, { ...rest, expiresAt: expiresAt ? instantOf(expiresAt) : null });
      return reply.code(201).send(ok(created));
    },
  );

  app.get('/api/tokens', { schema: { tags, operationId: 'listTokens', summary: 'The latest 100 token records, newest first', response: { 200: tokenListResponse } } }, async (request) =>
    ok(await listTokens(ctx.db, principalOf(request).user.id)),
  );

  app.post(
    '/api/tokens/:id/rotate',
    { schema: { tags, operationId: 'rotateToken', summary: 'Replace a token with a new secret; the old one is revoked', params: idParams, response: { 201: createdTokenResponse } } },
    async (request, reply) => {
      const rotated = await rotateToken(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id);
      return reply.code(201).send(ok(rotated));
    },
  );

  app.delete('/api/tokens/:id', { schema: { tags, operationId: 'revokeToken', summary: 'Revoke a token; it stays listed', params: idParams, response: { 204: noBody('Revoked') } } }, async (request, reply) => {
    await revokeToken(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id);
    return reply.code(204).send();
  });
};
