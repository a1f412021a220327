import { sql, type Expression, type SelectQueryBuilder } from 'kysely';
import { dialectOf, type Db, type Dialect } from '../db/database.ts';
import { integerRows } from '../db/integer-rows.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { bucketOf, bucketsBetween, type CalendarBucket, type GroupBy } from './calendar.ts';
import { accountFileCount, assertOwnedSelection, countDocuments, countedTotal, documentsInUploadOrder, filteredFiles, firstDocumentFrom, isDateSort, searchAccess, searchDocuments, searchesDocuments, searchesNamesApart, searchMatchTimes, tagOfItsRows, tagRows, type Access } from './file-query.ts';
import { isUnfiltered, NO_FILTERS, type FileFilters, type TimelineQuery } from './parameters.ts';
import type { Timeline } from '../api/files.ts';
import { discourageScans, readsApart, refreshStatisticsIfStale } from './planner.ts';

const DAY_MS = 86_400_000;
const shortestBucket: Record<GroupBy, number> = { none: 28 * DAY_MS, month: 28 * DAY_MS, week: 7 * DAY_MS, year: 365 * DAY_MS };
/**
 * Up to this many calendar buckets between the oldest and newest selected file, the database counts
 * each bucket with an index range (one statement); beyond it (files spread over centuries), the
 * upload times are read in order and bucketed here, which costs one row per file instead.
 */
const MAX_SQL_BUCKETS = 3000;
/**
 * SQLite, a tag with other filters (no search) that holds at most this share of the account: its
 * files are read once through its own index and bucketed here (a tag alone is counted from its rows,
 * tagCounts). Counted per bucket instead, SQLite walks the
 * account's whole upload-order index and checks each file. Measured at a million files: the walk
 * costs about 0.22 µs per file of the account (a look-up of the tag's list per file), reading
 * through the tag's index 2.5 µs per file of the tag (a look-up of its row). They cost the same near a
 * twelfth: a tag of 30,000 files took 216 ms walked and 75 ms read through its index. A folder's
 * buckets are ranges of its own upload-order index (migration 0026-folder-timeline), cheaper than
 * either at any size.
 */
const OWN_INDEX_SHARE = 1 / 12;

/**
 * GET /api/files/timeline: counts of the selected files per calendar bucket in `timeZone`, with a
 * fresh snapshot that is also the upload-time ceiling of the counts.
 *
 * The snapshot is taken after waiting for uploads in flight on the account (uploads hold the account
 * row lock from before they pick their upload time until they commit; SQLite has one writer and one
 * connection), and it is one millisecond in the past, so every file with an upload time at or before
 * it is already counted and every later upload gets a later time: window reads with this snapshot
 * add up to `total` however many files arrive in between.
 */
export async function fileTimeline(db: Db, reader: Db, dialect: Dialect, userId: string, query: TimelineQuery): Promise<Timeline> {
  const source = readsApart(dialect, query.filters) ? reader : db;
  await assertOwnedSelection(source, userId, query.filters);
  refreshStatisticsIfStale(db, dialect);
  if (dialect === 'sqlite') {
    // SQLite has one writer: once this transaction holds the write lock, no upload is between
    // picking its time and committing, and every later one picks a later time than the snapshot.
    // The counts need not hold the lock: they read at least what was committed before it, and the
    // snapshot is their ceiling.
    const snapshot = await db.transaction().execute(async () => Date.now() - 1);
    return countedTimeline(source, dialect, userId, query, snapshot);
  }
  return db.transaction().execute(async (trx) => {
    await sql`select 1 from ${sql.table('users')} where ${sql.ref('id')} = ${userId} for share`.execute(trx);
    await discourageScans(trx, dialect, query.filters);
    return countedTimeline(trx, dialect, userId, query, Date.now() - 1);
  });
}

