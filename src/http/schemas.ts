import { z } from 'zod';

/**
 * A record's ID, or a name, in a path: any text the router passes (it answers 414 past
 * MAX_PARAM_LENGTH). One no record has, however long or empty, is the route's 404, as an unknown ID
 * is (contract; the specification lists no 400 for DELETE /api/urls/{id}): a bound here made an
 * over-long ID a 400, and a share link cut back to `/<urlId>/` a JSON 400 about a string too small.
 */
export const pathText = z.string();
export const idParams = z.strictObject({ id: pathText });
/** The account's password, asked again by what a session may do only with it (contract §8). */
export const passwordBody = z.strictObject({ password: z.string().min(1).max(1024) });

/**
 * A file's name as a body gives it: not blank, at most `max` characters, whole characters (half of
 * an emoji alone, which JSON can spell, was stored as a replacement character).
 */
export const fileNameText = (max: number) =>
  z
    .string()
    .trim()
    .min(1, 'must not be blank')
    .max(max, `must be at most ${max} characters`)
    .refine((name) => name.isWellFormed(), 'must be valid Unicode text (it holds half of a character, a lone surrogate)');

/** An instant: ISO 8601 with a time zone, up to the year 9999 (src/shared/instants.ts). */
export { instantText as isoDateTime } from '../shared/instants.ts';


/**
 * A query parameter that must be given once, as text. A repeated parameter arrives as an array and
 * is told so, not that it is missing. `missing` says what the parameter should hold.
 */
export function onceQueryText(missing = 'is required') {
  return z.string({ error: (issue) => (issue.input === undefined ? missing : Array.isArray(issue.input) ? 'give the parameter once' : 'must be text') });
}
