import { z } from 'zod';

/**
 * The latest instant Hoard takes: the end of the year 9999 in UTC. ISO 8601 offsets reach past it
 * (`9999-12-31T23:59:59-23:59` is in the year 10000), and such an instant was stored and then
 * returned as `+010000-01-01T…`, which no parser, Hoard's own included, reads back.
 */
export const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const isoShape = z.iso.datetime({ offset: true });

/** An ISO 8601 timestamp with a time zone, no later than LATEST_INSTANT. */
export function isInstant(text: string): boolean {
  return isoShape.safeParse(text).success && Date.parse(text) <= LATEST_INSTANT;
}

export const INSTANT_RULE = 'must be an ISO 8601 timestamp with a time zone, at the latest in the year 9999';

/** An instant given as text: ISO 8601 with a time zone, up to the year 9999. */
export const instantText = z.string({ error: INSTANT_RULE }).refine(isInstant, { message: INSTANT_RULE }).meta({ format: 'date-time' });