async function countedTimeline(trx: Executor, dialect: Dialect, userId: string, query: TimelineQuery, snapshot: number): Promise<Timeline> {
  const order = query.sortBy === 'oldest' ? 'oldest' : 'newest';
  const filters: FileFilters = { ...query.filters, until: query.filters.until === null ? snapshot : Math.min(query.filters.until, snapshot) };
  const dated = query.filters.from !== null || query.filters.until !== null;

  let counted: Counted[];
  if (!isDateSort(query.sortBy) && untaggedAlone(filters)) {
    // One undated bucket of the untagged files, counted as their calendar buckets are; it starts at
    // the oldest of them, found by walking the account's upload order from its start.
    const count = (await untaggedCounts(trx, dialect, userId, filters, 'year', 'UTC')).reduce((sum, b) => sum + b.count, 0);
    const oldest = count === 0 ? undefined : await filteredFiles(trx, dialect, userId, filters).select('files.createdAt').orderBy('files.createdAt').limit(1).executeTakeFirst();
    counted = oldest ? [{ key: 'all', from: Number(oldest.createdAt), to: snapshot + 1, count }] : [];
  } else if (!isDateSort(query.sortBy)) {
    // One undated bucket: from the oldest selected upload to just after the snapshot.
    const access = tagOfItsRows(filters) === null ? await readOnce(trx, dialect, userId, filters, dated) : null;
    const row = await trx
      .selectFrom(selectedTimes(trx, dialect, userId, filters, access ?? 'walk'))
      .select((eb) => [eb.fn.countAll<number | string>().as('n'), eb.fn.min('m.t').as('first')])
      .executeTakeFirstOrThrow();
    const count = Number(row.n);
    counted = count === 0 ? [] : [{ key: 'all', from: Number(row.first), to: snapshot + 1, count }];
  } else {
    counted = await calendarCounts(trx, dialect, userId, filters, dated, query.groupBy, query.timeZone);
    if (order === 'newest') counted.reverse();
  }
  return {
    total: counted.reduce((sum, b) => sum + b.count, 0),
    snapshot: new Date(snapshot).toISOString(),
    groupBy: query.groupBy,
    timezone: query.timeZone,
    order,
    buckets: counted.map((b) => ({ key: b.key, from: new Date(b.from).toISOString(), to: new Date(b.to).toISOString(), count: b.count })),
  };
}

type Counted = CalendarBucket & { count: number };

/**
 * The upload times (`m.t`) of the selected files: a search alone on PostgreSQL from the table of
 * names (searchMatchTimes), any other selection from the files' rows, read as `access` says.
 */
function selectedTimes(trx: Executor, dialect: Dialect, userId: string, filters: FileFilters, access: Access = 'walk') {
  const times: SelectQueryBuilder<any, any, { t: number | string }> =
    tagOfItsRows(filters) !== null
      ? tagTimes(trx, filters)
      : searchesNamesApart(dialect, filters)
        ? searchMatchTimes(trx, userId, filters)
        : filteredFiles(trx, dialect, userId, filters, access).select('files.createdAt as t');
  return times.as('m');
}

/**
 * The first and last upload of a selection, each from a scalar subquery (`bound`: its min() or
 * max() as `t`), so that each is one probe of the index that orders the selection; null when it is
 * empty.
 */
async function firstAndLast(trx: Executor, bound: (end: 'min' | 'max') => SelectQueryBuilder<any, any, { t: unknown }>): Promise<{ first: number; last: number } | null> {
  const range = await trx
    .selectNoFrom((eb) => [eb.selectFrom(bound('min').as('s')).select('s.t').as('first'), eb.selectFrom(bound('max').as('s')).select('s.t').as('last')])
    .executeTakeFirstOrThrow();
  return range.first === null || range.last === null ? null : { first: Number(range.first), last: Number(range.last) };
}

/** The first and last upload of the selected files, or null when there are none. */
function uploadSpan(trx: Executor, dialect: Dialect, userId: string, filters: FileFilters): Promise<{ first: number; last: number } | null> {
  return firstAndLast(trx, (end) => filteredFiles(trx, dialect, userId, filters).select((e) => e.fn[end]('files.createdAt').as('t')));
}

/**
 * Per bucket, the rows `perBucket` counts between `b.lo` (inclusive) and `b.hi`, the bucket clipped
 * to the dates and the snapshot, so that range is the subquery's only condition on the upload time
 * and just that part of its index is read: one statement for every bucket.
 */
