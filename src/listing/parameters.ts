import { invalid } from '../errors.ts';
import { canonicalTimeZone, groupings, type GroupBy } from './calendar.ts';
import { foldForSearch } from '../shared/search-text.ts';
import { parseTimestamp, validCalendarDate } from '../shared/instants.ts';
import { MIME_TYPE_MAX_LENGTH } from '../api/vocabulary.ts';

/**
 * The query parameters of GET /api/files and GET /api/files/timeline (spec, GET /api/files), checked
 * and turned into the filters and options the queries use. Every rule of the specification's table
 * lives here; choices it leaves open are in docs/decisions.md, "Listing".
 */

export const sortOrders = ['newest', 'oldest', 'largest', 'smallest', 'name', 'most-viewed', 'least-viewed', 'most-downloaded', 'least-downloaded'] as const;
export type SortBy = (typeof sortOrders)[number];

export const visibilityFilters = ['public', 'private', 'hasPassword'] as const;
export type VisibilityFilter = (typeof visibilityFilters)[number];

export const galleryDirections = ['next', 'previous'] as const;
export type GalleryDirection = (typeof galleryDirections)[number];

export const listingLimits = {
  ids: 100,
  idLength: 128,
  defaultLimit: 24,
  maxLimit: 100,
  searchLength: 500,
  types: 100,
  typeLength: MIME_TYPE_MAX_LENGTH,
} as const;

/** A selection of the account's files; null fields do not filter. */
export interface FileFilters {
  ids: string[] | null;
  /** Folded with foldForSearch(). */
  search: string | null;
  types: string[] | null;
  /** Inclusive lower bound of uploadedAt, epoch ms. */
  from: number | null;
  /** Inclusive upper bound of uploadedAt, epoch ms (dateTo and snapshot combined). */
  until: number | null;
  visibility: VisibilityFilter[] | null;
  folder: { kind: 'folder'; id: string } | { kind: 'unfiled' } | null;
  tag: { kind: 'tag'; id: string } | { kind: 'untagged' } | null;
  /** Images only (the gallery). */
  imagesOnly: boolean;
}

export interface ListQuery {
  filters: FileFilters;
  sortBy: SortBy;
  page: number;
  limit: number;
  gallery: { anchor: string; direction: GalleryDirection } | null;
}

export interface TimelineQuery {
  filters: FileFilters;
  sortBy: SortBy;
  groupBy: GroupBy;
  timeZone: string;
}

export type RawQuery = Record<string, unknown>;

// ASCII controls, whitespace and the comma. Whitespace is Unicode's White_Space, which holds NEL
// (U+0085) where JavaScript's \s does not; \s adds the byte order mark, kept out too.
const badIdCharacter = /[\u0000-\u001f\u007f\s\p{White_Space},]/u;

