import { z } from 'zod';

/**
 * The two error bodies of the specification (spec, Errors): `Error` on the upload and file routes,
 * `ApiError` on the rest. Which one a route answers is its row of the route policy table.
 */
export const errorSchema = z.object({ error: z.string() }).meta({ id: 'Error', description: 'An error: what went wrong, for a person to read' });
export const apiErrorSchema = z
  .object({ success: z.literal(false), error: z.string() })
  .meta({ id: 'ApiError', description: 'An error of the JSON API: what went wrong, for a person to read' });

export type ErrorBody = z.infer<typeof errorSchema>;
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;