async function countPerBucket(trx: Executor, dialect: Dialect, buckets: CalendarBucket[], lowest: number, highest: number, perBucket: SelectQueryBuilder<any, any, { n: unknown }>): Promise<Map<number, number>> {
  const bounds = integerRows(
    dialect,
    3,
    buckets.map((b, i) => [i, Math.max(b.from, lowest), Math.min(b.to, highest)]),
  );
  const result = await sql<{ i: number; n: number }>`
    with b(i, lo, hi) as (${bounds})
    select b.i as i, (${perBucket}) as n from b`.execute(trx);
  return new Map(result.rows.map((row) => [Number(row.i), Number(row.n)]));
}

/**
 * A selection's nonempty calendar buckets between its first and last upload (`range`; none when it
 * is null), counted together by `count`; when that span holds more than MAX_SQL_BUCKETS buckets, its
 * upload times (`times`, oldest first) are bucketed here instead.
 */
async function inBuckets(
  range: { first: number; last: number } | null,
  groupBy: GroupBy,
  timeZone: string,
  times: () => Promise<number[]>,
  count: (buckets: CalendarBucket[]) => Promise<Map<number, number>>,
): Promise<Counted[]> {
  if (!range) return [];
  if ((range.last - range.first) / shortestBucket[groupBy] > MAX_SQL_BUCKETS) return bucketInOrder(await times(), groupBy, timeZone);
  const buckets = bucketsBetween(range.first, range.last, groupBy, timeZone);
  const counts = await count(buckets);
  return buckets.map((b, i) => ({ ...b, count: counts.get(i) ?? 0 })).filter((b) => b.count > 0);
}

/** The upload times of the selected files, oldest first. */
async function uploadTimes(trx: Executor, dialect: Dialect, userId: string, filters: FileFilters): Promise<number[]> {
  const rows = await filteredFiles(trx, dialect, userId, filters).select('files.createdAt').orderBy('files.createdAt').execute();
  return rows.map((row) => Number(row.createdAt));
}

/** The dates asked for, and the snapshot, as the bounds of a half-open range of upload times. */
function dateBounds(filters: FileFilters): { lowest: number; highest: number } {
  return { lowest: filters.from ?? -Infinity, highest: filters.until === null ? Infinity : filters.until + 1 };
}

/** Whether `untagged` is the only filter besides dates. */
function untaggedAlone(filters: FileFilters): boolean {
  return filters.tag?.kind === 'untagged' && isUnfiltered({ ...filters, tag: null, from: null, until: null });
}

/**
 * The calendar buckets of the untagged files: per bucket, the account's uploads (its counts per
 * quarter hour and day, countsFromSlots) less its tagged files', a range of the index of tagged files
 * in upload order (migration 0031-tagged-files). The buckets span the account's uploads within the
 * dates; empty ones are dropped. Before, every file of the account was looked up among its tagged
 * files: 0.73–0.75 s at a million files.
 */
async function untaggedCounts(trx: Executor, dialect: Dialect, userId: string, filters: FileFilters, groupBy: GroupBy, timeZone: string): Promise<Counted[]> {
  const range = await uploadSpan(trx, dialect, userId, { ...NO_FILTERS, from: filters.from, until: filters.until });
  const { lowest, highest } = dateBounds(filters);
  // The literal 1 lets SQLite see that the partial index of tagged files holds these rows.
  const perBucket = forAccount(trx, userId)
    .selectFrom('files')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('files.tagged', '=', sql.lit(1))
    .where('files.createdAt', '>=', sql.ref<number>('b.lo'))
    .where('files.createdAt', '<', sql.ref<number>('b.hi'));
  return inBuckets(
    range,
    groupBy,
    timeZone,
    () => uploadTimes(trx, dialect, userId, filters),
    async (buckets) => {
      const uploads = await countsFromSlots(trx, userId, buckets, lowest, highest);
      const tagged = await countPerBucket(trx, dialect, buckets, lowest, highest, perBucket);
      return new Map(buckets.map((_, i) => [i, (uploads.get(i) ?? 0) - (tagged.get(i) ?? 0)]));
    },
  );
}

/** The upload times of a tag's files (with a folder, those in it) within the dates, from its rows alone (tagRows). */
function tagTimes(trx: Executor, filters: FileFilters) {
  return tagRows(trx, filters)!.select('fileTags.createdAt as t') as SelectQueryBuilder<any, any, { t: number | string }>;
}

