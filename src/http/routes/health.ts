import type { RouteModule } from '../route-module.ts';
import { healthSchema, openApiDocumentSchema } from '../../api/meta.ts';

export const healthRoutes: RouteModule = async (app) => {
  app.get('/api/health', { schema: { hide: false, tags: ['meta'], operationId: 'getHealth', summary: 'Liveness: 200 once the server accepts requests', response: { 200: healthSchema } } }, async () => ({ status: 'ok' as const }));
  app.get(
    '/api/openapi.json',
    { schema: { tags: ['meta'], operationId: 'getOpenApiDocument', summary: 'This OpenAPI 3.1 document, generated from the routes themselves', response: { 200: openApiDocumentSchema } } },
    // A shallow copy: the document's type is an interface, which a record of fields does not accept.
    async () => ({ ...app.swagger() }),
  );
};
