import { z } from 'zod';

/** The success envelope of the JSON API (spec, Endpoints): `{ success: true, data }`. */
export function success<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

/** Timestamps are ISO 8601 strings in UTC. */
export const timestamp = z.string().meta({ format: 'date-time' });