/**
 * A tag's calendar buckets: the first and last upload and each bucket's count are ranges of the
 * tag's rows in upload order (tagTimes), whatever share of the account the tag holds. Before, a
 * small tag's files were each looked up (2.5 µs a file) and a large one's buckets walked the
 * account's upload order: a tag of 30,000 among a million files took 62–74 ms by month on SQLite.
 */
async function tagCounts(trx: Executor, dialect: Dialect, filters: FileFilters, groupBy: GroupBy, timeZone: string): Promise<Counted[]> {
  const range = await firstAndLast(trx, (end) => tagTimes(trx, filters).clearSelect().select((e) => e.fn[end]('fileTags.createdAt').as('t')));
  const perBucket = tagTimes(trx, { ...filters, from: null, until: null })
    .clearSelect()
    .select((eb) => eb.fn.countAll().as('n'))
    .where('fileTags.createdAt', '>=', sql.ref<number>('b.lo'))
    .where('fileTags.createdAt', '<', sql.ref<number>('b.hi'));
  const { lowest, highest } = dateBounds(filters);
  return inBuckets(
    range,
    groupBy,
    timeZone,
    async () => (await tagTimes(trx, filters).orderBy('t').execute()).map((row) => Number(row.t)),
    (buckets) => countPerBucket(trx, dialect, buckets, lowest, highest, perBucket),
  );
}

/**
 * How a timeline reads its selection when it reads it once, or null when it counts each bucket as a
 * range of an upload-order index (the account's, or a folder's): a SQLite search through the trigram
 * index as the listing reads it (searchAccess), or a tag holding a small share of the account
 * through its own index (OWN_INDEX_SHARE; its count from migration 0018-file-counts) when no dates
 * and no folder are asked for, with another filter (a tag alone is counted from its rows: tagCounts).
 */
async function readOnce(trx: Executor, dialect: Dialect, userId: string, filters: FileFilters, dated: boolean): Promise<Access | null> {
  const search = await searchAccess(trx, dialect, userId, filters);
  // Dates asked for bound the walk, not the read through a tag's index; a folder's buckets are
  // ranges of its own index.
  if (search || dialect !== 'sqlite' || filters.search !== null || dated) return search;
  const { tag, folder } = filters;
  if (tag?.kind !== 'tag' || folder !== null) return null;
  const selected = await countedTotal(trx, userId, { ...NO_FILTERS, tag });
  return selected !== null && selected <= (await accountFileCount(trx, userId)) * OWN_INDEX_SHARE ? 'matches' : null;
}

/** Nonempty calendar buckets of the selected files, oldest first. */
async function calendarCounts(trx: Executor, dialect: Dialect, userId: string, filters: FileFilters, dated: boolean, groupBy: GroupBy, timeZone: string): Promise<Counted[]> {
  if (searchesDocuments(dialect, filters) && (await documentsInUploadOrder(trx, userId))) return documentCounts(trx, userId, filters, groupBy, timeZone);
  if (tagOfItsRows(filters) !== null) return tagCounts(trx, dialect, filters, groupBy, timeZone);
  if (untaggedAlone(filters)) return untaggedCounts(trx, dialect, userId, filters, groupBy, timeZone);
  // SQLite, any other search through the trigram index, or a small tag: the selection is
  // read once (readOnce) and bucketed here. The ranges below let SQLite walk the whole account for the
  // first and last file and again for every bucket, checking each file: a search of the unfiled half
  // of a million files took 30 s for 64 matches and 80 s for 42,535.
  const access = await readOnce(trx, dialect, userId, filters, dated);
  if (access) {
    const rows = await filteredFiles(trx, dialect, userId, filters, access).select('files.createdAt').execute();
    return bucketInOrder(rows.map((row) => Number(row.createdAt)).sort((a, b) => a - b), groupBy, timeZone);
  }
  // PostgreSQL, a search or a tag: the buckets are counted in one pass below, and they span the
  // account's uploads within the dates rather than the selection's (empty ones are dropped). For the
  // selection's first and last file the planner read a tag's every file and its row, twice: 1.1 s of a
  // tag of 30,000 files at a million.
  const inOnePass = dialect === 'postgres' && (filters.search !== null || filters.tag !== null);
  // Two scalar subqueries, so each is one index probe when only the account and dates narrow.
  const range = await uploadSpan(trx, dialect, userId, inOnePass ? { ...NO_FILTERS, from: filters.from, until: filters.until } : filters);
  const { lowest, highest } = dateBounds(filters);
  return inBuckets(
    range,
    groupBy,
    timeZone,
    () => uploadTimes(trx, dialect, userId, filters),
    async (buckets) => {
      if (isUnfiltered({ ...filters, from: null, until: null })) return countsFromSlots(trx, userId, buckets, lowest, highest);
      if (inOnePass) {
        // One pass over the selected rows (found through the trigram or tag indexes; a search alone
        // through the table of names, searchMatchTimes): width_bucket() finds each row's bucket by
        // binary search in the boundaries (bucket i covers boundaries[i-1] ≤ t < boundaries[i], 1-based).
        const boundaries = [...buckets.map((b) => b.from), buckets[buckets.length - 1]!.to];
        const rows = await trx
          .selectFrom(selectedTimes(trx, dialect, userId, filters))
          .select((eb) => [sql<number>`width_bucket(${eb.ref('m.t')}, ${boundaries}::bigint[])`.as('i'), eb.fn.countAll<number | string>().as('n')])
          .groupBy(sql`1`)
          .execute();
        return new Map(rows.map((row) => [Number(row.i) - 1, Number(row.n)]));
      }
      // One index range per bucket (countPerBucket); the index's other columns answer the remaining
      // filters.
      const perBucket = filteredFiles(trx, dialect, userId, { ...filters, from: null, until: null })
        .select((eb) => eb.fn.countAll().as('n'))
        .where('files.createdAt', '>=', sql.ref<number>('b.lo'))
        .where('files.createdAt', '<', sql.ref<number>('b.hi'));
      return countPerBucket(trx, dialect, buckets, lowest, highest, perBucket);
    },
  );
}

