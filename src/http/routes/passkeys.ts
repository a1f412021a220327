import { z } from 'zod';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { principalOf, type RouteModule } from '../route-module.ts';
import { idParams } from '../schemas.ts';
import { noBody, ok } from '../responses.ts';
import { startSession } from '../sign-in.ts';
import { meResponse } from '../../api/accounts.ts';
import { passkeyListResponse, passkeyOptionsResponse, passkeyResponse } from '../../api/sign-in-security.ts';
import { nameSchema } from '../../shared/display-name.ts';
import {
  deletePasskey,
  listPasskeys,
  registerPasskey,
  registrationOptions,
  relyingParty,
  renamePasskey,
  signInOptions,
  signInWithPasskey,
} from '../../accounts/passkeys.ts';

/**
 * Passkeys (contract §8, "Passkeys"): managing them takes a browser session; the two sign-in steps
 * are public. The WebAuthn answers are the standard JSON forms; their contents are checked by the
 * verification, so only their outline is validated here.
 */

const base64url = z.string().max(65_536).regex(/^[A-Za-z0-9_-]*$/, { message: 'must be base64url' });
const credentialOutline = {
  id: base64url.min(1).max(1366),
  rawId: base64url.min(1).max(1366),
  type: z.literal('public-key'),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.looseObject({}).optional().default({}),
};
const registrationResponse = z.looseObject({
  ...credentialOutline,
  response: z.looseObject({
    clientDataJSON: base64url.min(1),
    attestationObject: base64url.min(1),
    transports: z.array(z.string().max(32)).max(16).optional(),
  }),
});
const authenticationResponse = z.looseObject({
  ...credentialOutline,
  response: z.looseObject({
    clientDataJSON: base64url.min(1),
    authenticatorData: base64url.min(1),
    signature: base64url.min(1),
    userHandle: base64url.max(1024).optional(),
  }),
});

const passkeyName = nameSchema(80);
const registerBody = z.strictObject({ name: passkeyName, response: registrationResponse });
const renameBody = z.strictObject({ name: passkeyName });
const signInOptionsBody = z.strictObject({ email: z.string().min(1).max(254).optional() }).nullish();
const signInBody = z.strictObject({ response: authenticationResponse });

export const passkeyRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['auth'];
  const rp = relyingParty(ctx.config);

  app.post(
    '/api/auth/passkeys/options',
    { schema: { tags, operationId: 'getPasskeyRegistrationOptions', summary: 'Options for registering a passkey on this account (its passkeys excluded)', response: { 200: passkeyOptionsResponse } } },
    async (request) => ok({ options: { ...(await registrationOptions(ctx.db, rp, principalOf(request).user)) } }),
  );

  app.post(
    '/api/auth/passkeys',
    { schema: { tags, operationId: 'registerPasskey', summary: 'Register a passkey: the answer to the registration options; 400 when it does not verify', body: registerBody, response: { 201: passkeyResponse } } },
    async (request, reply) => {
      const { name, response } = request.body;
      const passkey = await registerPasskey(ctx.db, rp, principalOf(request).user, { name, response: response as RegistrationResponseJSON });
      return reply.code(201).send(ok({ passkey }));
    },
  );

  app.get('/api/auth/passkeys', { schema: { tags, operationId: 'listPasskeys', summary: "The account's passkeys, newest first", response: { 200: passkeyListResponse } } }, async (request) =>
    ok({ passkeys: await listPasskeys(ctx.db, principalOf(request).user.id) }),
  );

  app.patch('/api/auth/passkeys/:id', { schema: { tags, operationId: 'renamePasskey', summary: 'Rename a passkey', params: idParams, body: renameBody, response: { 200: passkeyResponse } } }, async (request) =>
    ok({ passkey: await renamePasskey(ctx.db, principalOf(request).user.id, request.params.id, request.body.name) }),
  );

  app.delete('/api/auth/passkeys/:id', { schema: { tags, operationId: 'deletePasskey', summary: 'Delete a passkey; it no longer signs in', params: idParams, response: { 204: noBody('Deleted') } } }, async (request, reply) => {
    await deletePasskey(ctx.db, principalOf(request).user.id, request.params.id);
    return reply.code(204).send();
  });

  app.post(
    '/api/auth/passkey/options',
    {
      schema: {
        tags,
        operationId: 'getPasskeySignInOptions',
        summary: 'Options for signing in with a passkey: for an email, or for a discoverable credential without one',
        body: signInOptionsBody,
        response: { 200: passkeyOptionsResponse },
      },
    },
    async (request) => ok({ options: { ...(await signInOptions(ctx.db, rp, ctx.secretBox, { email: request.body?.email, ip: request.ip })) } }),
  );

  app.post(
    '/api/auth/passkey',
    { schema: { tags, operationId: 'signInWithPasskey', summary: 'Sign in with a passkey; no two-factor code is asked', body: signInBody, response: { 200: meResponse } } },
    async (request, reply) => {
      const user = await signInWithPasskey(ctx.db, rp, { response: request.body.response as AuthenticationResponseJSON, ip: request.ip });
      return ok(await startSession(ctx, request, reply, user, 'passkey'));
    },
  );
};
