import type { RouteModule } from '../route-module.ts';

export const healthRoutes: RouteModule = async (app) => {
  app.get('/api/health', { schema: { hide: false, tags: ['meta'], summary: 'Liveness: 200 once the server accepts requests' } }, async () => ({ status: 'ok' }));
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
};