/**
 * SQLite, a search (and dates, and any other filters but a list of IDs) on an account whose
 * document numbers follow upload order: the calendar buckets of the selected files, counted by the
 * trigram index alone (migrations 0020-search-documents, 0034-search-facets). A bucket's files are a
 * range of document numbers, from the first file uploaded at or after its start to the first at or
 * after its end; the index counts the matches in each range and never looks at a file. The oldest
 * and newest match are the index's first and last. The buckets travel as one parameter
 * (integerRows): written into the statement, a century of weeks passed SQLite's limit on parameters.
 */
async function documentCounts(trx: Executor, userId: string, filters: FileFilters, groupBy: GroupBy, timeZone: string): Promise<Counted[]> {
  const { lowest, highest } = dateBounds(filters);
  const { first: firstDocument, last } = forAccount(trx, userId).documentRange();
  const from = (time: Expression<number> | number) => sql<number>`coalesce((${firstDocumentFrom(trx, userId, time)}), ${last} + 1)`;
  const within = { from: Number.isFinite(lowest) ? from(lowest) : firstDocument, to: Number.isFinite(highest) ? from(highest) : sql<number>`${last} + 1` };
  const end = async (direction: 'asc' | 'desc') => {
    const { rows } = await sql<{ t: number | null }>`select ${sql.ref('files.createdAt')} as t from ${sql.table('files')}
      where ${sql.ref('files.docId')} = (${searchDocuments(trx, userId, filters, within)} order by rowid ${sql.raw(direction)} limit 1)`.execute(trx);
    return rows[0]?.t ?? null;
  };
  const [first, lastMatch] = [await end('asc'), await end('desc')];
  return inBuckets(
    first === null || lastMatch === null ? null : { first: Number(first), last: Number(lastMatch) },
    groupBy,
    timeZone,
    () => uploadTimes(trx, 'sqlite', userId, filters),
    async (buckets) => {
      const bounds = integerRows(
        'sqlite',
        3,
        buckets.map((b, i) => [i, Math.max(b.from, lowest), Math.min(b.to, highest)]),
      );
      // Each bucket's range of numbers is found first, so that the index reads it as a range.
      const counted = countDocuments(trx, userId, filters, { from: sql.ref<number>('d.lo'), to: sql.ref<number>('d.hi') });
      const { rows } = await sql<{ i: number; n: number }>`with b(i, lo, hi) as (${bounds}),
        d as materialized (select b.i as i, ${from(sql.ref<number>('b.lo'))} as lo, ${from(sql.ref<number>('b.hi'))} as hi from b)
        select d.i as i, ${counted} as n from d`.execute(trx);
      return new Map(rows.map((r) => [Number(r.i), Number(r.n)]));
    },
  );
}

