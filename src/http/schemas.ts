import { z } from 'zod';

/** Path parameter for a record ID; anything longer or stranger cannot be one of ours. */
export const idParams = z.strictObject({ id: z.string().min(1).max(128) });

export const isoDateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp with a time zone' });

