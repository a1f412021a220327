import { z } from 'zod';
import { principalOf, type RouteModule } from '../route-module.ts';
import { noBody, ok } from '../responses.ts';
import { recoveryCodesResponse, totpSetupResponse } from '../../api/sign-in-security.ts';
import { disableTotp, enableTotp, regenerateRecoveryCodes, setUpTotp } from '../../accounts/two-factor.ts';
import { passwordBody } from '../schemas.ts';

const codeBody = z.strictObject({ code: z.string().min(1).max(20) });

/**
 * Two-factor codes on the signed-in account (contract §8, "Two-factor codes"): browser session
 * only. The sign-in's code step is in the sign-in routes (auth.ts).
 */
export const twoFactorRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['sign-in security'];
  app.post('/api/auth/totp/setup', { schema: { tags, operationId: 'setUpTwoFactor', summary: 'A new two-factor secret, pending until a first code confirms it', response: { 200: totpSetupResponse } } }, async (request) =>
    ok(await setUpTotp(ctx, principalOf(request).user.id)),
  );

  app.post('/api/auth/totp/enable', { schema: { tags, operationId: 'enableTwoFactor', summary: 'Turn two-factor on with a first code; answers the recovery codes, shown once', body: codeBody, response: { 200: recoveryCodesResponse } } }, async (request) =>
    ok({ recoveryCodes: await enableTotp(ctx, principalOf(request).user.id, request.body.code) }),
  );

  app.post('/api/auth/totp/disable', { schema: { tags, operationId: 'disableTwoFactor', summary: 'Turn two-factor off (needs the password)', body: passwordBody, response: { 204: noBody('Two-factor is off') } } }, async (request, reply) => {
    await disableTotp(ctx, principalOf(request).user.id, request.body.password, request.ip);
    return reply.code(204).send();
  });

  app.post('/api/auth/recovery-codes', { schema: { tags, operationId: 'regenerateRecoveryCodes', summary: 'Ten new recovery codes (needs the password); the old ones stop working', body: passwordBody, response: { 200: recoveryCodesResponse } } }, async (request) =>
    ok({ recoveryCodes: await regenerateRecoveryCodes(ctx, principalOf(request).user.id, request.body.password, request.ip) }),
  );
};
