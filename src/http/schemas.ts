import { z } from 'zod';

/** Path parameter for a record ID; anything longer or stranger cannot be one of ours. */
/**
 * A record's ID, or a name, in a path: any text the router passes (it answers 414 past
 * MAX_PARAM_LENGTH). One no record has, however long, is the route's 404, as an unknown ID is
 * (contract; the specification lists no 400 for DELETE /api/urls/{id}): a bound here made an
 * over-long ID a 400.
 */
export const pathText = z.string().min(1);
export const idParams = z.strictObject({ id: pathText });

/** An instant: ISO 8601 with a time zone, up to the year 9999 (src/shared/instants.ts). */
export { instantText as isoDateTime } from '../shared/instants.ts';


/**
 * A query parameter that must be given once, as text. A repeated parameter arrives as an array and
 * is told so, not that it is missing. `missing` says what the parameter should hold.
 */
export function onceQueryText(missing = 'is required') {
  return z.string({ error: (issue) => (issue.input === undefined ? missing : Array.isArray(issue.input) ? 'give the parameter once' : 'must be text') });
}
