import type { RouteModule } from '../route-module.ts';
import { instanceSettingsSchema, readSettings, updateSettings } from '../../settings/instance-settings.ts';

export const settingsRoutes: RouteModule = async (app, { ctx }) => {
  const tags = ['administration'];
  app.get('/api/settings', { schema: { tags, summary: 'Instance settings' } }, async () => ({ success: true, data: await readSettings(ctx.db) }));
  app.patch('/api/settings', { schema: { tags, summary: 'Change instance settings', body: instanceSettingsSchema.partial() } }, async (request) => ({
    success: true,
    data: await updateSettings(ctx.db, request.body),
  }));
};
