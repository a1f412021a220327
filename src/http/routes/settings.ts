import type { RouteModule } from '../route-module.ts';
import { instanceSettingsInput, readSettings, updateSettings } from '../../settings/instance-settings.ts';
import { ok } from '../responses.ts';
import { instanceSettingsResponse } from '../../api/admin.ts';

export const settingsRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['administration'];
  app.get('/api/settings', { schema: { tags, summary: 'Instance settings', response: { 200: instanceSettingsResponse } } }, async () => ok(await readSettings(ctx.db)));
  app.patch('/api/settings', { schema: { tags, summary: 'Change instance settings', body: instanceSettingsInput.partial(), response: { 200: instanceSettingsResponse } } }, async (request) =>
    ok(await updateSettings(ctx.db, request.body)),
  );
};
