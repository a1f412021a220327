import { z } from 'zod';

/** Path parameter for a record ID; anything longer or stranger cannot be one of ours. */
export const idParams = z.strictObject({ id: z.string().min(1).max(128) });

export const isoDateTime = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp with a time zone' });


/**
 * A query parameter that must be given once, as text. A repeated parameter arrives as an array and
 * is told so, not that it is missing. `missing` says what the parameter should hold.
 */
export function onceQueryText(missing = 'is required') {
  return z.string({ error: (issue) => (issue.input === undefined ? missing : Array.isArray(issue.input) ? 'give the parameter once' : 'must be text') });
}
