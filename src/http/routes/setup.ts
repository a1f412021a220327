import type { RouteModule } from '../route-module.ts';
import { setupStatus } from '../../accounts/setup-status.ts';
import { ok } from '../responses.ts';
import { setupStatusResponse } from '../../api/accounts.ts';

/**
 * Public: whether the instance still needs its Administrator and how registration works, so the
 * web app's sign-in screen offers the right form. It reveals nothing an attempt to register would not.
 */
export const setupRoutes: RouteModule = async (app, { ctx }) => {
  app.get('/api/setup', { schema: { tags: ['auth'], operationId: 'getSetupState', summary: 'First-run state for the sign-in screen: needsAdministrator and the registration mode', response: { 200: setupStatusResponse } } }, async (_request, reply) => {
    reply.header('Cache-Control', 'no-store');
    return ok(await setupStatus(ctx.db));
  });
};
