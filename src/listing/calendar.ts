/**
 * Calendar math for the timeline: the local calendar fields of an instant in an IANA time zone, the
 * UTC instant at which a local day starts, and month, ISO-week and year buckets with
 * daylight-saving-correct boundaries. Only `Intl.DateTimeFormat` is used (no Temporal): the zone's
 * UTC offset at an instant is read from the formatted local wall clock.
 */

import { timelineGroupings } from '../api/files.ts';

export const groupings = timelineGroupings;
export type GroupBy = (typeof groupings)[number];

/** A calendar bucket: `from` inclusive, `to` exclusive, both epoch milliseconds. */
export interface CalendarBucket {
  key: string;
  from: number;
  to: number;
}

export interface LocalDate {
  year: number;
  /** 1–12 */
  month: number;
  /** 1–31 */
  day: number;
}

interface WallClock extends LocalDate {
  hour: number;
  minute: number;
  second: number;
}

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size > 1000) formatters.clear();
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

const canonicalNames = new Map<string, string>();

/**
 * The name to echo for a time zone Intl knows (IANA names, case-insensitively, and UTC), or null.
 * ICU answers with its own canonical IDs, which keep IANA's retired spellings (Asia/Calcutta for
 * Asia/Kolkata, Europe/Kiev for Europe/Kyiv): its answer is used only to put the client's own name
 * in its proper case, and a name ICU counts as another's alias is echoed as the client wrote it.
 */
export function canonicalTimeZone(timeZone: string): string | null {
  if (timeZone.length === 0 || timeZone.length > 64) return null;
  // Intl also takes a UTC offset (`+05:00`, `-0330`), which is no IANA name (the specification's
  // `timezone`) and has no daylight-saving changes: a client sending its offset of today would get
  // the buckets of half its year an hour off. A fixed offset has its IANA name (`Etc/GMT-5`).
  if (/^[+\-\u2212]/.test(timeZone)) return null;
  // Making a formatter to ask costs about 0.13 ms, on every timeline request; the answer never changes.
  const known = canonicalNames.get(timeZone);
  if (known) return known;
  try {
    const resolved = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
    const canonical = resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone;
    if (canonicalNames.size >= 1000) canonicalNames.clear();
    canonicalNames.set(timeZone, canonical);
    return canonical;
  } catch {
    return null;
  }
}

// "1/14/2024 AD, 23:05:09": en-US with an era, so years before 1 AD stay distinguishable.
const wallClockPattern = /^(\d+)\/(\d+)\/(\d+) (AD|BC), (\d+):(\d+):(\d+)$/;

/** The local wall clock at `instant` (whole seconds). */
export function wallClock(instant: number, timeZone: string): WallClock {
  const text = formatterFor(timeZone).format(instant).replace(/\u202f|\u00a0/g, ' ');
  const match = wallClockPattern.exec(text);
  if (!match) throw new Error(`unexpected date format from Intl: ${text}`);
  const year = match[4] === 'BC' ? 1 - Number(match[3]) : Number(match[3]);
  return { year, month: Number(match[1]), day: Number(match[2]), hour: Number(match[5]), minute: Number(match[6]), second: Number(match[7]) };
}

/** Milliseconds since the epoch of a wall-clock reading taken as UTC (years 0–99 included). */
function utcOf(fields: LocalDate & Partial<WallClock>): number {
  const date = new Date(Date.UTC(2000, fields.month - 1, fields.day, fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0));
  date.setUTCFullYear(fields.year, fields.month - 1, fields.day);
  return date.getTime();
}

/** The zone's offset from UTC at `instant`, in milliseconds (local = UTC + offset). */
export function offsetAt(instant: number, timeZone: string): number {
  const whole = Math.floor(instant / 1000) * 1000;
  return utcOf(wallClock(whole, timeZone)) - whole;
}

/** The local calendar date at `instant`. */
export function localDateOf(instant: number, timeZone: string): LocalDate {
  const { year, month, day } = wallClock(instant, timeZone);
  return { year, month, day };
}

/** A calendar date `days` after `date` (normalises overflowing days and months). */
export function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(utcOf(date) + days * DAY_MS);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function addMonths(date: LocalDate, months: number): LocalDate {
  const index = date.year * 12 + (date.month - 1) + months;
  return { year: Math.floor(index / 12), month: (((index % 12) + 12) % 12) + 1, day: date.day };
}

