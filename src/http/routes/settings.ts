import { actorOf, principalOf, type RouteModule } from '../route-module.ts';
import { changesBetween, recordAdminAction } from '../../audit/admin-actions.ts';
import { instanceSettingsInput, readSettings } from '../../settings/instance-settings.ts';
import { updateSettingsAs } from '../../accounts/settings-changes.ts';
import { afterSettingsChange, mediaProgress } from '../../media/backfill.ts';
import { ok } from '../responses.ts';
import { tempLimitProblem } from '../../shared/chunk-limits.ts';
import { instanceSettingsResponse, mediaProgressResponse } from '../../api/admin.ts';

export const settingsRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['administration'];
  app.get('/api/settings', { schema: { tags, operationId: 'getSettings', summary: 'Instance settings', response: { 200: instanceSettingsResponse } } }, async () => ok(await readSettings(ctx.db)));
  app.patch('/api/settings', { schema: { tags, operationId: 'updateSettings', summary: 'Change instance settings', body: instanceSettingsInput.partial(), response: { 200: instanceSettingsResponse } } }, async (request) => {
    const { before, after } = await updateSettingsAs(ctx.db, principalOf(request).permissions, request.body, async (trx, settings) => {
      const changes = changesBetween(settings.before, settings.after);
      if (changes.length > 0) await recordAdminAction(trx, { actor: actorOf(request), action: 'settings.change', target: { id: null, label: 'Instance settings' }, changes });
    });
    await afterSettingsChange(ctx, before, after);
    // Said when the change makes it so, as at every start while it stays so (src/server.ts).
    const roomProblem = tempLimitProblem(after.maxUploadSizeBytes, ctx.config.chunkedUploadTempLimit);
    if (roomProblem !== null && tempLimitProblem(before.maxUploadSizeBytes, ctx.config.chunkedUploadTempLimit) !== roomProblem) request.log.warn(roomProblem);
    return ok(after);
  });
  app.get(
    '/api/settings/media',
    { schema: { tags, operationId: 'getMediaProgress', summary: 'Progress of thumbnails and text recognition, and of their backfill', response: { 200: mediaProgressResponse } } },
    async () => ok(await mediaProgress(ctx)),
  );
};