/** A value given once, as text; undefined when absent. */
function single(raw: RawQuery, name: string): string | undefined {
  const value = raw[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(`${name}: give this parameter once, as a single value`);
  return value;
}

/** Like single(), but an empty value counts as absent (optional text filters). */
function optionalText(raw: RawQuery, name: string): string | undefined {
  const value = single(raw, name);
  return value === undefined || value.trim() === '' ? undefined : value;
}

export function validId(value: string): boolean {
  return value.length > 0 && !badIdCharacter.test(value) && atMostCharacters(value, listingLimits.idLength);
}

/**
 * Whether `value` has at most `limit` characters, counted as code points as names are
 * (docs/decisions.md); a UTF-16 unit count made 65 emoji too long for an ID of 128.
 */
function atMostCharacters(value: string, limit: number): boolean {
  // Past twice the limit in units no count of code points can be within it.
  if (value.length > 2 * limit) return false;
  let characters = 0;
  for (const _ of value) characters++;
  return characters <= limit;
}

/** The selected-ID filter `ids`: 1 to 100 distinct file IDs, one parameter (spec, GET /api/files). */
function parseIds(raw: RawQuery): string[] | null {
  if (Array.isArray(raw.ids)) throw invalid('ids: give the parameter once, as one comma-separated list');
  const value = single(raw, 'ids');
  if (value === undefined) return null;
  const ids = value.split(',');
  if (ids.length > listingLimits.ids) throw invalid(`ids: at most ${listingLimits.ids} file IDs`);
  const seen = new Set<string>();
  for (const id of ids) {
    if (id === '') throw invalid('ids: empty member; give 1 to 100 comma-separated file IDs');
    if (!validId(id)) throw invalid(`ids: "${id.slice(0, 40)}" is not a file ID (1 to ${listingLimits.idLength} characters, no whitespace, comma or control characters)`);
    if (seen.has(id)) throw invalid(`ids: ${id} is listed twice`);
    seen.add(id);
  }
  return ids;
}

function positiveInteger(raw: RawQuery, name: string, fallback: number): number {
  const value = single(raw, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || /^0+$/.test(value)) throw invalid(`${name}: must be a whole number of at least 1`);
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : Number.MAX_SAFE_INTEGER;
}

const isoDate = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A date-only value as a server-local calendar date, or null. */
function parseDateOnly(value: string): { year: number; month: number; day: number } | null {
  const match = isoDate.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return validCalendarDate(year, month, day) ? { year, month, day } : null;
}

/** Server-local midnight starting the given date (the process's time zone, TZ). */
function serverLocalMidnight(date: { year: number; month: number; day: number }): number {
  const local = new Date(2000, date.month - 1, date.day);
  local.setFullYear(date.year, date.month - 1, date.day);
  return local.getTime();
}

const dateRule = 'an ISO 8601 timestamp with a time zone (e.g. 2024-05-01T00:00:00Z) or a date (2024-05-01)';

function parseDateFrom(raw: RawQuery): number | null {
  const value = single(raw, 'dateFrom');
  if (value === undefined) return null;
  const time = parseTimestamp(value);
  if (time !== null) return time;
  // A date alone starts at that day's server-local midnight, as dateTo's date ends with it.
  const date = parseDateOnly(value);
  if (date) return serverLocalMidnight(date);
  throw invalid(`dateFrom: must be ${dateRule}`);
}

function parseDateTo(raw: RawQuery): number | null {
  const value = single(raw, 'dateTo');
  if (value === undefined) return null;
  const time = parseTimestamp(value);
  if (time !== null) return time;
  // Inclusive of the whole final day in server-local time: up to the next local midnight, exclusive.
  const date = parseDateOnly(value);
  if (date) {
    const next = new Date(serverLocalMidnight(date));
    next.setDate(next.getDate() + 1);
    return next.getTime() - 1;
  }
  throw invalid(`dateTo: must be ${dateRule}`);
}

/** `snapshot`: the inclusive upload-time ceiling returned by the timeline, reused across window reads (spec, GET /api/files). */
function parseSnapshot(raw: RawQuery): number | null {
  const value = single(raw, 'snapshot');
  if (value === undefined) return null;
  const time = parseTimestamp(value);
  if (time === null) throw invalid('snapshot: must be an ISO 8601 timestamp with a time zone, as returned by GET /api/files/timeline');
  return time;
}

function parseVisibility(raw: RawQuery): VisibilityFilter[] | null {
  const value = single(raw, 'visibility');
  if (value === undefined) return null;
  const members = value.split(',').map((m) => m.trim());
  const chosen = new Set<VisibilityFilter>();
  for (const member of members) {
    if (!(visibilityFilters as readonly string[]).includes(member)) {
      const what = member === '' ? 'an empty member' : `"${member.slice(0, 40)}"`;
      throw invalid(`visibility: ${what} is not allowed; use public, private and hasPassword, comma-separated`);
    }
    chosen.add(member as VisibilityFilter);
  }
  return [...chosen];
}

function parseTypes(raw: RawQuery): string[] | null {
  const value = optionalText(raw, 'types');
  if (value === undefined) return null;
  const types = [...new Set(value.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
  if (types.length === 0) return null;
  if (types.length > listingLimits.types) throw invalid(`types: at most ${listingLimits.types} MIME types`);
  if (types.some((t) => t.length > listingLimits.typeLength)) throw invalid(`types: a MIME type is at most ${listingLimits.typeLength} characters`);
  return types;
}

function parseSearch(raw: RawQuery): string | null {
  const value = optionalText(raw, 'search');
  if (value === undefined) return null;
  if (!atMostCharacters(value, listingLimits.searchLength)) throw invalid(`search: at most ${listingLimits.searchLength} characters`);
  // Trimmed once folded: an underscore is white space to search, so "sheet_" is "sheet", as
  // "sheet " is, and a search of underscores alone is no search.
  const folded = foldForSearch(value).trim();
  return folded === '' ? null : folded;
}

function parseFolder(raw: RawQuery): FileFilters['folder'] {
  const value = optionalText(raw, 'folder');
  if (value === undefined) return null;
  if (value === 'unfiled') return { kind: 'unfiled' };
  if (!validId(value)) throw invalid('folder: must be a folder ID or "unfiled"');
  return { kind: 'folder', id: value };
}

function parseTag(raw: RawQuery): FileFilters['tag'] {
  const value = optionalText(raw, 'tag');
  if (value === undefined) return null;
  if (value === 'untagged') return { kind: 'untagged' };
  if (!validId(value)) throw invalid('tag: must be a tag ID or "untagged"');
  return { kind: 'tag', id: value };
}

/** Unknown or absent values fall back to newest (spec). */
function parseSortBy(raw: RawQuery): SortBy {
  const value = single(raw, 'sortBy');
  return value !== undefined && (sortOrders as readonly string[]).includes(value) ? (value as SortBy) : 'newest';
}

function parseFilters(raw: RawQuery, withSnapshot: boolean): FileFilters {
  const dateTo = parseDateTo(raw);
  const snapshot = withSnapshot ? parseSnapshot(raw) : null;
  const until = dateTo === null ? snapshot : snapshot === null ? dateTo : Math.min(dateTo, snapshot);
  return {
    ids: parseIds(raw),
    search: parseSearch(raw),
    types: parseTypes(raw),
    from: parseDateFrom(raw),
    until,
    visibility: parseVisibility(raw),
    folder: parseFolder(raw),
    tag: parseTag(raw),
    imagesOnly: false,
  };
}

/** GET /api/files. */
export function parseListQuery(raw: RawQuery): ListQuery {
  const filters = parseFilters(raw, true);
  const sortBy = parseSortBy(raw);
  const page = positiveInteger(raw, 'page', 1);
  const limit = Math.min(positiveInteger(raw, 'limit', listingLimits.defaultLimit), listingLimits.maxLimit);
  // Gallery anchor: galleryAnchor and galleryDirection come as a pair, else 400 (spec, GET /api/files).
  const anchor = single(raw, 'galleryAnchor');
  const direction = single(raw, 'galleryDirection');
  if ((anchor === undefined) !== (direction === undefined)) {
    throw invalid('galleryAnchor and galleryDirection: give both (an image file ID and next or previous) or neither');
  }
  let gallery: ListQuery['gallery'] = null;
  if (anchor !== undefined && direction !== undefined) {
    if (!validId(anchor)) throw invalid('galleryAnchor: must be a file ID');
    if (!(galleryDirections as readonly string[]).includes(direction)) throw invalid('galleryDirection: must be next or previous');
    gallery = { anchor, direction: direction as GalleryDirection };
    filters.imagesOnly = true;
  }
  return { filters, sortBy, page, limit, gallery };
}

/** GET /api/files/timeline: the list's filters (no page, limit, gallery or snapshot), groupBy, timezone. */
export function parseTimelineQuery(raw: RawQuery): TimelineQuery {
  const filters = parseFilters(raw, false);
  const sortBy = parseSortBy(raw);
  const groupByValue = single(raw, 'groupBy');
  if (groupByValue !== undefined && !(groupings as readonly string[]).includes(groupByValue)) throw invalid('groupBy: must be none, month, week or year');
  const zoneValue = single(raw, 'timezone');
  const timeZone = zoneValue === undefined ? 'UTC' : canonicalTimeZone(zoneValue);
  if (timeZone === null) throw invalid('timezone: must be an IANA time zone name, e.g. Europe/Berlin (a UTC offset is none)');
  return { filters, sortBy, groupBy: (groupByValue as GroupBy | undefined) ?? 'none', timeZone };
}

/** The filter set of a listing without conditions. */
export const NO_FILTERS: Readonly<FileFilters> = { ids: null, search: null, types: null, from: null, until: null, visibility: null, folder: null, tag: null, imagesOnly: false };

/** True when no condition narrows the account's files (the total is then the account's file count). */
export function isUnfiltered(filters: FileFilters): boolean {
  return (
    filters.ids === null &&
    filters.search === null &&
    filters.types === null &&
    filters.from === null &&
    filters.until === null &&
    filters.visibility === null &&
    filters.folder === null &&
    filters.tag === null &&
    !filters.imagesOnly
  );
}