/**
 * The UTC instant at which the local day `date` starts in `timeZone`: local midnight, found by
 * offset iteration with the offsets just before and after it. When midnight is skipped by a
 * daylight-saving jump the day starts at the jump (the first instant of that date); when it occurs
 * twice, at its first occurrence.
 */
export function startOfLocalDay(date: LocalDate, timeZone: string): number {
  const wall = utcOf(date);
  const before = offsetAt(wall - DAY_MS, timeZone);
  // Nearly always midnight read with the offset of the day before, which is then the day's start:
  // a zone whose offset falls back across midnight has its larger offset before, and so the first
  // of the two midnights; one that jumps forward has only one midnight, or none. One reading of the
  // zone fewer per boundary (a timeline of 157 weeks reads it about 470 times).
  if (offsetAt(wall - before, timeZone) === before) return wall - before;
  const after = offsetAt(wall + DAY_MS, timeZone);
  const candidates = before === after ? [wall - before] : [wall - before, wall - after].sort((a, b) => a - b);
  for (const candidate of candidates) {
    if (candidate + offsetAt(candidate, timeZone) === wall) return candidate;
  }
  // Midnight does not exist (a gap): the day starts where the clock jumps past it, which is the
  // wall time read with the offset that applied before the jump.
  if (before !== after) return wall - before;
  // More than one transition within a day of midnight (not in the tz database since 1900):
  // search for the first instant whose local date is not before `date`.
  let low = wall - 2 * DAY_MS;
  let high = wall + 2 * DAY_MS;
  while (high - low > 1000) {
    const mid = Math.floor((low + high) / 2000) * 1000;
    if (utcOf(localDateOf(mid, timeZone)) >= wall) high = mid;
    else low = mid;
  }
  return high;
}

function pad(value: number, width: number): string {
  const text = String(Math.abs(value)).padStart(width, '0');
  return value < 0 ? `-${text}` : text;
}

/** Monday of the ISO week containing `date`. */
function mondayOf(date: LocalDate): LocalDate {
  const weekday = new Date(utcOf(date)).getUTCDay(); // 0 = Sunday
  return addDays(date, -((weekday + 6) % 7));
}

/** The ISO 8601 week key (`YYYY-Www`) of the week starting on `monday`. */
export function isoWeekKey(monday: LocalDate): string {
  const thursday = addDays(monday, 3);
  const firstOfYear = utcOf({ year: thursday.year, month: 1, day: 1 });
  const week = Math.floor((utcOf(thursday) - firstOfYear) / DAY_MS / 7) + 1;
  return `${pad(thursday.year, 4)}-W${pad(week, 2)}`;
}

/** The first local day of the bucket containing `date`, and the first day of the next one. */
function bucketDays(date: LocalDate, groupBy: Exclude<GroupBy, 'none'>): { first: LocalDate; next: LocalDate; key: string } {
  switch (groupBy) {
    case 'year': {
      const first = { year: date.year, month: 1, day: 1 };
      return { first, next: { year: date.year + 1, month: 1, day: 1 }, key: pad(date.year, 4) };
    }
    case 'month': {
      const first = { year: date.year, month: date.month, day: 1 };
      return { first, next: addMonths(first, 1), key: `${pad(date.year, 4)}-${pad(date.month, 2)}` };
    }
    case 'week': {
      const first = mondayOf(date);
      return { first, next: addDays(first, 7), key: isoWeekKey(first) };
    }
  }
}

/** The bucket (month, ISO week starting Monday, or year; `none` is month) that contains `instant`. */
export function bucketOf(instant: number, groupBy: GroupBy, timeZone: string): CalendarBucket {
  const unit = groupBy === 'none' ? 'month' : groupBy;
  const { first, next, key } = bucketDays(localDateOf(instant, timeZone), unit);
  return { key, from: startOfLocalDay(first, timeZone), to: startOfLocalDay(next, timeZone) };
}

/**
 * Every bucket from the one containing `first` to the one containing `last` (inclusive), oldest first.
 * Consecutive buckets share their boundary, so each boundary is computed once.
 */
export function bucketsBetween(first: number, last: number, groupBy: GroupBy, timeZone: string): CalendarBucket[] {
  const unit = groupBy === 'none' ? 'month' : groupBy;
  const buckets: CalendarBucket[] = [];
  let days = bucketDays(localDateOf(first, timeZone), unit);
  let from = startOfLocalDay(days.first, timeZone);
  for (;;) {
    const to = startOfLocalDay(days.next, timeZone);
    buckets.push({ key: days.key, from, to });
    if (to > last) return buckets;
    days = bucketDays(days.next, unit);
    from = to;
  }
}