const QUARTER_MS = 900_000;
const DAY_MS_UTC = 86_400_000;

/**
 * Per bucket, the account's uploads in [lo, hi) from its counts per quarter hour and per UTC day
 * (migration 0019-upload-counts): whole UTC days inside the bucket, quarter hours at its ends, and
 * the files themselves for what is left between an end and the nearest quarter hour (a snapshot, a
 * date filter, a zone whose offset was not a whole number of quarter hours then). A month of uploads
 * costs at most about 30 + 2 × 96 rows however many files it holds.
 */
async function countsFromSlots(trx: Executor, userId: string, buckets: CalendarBucket[], lowest: number, highest: number): Promise<Map<number, number>> {
  // Pieces (bucket, span, from, to): span 0 is a range of upload times, counted over the files; 15
  // and 1440 are ranges of slots of that many minutes.
  const pieces: Array<[number, number, number, number]> = [];
  buckets.forEach((b, i) => {
    const lo = Math.max(b.from, lowest);
    const hi = Math.min(b.to, highest);
    if (lo >= hi) return;
    const qlo = Math.ceil(lo / QUARTER_MS) * QUARTER_MS;
    const qhi = Math.floor(hi / QUARTER_MS) * QUARTER_MS;
    if (qlo >= qhi) {
      pieces.push([i, 0, lo, hi]);
      return;
    }
    if (lo < qlo) pieces.push([i, 0, lo, qlo]);
    if (qhi < hi) pieces.push([i, 0, qhi, hi]);
    const dlo = Math.ceil(qlo / DAY_MS_UTC) * DAY_MS_UTC;
    const dhi = Math.floor(qhi / DAY_MS_UTC) * DAY_MS_UTC;
    if (dlo < dhi) {
      pieces.push([i, 1440, dlo / DAY_MS_UTC, dhi / DAY_MS_UTC]);
      if (qlo < dlo) pieces.push([i, 15, qlo / QUARTER_MS, dlo / QUARTER_MS]);
      if (dhi < qhi) pieces.push([i, 15, dhi / QUARTER_MS, qhi / QUARTER_MS]);
    } else {
      pieces.push([i, 15, qlo / QUARTER_MS, qhi / QUARTER_MS]);
    }
  });
  const totals = new Map<number, number>();
  if (pieces.length === 0) return totals;
  const account = forAccount(trx, userId);
  const fromFiles = account
    .selectFrom('files')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('files.createdAt', '>=', sql.ref<number>('p.a'))
    .where('files.createdAt', '<', sql.ref<number>('p.b'));
  const fromSlots = account
    .selectFrom('uploadCounts')
    .select((eb) => eb.fn.coalesce(eb.fn.sum('uploadCounts.files'), sql.lit(0)).as('n'))
    .where('uploadCounts.span', '=', sql.ref<number>('p.span'))
    .where('uploadCounts.slot', '>=', sql.ref<number>('p.a'))
    .where('uploadCounts.slot', '<', sql.ref<number>('p.b'));
  const result = await sql<{ i: number; n: number | string }>`
    with p(i, span, a, b) as (${integerRows(dialectOf(trx), 4, pieces)})
    select p.i as i, case when p.span = 0 then (${fromFiles}) else (${fromSlots}) end as n from p`.execute(trx);
  for (const row of result.rows) totals.set(Number(row.i), (totals.get(Number(row.i)) ?? 0) + Number(row.n));
  return totals;
}

/**
 * Upload times in ascending order, bucketed as they come (one calendar computation per nonempty
 * bucket): for selections spread over more buckets than are worth enumerating, and for those read
 * whole.
 */
function bucketInOrder(times: number[], groupBy: GroupBy, timeZone: string): Counted[] {
  const buckets: Counted[] = [];
  let current: Counted | undefined;
  for (const time of times) {
    if (!current || time >= current.to) {
      current = { ...bucketOf(time, groupBy, timeZone), count: 0 };
      buckets.push(current);
    }
    current.count += 1;
  }
  return buckets;
}
