import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams } from '../schemas.ts';
import { noBody, ok } from '../responses.ts';
import { uploadProfileListResponse, uploadProfileResponse } from '../../api/organisation.ts';
import { profileOptionsSchema } from '../../shared/upload-options.ts';
import { createProfile, deleteProfile, listProfiles, profileNameSchema, updateProfile } from '../../organisation/profiles.ts';

const createBody = z.strictObject({
  name: profileNameSchema,
  options: profileOptionsSchema.optional(),
});
const updateBody = z.strictObject({
  name: profileNameSchema.optional(),
  options: profileOptionsSchema.optional(),
});

/** Upload profiles: saved sets of upload options (contract §3). Browser session only. */
export const uploadProfileRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['upload profiles'];
  app.get('/api/upload-profiles', { schema: { tags, operationId: 'listUploadProfiles', summary: "The account's upload profiles, sorted by name", response: { 200: uploadProfileListResponse } } }, async (request) =>
    ok({ profiles: await listProfiles(ctx.db, principalOf(request).user.id) }),
  );

  app.post('/api/upload-profiles', { schema: { tags, operationId: 'createUploadProfile', summary: 'Create an upload profile', body: createBody, response: { 201: uploadProfileResponse } } }, async (request, reply) => {
    const profile = await createProfile(ctx.db, ctx.dialect, principalOf(request).user.id, { name: request.body.name, options: request.body.options ?? {} });
    return reply.code(201).send(ok({ profile }));
  });

  app.patch(
    '/api/upload-profiles/:id',
    { schema: { tags, operationId: 'updateUploadProfile', summary: 'Rename a profile and/or replace its options', params: idParams, body: updateBody, response: { 200: uploadProfileResponse } } },
    async (request) => ok({ profile: await updateProfile(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id, request.body) }),
  );

  app.delete(
    '/api/upload-profiles/:id',
    { schema: { tags, operationId: 'deleteUploadProfile', summary: 'Delete a profile; tokens bound to it stay bound, and it stops being the default', params: idParams, response: { 204: noBody('Deleted') } } },
    async (request, reply) => {
      await deleteProfile(ctx.db, ctx.dialect, principalOf(request).user.id, request.params.id);
      return reply.code(204).send();
    },
  );
};
