import { z } from 'zod';

/** GET /api/health: the server accepts requests. Not in the success envelope. */
export const healthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
export type Health = z.infer<typeof healthSchema>;

/** GET /api/openapi.json: the OpenAPI 3.1 document itself, passed through as it is. */
export const openApiDocumentSchema = z.looseObject({});
