import { z } from 'zod';

/**
 * The latest instant Hoard takes: the end of the year 9999 in UTC. ISO 8601 offsets reach past it
 * (`9999-12-31T23:59:59-23:59` is in the year 10000), and such an instant was stored and then
 * returned as `+010000-01-01T…`, which no parser, Hoard's own included, reads back.
 */
export const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

// ISO 8601 as scripts write it: seconds and their fraction optional, the fraction after a point or
// a comma (GNU `date -Ins` writes a comma), `T` or a space between date and time (RFC 3339 allows
// the space), the zone `Z`, `±hh:mm` or `±hhmm` (`date +%Y-%m-%dT%H:%M:%S%z`), either case. One rule
// for every instant Hoard reads: the listing's date filters took some of these while an expiry
// refused them.
const isoTimestamp = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/i;

export function validCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  return month >= 1 && month <= 12 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** Epoch ms of an ISO 8601 timestamp with a zone (`Z`, `±hh:mm` or `±hhmm`), or null when it is not one. */
export function parseTimestamp(value: string): number | null {
  const match = isoTimestamp.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s] = match;
  if (!validCalendarDate(Number(y), Number(mo), Number(d)) || Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59) return null;
  const zone = match[8]!.toUpperCase();
  if (zone !== 'Z' && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(-2)) > 59)) return null;
  const normalised = value.toUpperCase().replace(' ', 'T').replace(',', '.').replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const time = Date.parse(normalised);
  return Number.isNaN(time) ? null : time;
}

/** An ISO 8601 timestamp with a time zone, no later than LATEST_INSTANT. */
export function isInstant(text: string): boolean {
  const time = parseTimestamp(text);
  return time !== null && time <= LATEST_INSTANT;
}

/** The instant of a text isInstant accepted. */
export function instantOf(text: string): Date {
  return new Date(parseTimestamp(text)!);
}

export const INSTANT_RULE = 'must be an ISO 8601 timestamp with a time zone, at the latest in the year 9999';

/** An instant given as text: ISO 8601 with a time zone, up to the year 9999. */
export const instantText = z.string({ error: INSTANT_RULE }).refine(isInstant, { message: INSTANT_RULE }).meta({ format: 'date-time' });
