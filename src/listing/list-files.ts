import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/schema.ts';
import { dialectOf, prepared, type Db, type Dialect } from '../db/database.ts';
import { compiledByShape, compiledOnce } from '../db/compiled-query.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { notFound } from '../errors.ts';
import { fileRecord } from '../files/file-views.ts';
import type { FileRecord, FileTag, Pagination } from '../api/files.ts';
import { jsonArrayFrom as postgresJsonArrayFrom } from 'kysely/helpers/postgres';
import { accountFileCount, assertOwnedSelection, beginsWith, beyond, countedTotal, countOf, countSearchByIndex, filteredFiles, isDateSort, orderedBy, searchAccess, searchesThroughIndex, searchOnly, sortOrder, tagDrives, tagRows, type Access, type FilesQuery, type SortColumn } from './file-query.ts';
import { isUnfiltered, NO_FILTERS, type FileFilters, type ListQuery, type SortBy } from './parameters.ts';
import { readsApart, refreshStatisticsIfStale, withSearchHints } from './planner.ts';

export interface FileListing {
  data: FileRecord[];
  pagination: Pagination;
}

/**
 * A filtered selection of at most this many files is read whole (IDs and sort keys only) in one
 * statement and paged here; a larger one is counted and paged by the database (two statements).
 * Selective filters (a search, a tag, a list of IDs) thus scan the account's index once, not twice.
 */
const SMALL_SELECTION = 1000;

/**
 * How many files a walk of a sort's order passes in the time one file is read by its ID and sorted
 * (measured on a million files, a folder with a tag of about 1,500: on SQLite 0.7 µs a file walked
 * and 4.5 µs a file read by ID; on PostgreSQL 0.85 and 13 µs).
 */
const BY_ID_PER_WALKED: Record<Dialect, number> = { sqlite: 6, postgres: 15 };
/**
 * A search that an index answers (SQLite's trigram table, PostgreSQL's trigram indexes) is read
 * whole up to this many matches: each statement that counts or pages it repeats the index lookups and
 * the check of every match's account (and, on PostgreSQL, the recheck of its text), which costs more
 * than having the database sort a few thousand sort keys once. On PostgreSQL every search is read
 * whole, whatever its size (searchPage).
 */
const SEARCH_SELECTION = 20_000;

/**
 * The columns a file record needs; the password hash itself never leaves the database. On
 * PostgreSQL the file's tags that count (not excluded, sorted by name) come as a JSON array in the
 * same statement, since a second statement is a second round trip. On SQLite a statement costs no
 * round trip, and the page's tags are read afterwards in one statement (`pageTags`): a subquery per
 * row cost 1.7 µs a file, 41 of the 92 µs that a page of 24 took, the separate statement 11 µs.
 * Either way only files marked `tagged` (kept by the database, migration 0031-tagged-files) are
 * looked up: most files of most libraries have no tag.
 */
function recordColumns(query: FilesQuery, dialect: Dialect) {
  return query
    .select((eb) => [
      'files.id',
      'files.name',
      'files.mimeType',
      'files.size',
      'files.visibility',
      'files.folderId',
      'files.expiresAt',
      'files.expiryAction',
      'files.createdAt',
      'files.views',
      'files.downloads',
      'files.thumbnailStatus',
      'files.thumbnailKey',
      'files.ocrStatus',
      eb.case().when('files.passwordHash', 'is', null).then(0).else(1).end().as('hasPassword'),
    ])
    .$if(dialect === 'sqlite', (query) => query.select('files.tagged'))
    .$if(dialect === 'postgres', (query) =>
      query.select((eb) =>
        eb
          .case()
          .when('files.tagged', '<>', 0)
          .then(
            postgresJsonArrayFrom(
              eb
                .selectFrom('fileTags')
                .innerJoin('tags', 'tags.id', 'fileTags.tagId')
                .select(['tags.id', 'tags.name'])
                .whereRef('fileTags.fileId', '=', 'files.id')
                .where('fileTags.excluded', '=', 0),
            ),
          )
          .end()
          .as('tags'),
      ),
    );
}

/**
 * The tags that count of a page's files (SQLite), in no order (`fileRecord` sorts them). The file
 * IDs come from an account-scoped query already, like recordsByIds' IDs; they travel as one JSON
 * array, so that every page size is the same statement.
 */
const pageTags = compiledOnce((db: Executor, fileIds: string) =>
  db
    .selectFrom('fileTags')
    .innerJoin('tags', 'tags.id', 'fileTags.tagId')
    .select(['fileTags.fileId', 'tags.id', 'tags.name'])
    .where('fileTags.fileId', 'in', sql<string>`(select value from json_each(${fileIds}))`)
    .where('fileTags.excluded', '=', 0),
);

type RecordRow = Awaited<ReturnType<ReturnType<typeof recordColumns>['execute']>>[number];

/**
 * Rows by ID, in the order of `ids`. The IDs are the account's already (they come from an
 * account-scoped query); a second account condition here would lead SQLite's planner to walk the
 * account's whole index instead of looking the rows up by ID.
 */
async function recordsByIds(db: Executor, dialect: Dialect, owner: Owner, ids: string[]): Promise<FileRecord[]> {
  if (ids.length === 0) return [];
  const rows = await recordColumns(db.selectFrom('files').where('files.id', 'in', ids), dialect).execute();
  const position = new Map(ids.map((id, i) => [id, i]));
  rows.sort((a, b) => position.get(a.id)! - position.get(b.id)!);
  return toRecords(db, dialect, owner, rows);
}

/** Whose files these are, and the origin their URLs are made with. */
export interface Owner {
  urlId: string;
  baseUrl: string;
}

async function toRecords(db: Executor, dialect: Dialect, { urlId, baseUrl }: Owner, rows: RecordRow[]): Promise<FileRecord[]> {
  let tagsByFile: Map<string, FileTag[]> | null = null;
  if (dialect === 'sqlite') {
    tagsByFile = new Map();
    const tagged: string[] = [];
    for (const row of rows) if (row.tagged) tagged.push(row.id);
    const { rows: tagRows } = tagged.length === 0 ? { rows: [] } : await db.executeQuery(pageTags(db, JSON.stringify(tagged)));
    for (const { fileId, id, name } of tagRows) {
      const tags = tagsByFile.get(fileId);
      if (tags) tags.push({ id, name });
      else tagsByFile.set(fileId, [{ id, name }]);
    }
  }
  // A literal, not a spread of the row: spreading a row of 15 columns cost more than the record.
  return rows.map((row) => {
    const source = {
      id: row.id,
      name: row.name,
      mimeType: row.mimeType,
      size: Number(row.size),
      visibility: row.visibility,
      folderId: row.folderId,
      expiresAt: row.expiresAt === null ? null : Number(row.expiresAt),
      expiryAction: row.expiryAction,
      createdAt: Number(row.createdAt),
      views: row.views,
      downloads: row.downloads,
      thumbnailStatus: row.thumbnailStatus,
      thumbnailKey: row.thumbnailKey,
      ocrStatus: row.ocrStatus,
      hasPassword: Number(row.hasPassword) === 1,
    };
    const tags = tagsByFile ? (tagsByFile.get(row.id) ?? []) : (row.tags ?? []);
    return fileRecord(source, urlId, tags, baseUrl);
  });
}

/** Code-point order, as SQLite's BINARY and PostgreSQL's "C" collation compare text. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  if (!/[\ud800-\udfff]/.test(a + b)) return a < b ? -1 : 1;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The sort order of `sortBy` as a comparator of (key, id) pairs, exactly as the database orders. */
function comparatorFor(sortBy: SortBy): (a: { id: string; key: unknown }, b: { id: string; key: unknown }) => number {
  const { column, direction } = sortOrder[sortBy];
  const sign = direction === 'asc' ? 1 : -1;
  const byKey =
    column === 'searchName'
      ? (a: unknown, b: unknown) => compareText(String(a ?? ''), String(b ?? ''))
      : (a: unknown, b: unknown) => Number(a) - Number(b);
  return (a, b) => sign * (byKey(a.key, b.key) || compareText(a.id, b.id));
}

/** A selection's IDs in sort order, when it has at most SMALL_SELECTION files; otherwise null. */
async function smallSelection(db: Executor, dialect: Dialect, userId: string, filters: FileFilters, sortBy: SortBy, given: Access = 'matches'): Promise<string[] | null> {
  const column: SortColumn = sortOrder[sortBy].column;
  const access = given === 'matches' && (await tagDrives(db, dialect, userId, filters)) ? 'tag' : given;
  const most = searchesThroughIndex(dialect, filters) ? SEARCH_SELECTION : SMALL_SELECTION;
  const rows = await filteredFiles(db, dialect, userId, filters, access)
    .select(['files.id', `files.${column}`])
    .limit(most + 1)
    .execute();
  if (rows.length > most) return null;
  const keyed = rows.map((row) => ({ id: row.id, key: (row as Record<string, unknown>)[column] }));
  return keyed.sort(comparatorFor(sortBy)).map((r) => r.id);
}

/**
 * A search through an index, of at most SEARCH_SELECTION files on SQLite, of any size on PostgreSQL:
 * one page of IDs and the selection's size, from one read of the matches that the database sorts and
 * counts itself. Reading the matches once matters: on SQLite, counting them and then walking the
 * account's index for the page evaluated the search twice; on PostgreSQL, sending thousands of IDs
 * and sort keys here to sort them cost a third more (measured with 100,000 files and 8,277 matches:
 * 28 against 19 ms), and each of the counting and the paging statement rechecked every match's row
 * (a million files, 66,000 matches, one statement instead of two: 837 → 294 ms sorted by name).
 * Null when there are more matches.
 */
async function searchPage(db: Executor, dialect: Dialect, userId: string, filters: FileFilters, sortBy: SortBy, limit: number, offset: number, access: Access): Promise<{ ids: string[]; total: number } | null> {
  const { column, direction } = sortOrder[sortBy];
  const everyMatch = dialect === 'postgres';
  const matches = filteredFiles(db, dialect, userId, filters, access)
    .select(['files.id', `files.${column} as key`])
    .$if(!everyMatch, (query) => query.limit(SEARCH_SELECTION + 1));
  // The count comes from a one-row side, so an empty page past the end still carries it.
  const rows = await db
    .with((cte) => cte('m').materialized(), () => matches)
    .selectFrom((eb) => eb.selectFrom('m').select((e) => e.fn.countAll<number | string>().as('n')).as('t'))
    .leftJoin(
      (eb) => eb.selectFrom('m').select(['m.id', 'm.key']).orderBy('m.key', direction).orderBy('m.id', direction).limit(limit).offset(offset).as('p'),
      (join) => join.onTrue(),
    )
    .select(['t.n', 'p.id'])
    .orderBy('p.key', direction)
    .orderBy('p.id', direction)
    .execute();
  const total = Number(rows[0]!.n);
  if (!everyMatch && total > SEARCH_SELECTION) return null;
  return { ids: rows.flatMap((r) => (r.id === null ? [] : [r.id])), total };
}

/**
 * At most this many of the account's files are walked in a sort's order to find a page of a search
 * or a tag by checking each row on its own, before the selected files are read whole instead.
 */
const WALK_BUDGET = 4096;

/**
 * A page of a search or a tag (`total` files) found among the first WALK_BUDGET files of the sort's
 * order, each row checked on its own (its folded text matched, its tag looked up); null when those
 * files do not hold the whole page. The walk is bounded by the position of the file after them,
 * which one walk of the sort's index (IDs and keys only) finds. Measured with a million files and
 * 66,000 matches of a name word: sorted by size 85–93 → 16–18 ms over HTTP, 15 ms of which count the
 * matches; sorted by name, whose matches all sort together far from the start, the walk fails in
 * about 3 ms and the matches are read whole.
 */
async function boundedWalk(db: Executor, dialect: Dialect, userId: string, filters: FileFilters, sortBy: SortBy, limit: number, offset: number, total: number): Promise<string[] | null> {
  const { column } = sortOrder[sortBy];
  const bound = await orderedBy(forAccount(db, userId).selectFrom('files').select(['files.id', `files.${column} as key`]), sortBy)
    .limit(1)
    .offset(WALK_BUDGET)
    .executeTakeFirst();
  const walked = filteredFiles(db, dialect, userId, filters, 'rowwise');
  const within = bound ? beyond(walked, sortBy, 'before', bound.key as string | number, bound.id) : walked;
  const rows = await orderedBy(within.select('files.id'), sortBy).limit(limit).offset(offset).execute();
  // Complete when the page is full, or when it ends where the matches do.
  return rows.length === limit || offset + rows.length === total ? rows.map((r) => r.id) : null;
}

/**
 * A page of `total` selected files among the account's `files` by a bounded walk (boundedWalk),
 * when one may hold it; null when not. Walking the sort's index and checking each row on its own
 * reads about (offset + limit) × files ÷ total rows, if the selected files are spread through the
 * order. They need not be (names sort by their first word, which may be the search term), so the
 * walk is bounded. An account of fewer files has fewer selected files than that to read anyway.
 */
async function walkedPage(db: Executor, dialect: Dialect, userId: string, filters: FileFilters, sortBy: SortBy, limit: number, offset: number, total: number, files: number): Promise<string[] | null> {
  if (!walkExpected(limit, offset, total, files)) return null;
  return boundedWalk(db, dialect, userId, filters, sortBy, limit, offset, total);
}

/** Whether a bounded walk should find the page, were the selected files spread through the order (walkedPage). */
function walkExpected(limit: number, offset: number, total: number, files: number): boolean {
  return files > WALK_BUDGET && (offset + limit) * files <= (total * WALK_BUDGET) / 2;
}

/**
 * A search sorted by name: a page of it when its `total` matches are exactly the account's files
 * whose folded name begins with the term, as when a search names the word its files' names start
 * with ("screenshot", "IMG_2024", "invoice"). Those files are one run of the name index, each of
 * which matches; if the run holds `total` files, it holds every match, and the page is read from it.
 * Otherwise null. Reading every match's name instead costs a look-up per match: a million files,
 * 66,000 names beginning with the term, 87 → 20 ms over HTTP on SQLite, most of which counts the
 * matches.
 *
 * PostgreSQL has counted that run already (countSearchMatches: `beginning`). Both databases order
 * the folded names by code point (PostgreSQL's collate "C", SQLite's binary comparison), so the run is
 * a range of the index (beginsWith). SQLite's LIKE ignores case and cannot read an index at all.
 */
async function namesBeginningWith(db: Executor, userId: string, term: string, limit: number, offset: number, total: number, beginning: number | null): Promise<string[] | null> {
  const run = () => forAccount(db, userId).selectFrom('files').where(beginsWith(sql.ref('files.searchName'), term));
  const counted =
    beginning ??
    (await run()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n)));
  if (counted !== total) return null;
  const rows = await orderedBy(run().select('files.id'), 'name').limit(limit).offset(offset).execute();
  return rows.map((row) => row.id);
}

/**
 * One page's IDs in sort order, straight from the sort's index (a deferred join: deep pages do not
 * read the rows they skip).
 */
function pageIds(db: Executor, dialect: Dialect, userId: string, filters: FileFilters, sortBy: SortBy, limit: number, offset: number, access: Access = 'walk') {
  return orderedBy(filteredFiles(db, dialect, userId, filters, access).select('files.id'), sortBy).limit(limit).offset(offset);
}

/** The account's file count read in the page's own statement (one round trip, one snapshot). */
function withTotal<O>(query: SelectQueryBuilder<Database, 'files', O>, userId: string) {
  return query.select((eb) => eb.selectFrom('users').select('users.fileCount').where('users.id', '=', userId).as('total'));
}

/**
 * The hot path, an unfiltered first page, read straight from the sort's index. Compiled once per
 * sort order and page size, with the size in the SQL: PostgreSQL cannot judge a plan for an unknown
 * LIMIT, so with a LIMIT parameter it plans the prepared statement again on every execution (0.2–0.4
 * ms); with a literal one it keeps the plan. At most 100 sizes × 9 orders exist, and the database
 * layer caps the prepared statements a connection keeps.
 */
const unfilteredFirstPage = compiledByShape((db: Executor, shape: `${SortBy} ${number}`, userId: string) => {
  const [sortBy, limit] = shape.split(' ') as [SortBy, string];
  return withTotal(orderedBy(recordColumns(forAccount(db, userId).selectFrom('files'), dialectOf(db)), sortBy), userId)
    .limit(sql.lit(Number(limit)))
    .modifyEnd(prepared);
});

/**
 * A later unfiltered page: its IDs from the sort's index (the skipped rows are not read), then
 * those rows. Compiled once per sort order.
 */
const unfilteredPage = compiledByShape((db: Executor, sortBy: SortBy, userId: string, limit: number, offset: number) => {
  const dialect = dialectOf(db);
  return withTotal(orderedBy(recordColumns(db.selectFrom('files').where('files.id', 'in', pageIds(db, dialect, userId, NO_FILTERS, sortBy, limit, offset)), dialect), sortBy), userId).modifyEnd(
    prepared,
  );
});

/** From this offset on, a page in upload order starts from the account's counts per day. */
const DEEP_PAGE = 10_000;
const DAY_MS = 86_400_000;

/**
 * A deep page in upload order without walking the account's index over every file before it: the
 * account's counts per UTC day (migration 0019-upload-counts) give the day the page starts in and
 * how many files come before that day, so the index is entered at that day and walked from there
 * only (at most a day's files plus the page). Measured on SQLite with 100,000 files over three
 * years, page 4,000 of 24 in newest order: 4.0 ms for walking the index to the offset alone, 2.2 ms
 * for the whole listing this way; the walk grows with the offset, this does not.
 */
async function deepDatePage(db: Executor, userId: string, sortBy: SortBy, limit: number, offset: number): Promise<string[]> {
  const newest = sortBy === 'newest';
  const days = await forAccount(db, userId)
    .selectFrom('uploadCounts')
    .select(['uploadCounts.slot', 'uploadCounts.files'])
    .where('uploadCounts.span', '=', 1440)
    .orderBy('uploadCounts.slot', newest ? 'desc' : 'asc')
    .execute();
  let before = 0;
  for (const day of days) {
    const files = Number(day.files);
    if (before + files <= offset) {
      before += files;
      continue;
    }
    const slot = Number(day.slot);
    const fromDay = forAccount(db, userId).selectFrom('files').select('files.id');
    const page = newest ? fromDay.where('files.createdAt', '<', (slot + 1) * DAY_MS) : fromDay.where('files.createdAt', '>=', slot * DAY_MS);
    const rows = await orderedBy(page, sortBy).limit(limit).offset(offset - before).execute();
    return rows.map((r) => r.id);
  }
  return [];
}

/** GET /api/files: a page of the account's files, or the images next to a gallery anchor. */
export async function listFiles(db: Db, reader: Db, dialect: Dialect, userId: string, owner: Owner, query: ListQuery): Promise<FileListing> {
  const source = readsApart(dialect, query.filters) ? reader : db;
  await assertOwnedSelection(source, userId, query.filters);
  refreshStatisticsIfStale(db, dialect);
  return withSearchHints(source, dialect, query.filters, (executor) => (query.gallery ? galleryPage(executor, dialect, userId, owner, query) : filesPage(executor, dialect, userId, owner, query)));
}

async function filesPage(db: Executor, dialect: Dialect, userId: string, owner: Owner, query: ListQuery): Promise<FileListing> {
  const { filters, sortBy, limit, page } = query;
  const offset = (page - 1) * limit;
  const pagination = (total: number) => ({ total, pageCount: Math.ceil(total / limit), page, limit });
  if (!Number.isSafeInteger(offset)) return { data: [], pagination: pagination(await selectionTotal(db, dialect, userId, filters)) };

  if (isUnfiltered(filters)) {
    if (offset >= DEEP_PAGE && isDateSort(sortBy)) {
      const ids = await deepDatePage(db, userId, sortBy, limit, offset);
      return { data: await recordsByIds(db, dialect, owner, ids), pagination: pagination(await accountFileCount(db, userId)) };
    }
    const compiled = offset === 0 ? unfilteredFirstPage(db, `${sortBy} ${limit}`, userId) : unfilteredPage(db, sortBy, userId, limit, offset);
    const { rows } = await db.executeQuery(compiled);
    const total = rows.length ? Number(rows[0]!.total) : await accountFileCount(db, userId);
    return { data: await toRecords(db, dialect, owner, rows), pagination: pagination(total) };
  }
  // A search counted by its index: on SQLite with any other filters but a list of IDs, whose values
  // the index holds as facets (migrations 0020-search-documents, 0034-search-facets); on PostgreSQL a
  // search alone, whose name matches the table of names counts (migration 0025-search-names).
  const searchCount = await countSearchByIndex(db, dialect, userId, filters);
  if (searchCount) {
    const { total, beginning } = searchCount;
    if (total === 0 || offset >= total) return { data: [], pagination: pagination(total) };
    const alone = searchOnly(filters);
    const ids =
      (alone && sortBy === 'name' && filters.from === null && filters.until === null ? await namesBeginningWith(db, userId, filters.search!, limit, offset, total, beginning) : null) ??
      (await walkedPage(db, dialect, userId, filters, sortBy, limit, offset, total, await accountFileCount(db, userId)));
    if (ids) return { data: await recordsByIds(db, dialect, owner, ids), pagination: pagination(total) };
    // Otherwise every selected file's sort key: on SQLite from the index that holds them by document
    // number (migration 0021-search-sort-keys), the trigram index naming the files (with other filters
    // their indexes hidden, so that the planner does not read through one of them instead); on
    // PostgreSQL through the files' trigram indexes. The database keeps only the page while sorting.
    const rows = await orderedBy(recordColumns(db.selectFrom('files').where('files.id', 'in', pageIds(db, dialect, userId, filters, sortBy, limit, offset, alone ? 'matches' : 'search')), dialect), sortBy).execute();
    return { data: await toRecords(db, dialect, owner, rows), pagination: pagination(total) };
  }
  // A search with other filters (SQLite: with a list of IDs, or dates on an account whose document
  // numbers do not follow upload order): read through the search's matches or the other filter's
  // index, whichever selects fewer files (searchDrives).
  const matchAccess: Access = (await searchAccess(db, dialect, userId, filters)) ?? 'matches';
  if (searchesThroughIndex(dialect, filters)) {
    const found = await searchPage(db, dialect, userId, filters, sortBy, limit, offset, matchAccess);
    if (found) return { data: await recordsByIds(db, dialect, owner, found.ids), pagination: pagination(found.total) };
  }
  // A single filter's total is kept by the database; a larger selection then needs only its page.
  const counted = await countedTotal(db, userId, filters);
  const pageRows = (access: Access) => orderedBy(recordColumns(db.selectFrom('files').where('files.id', 'in', pageIds(db, dialect, userId, filters, sortBy, limit, offset, access)), dialect), sortBy).execute();
  if (counted !== null && offset >= counted) return { data: [], pagination: pagination(counted) };
  // A tag with a folder by upload time: the page is a range of the tag rows' index, whatever the
  // selection's size; with dates, so is the count.
  const inFolder = isDateSort(sortBy) && filters.folder !== null ? tagRows(db, filters) : null;
  if (inFolder) {
    const { direction } = sortOrder[sortBy];
    const total = counted ?? Number((await inFolder.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
    const rows = offset >= total ? [] : await inFolder.select('fileTags.fileId').orderBy('fileTags.createdAt', direction).orderBy('fileTags.fileId', direction).limit(limit).offset(offset).execute();
    return { data: await recordsByIds(db, dialect, owner, rows.map((row) => row.fileId)), pagination: pagination(total) };
  }
  if (!searchesThroughIndex(dialect, filters) && (counted === null || counted <= SMALL_SELECTION)) {
    const small = await smallSelection(db, dialect, userId, filters, sortBy);
    if (small) return { data: await recordsByIds(db, dialect, owner, small.slice(offset, offset + limit)), pagination: pagination(small.length) };
  }
  // A tag with a folder in another order, more files than are read whole: the page from the tag's
  // files in the folder (one range of the tag rows' index), each read by its ID for its sort key,
  // where that costs less than the walk of the sort's order, which passes about (offset + limit) ×
  // files ÷ total files. A file read by its ID costs about as much as BY_ID_PER_WALKED files walked.
  // A million files, a folder with a tag of about 1,500 files, page 30 by name: 81 → 12 ms on
  // SQLite, 198 → 20 ms on PostgreSQL.
  if (counted !== null && filters.tag?.kind === 'tag' && filters.folder !== null && filters.search === null && filters.ids === null) {
    const files = await accountFileCount(db, userId);
    if (counted * counted * BY_ID_PER_WALKED[dialect] <= (offset + limit) * files) return { data: await toRecords(db, dialect, owner, await pageRows('tag')), pagination: pagination(counted) };
  }
  // A tag of many files (SQLite): its first pages from a walk of the sort's order that looks each
  // file's tag up (about 2 µs a file), not from the tag's whole list, which SQLite otherwise reads
  // and holds for every page (about 0.3 µs an entry): when the walk should pass fewer files than a
  // quarter of the list. A tag of 29,575 among a million files: 11.5 → 2.9 ms. The same for
  // `untagged`, whose walk reads each file's mark (migration 0031-tagged-files).
  if (dialect === 'sqlite' && counted !== null && filters.tag !== null) {
    const files = await accountFileCount(db, userId);
    const ids = (offset + limit) * files * 4 <= counted * counted ? await walkedPage(db, dialect, userId, filters, sortBy, limit, offset, counted, files) : null;
    if (ids) return { data: await recordsByIds(db, dialect, owner, ids), pagination: pagination(counted) };
  }
  // More matches of a search than are read whole (SQLite; PostgreSQL reads every search whole):
  // counted by looking each match up by rowid, cheaper than walking the account's index (100,000
  // files, 8,277 matches: 10 against 17 ms).
  const countTotal = async () => counted ?? countOf(filteredFiles(db, dialect, userId, filters, searchesThroughIndex(dialect, filters) ? matchAccess : 'walk'));
  if (matchAccess !== 'search' && !searchesThroughIndex(dialect, filters)) {
    // PostgreSQL runs the two statements side by side, on two connections.
    const [total, rows] = await Promise.all([countTotal(), pageRows('walk')]);
    return { data: await toRecords(db, dialect, owner, rows), pagination: pagination(total) };
  }
  // SQLite, a search of more matches than are read whole, with another filter. A page past the end
  // is not looked for.
  const total = await countTotal();
  if (offset >= total) return { data: [], pagination: pagination(total) };
  // A page near the start from a bounded walk, each row checked on its own, as for a search alone
  // (walkedPage). The walks below first read every match's document number from the trigram index:
  // a million files, a word of the recognised text in 424,257 of them, with a type, 116 ms for the
  // first page that way.
  const files = await accountFileCount(db, userId);
  const walk = walkExpected(limit, offset, total, files);
  const walked = walk ? await boundedWalk(db, dialect, userId, filters, sortBy, limit, offset, total) : null;
  if (walked) return { data: await recordsByIds(db, dialect, owner, walked), pagination: pagination(total) };
  if (matchAccess !== 'search') return { data: await toRecords(db, dialect, owner, await pageRows('walk')), pagination: pagination(total) };
  // When the search drives, so does the sort's index for the page: the other filter's own index would
  // have every file it selects read and sorted (the unfiled half of a million files: 554 ms). The
  // walk passes about (offset + limit) × files ÷ total files. A deeper page is taken from the
  // matches read whole, which costs about what counting them does whatever the page; where the two
  // cost the same was measured at a walk of about four times `total` (a million files, 42,535
  // matches among the unfiled ones: the walk 450 ms for page 20, 680 for page 300, 1,100 for page
  // 1,200; the matches 730–760 ms for any page). So is a page that the bounded walk should have
  // found and did not: the selected files are not spread through the order (names that begin with
  // the term sort together), and the walk to them is long (a million files, a name word with
  // `private`, 20,182 files, by name: 337 ms for the walk, 76 for the matches).
  const rows = await pageRows(walk || (offset + limit) * files > 4 * total * total ? 'search' : 'walk-search');
  return { data: await toRecords(db, dialect, owner, rows), pagination: pagination(total) };
}

/**
 * How many files the filters select, read the cheapest way each kind of selection allows: the
 * account's count, the counts per filter value, the search index alone, or the selection read
 * through its index (searchAccess; a plain count of a search with another filter walked a million
 * files in 2.2 s). For a page past any library.
 */
async function selectionTotal(db: Executor, dialect: Dialect, userId: string, filters: FileFilters): Promise<number> {
  if (isUnfiltered(filters)) return accountFileCount(db, userId);
  const counted = (await countedTotal(db, userId, filters)) ?? (await countSearchByIndex(db, dialect, userId, filters))?.total;
  return counted ?? countOf(filteredFiles(db, dialect, userId, filters, (await searchAccess(db, dialect, userId, filters)) ?? 'walk'));
}

/**
 * The images adjacent to an anchor image in the current filter and sort, excluding the anchor:
 * up to `limit` after it (`next`) or before it (`previous`, still in the sort's order).
 * `pagination.offset` is the position of the first returned image among the selected images.
 */
async function galleryPage(db: Executor, dialect: Dialect, userId: string, owner: Owner, query: ListQuery): Promise<FileListing> {
  const { anchor: anchorId, direction } = query.gallery!;
  const { filters, sortBy, limit } = query;
  const notAnchor = () => notFound('Gallery anchor not found: it must be an image among the files the current filter selects');
  const respond = async (ids: string[], total: number, offset: number): Promise<FileListing> => ({
    data: await recordsByIds(db, dialect, owner, ids),
    pagination: { total, pageCount: Math.ceil(total / limit), page: Math.floor(offset / limit) + 1, limit, offset },
  });

  const around = (small: string[]) => {
    const position = small.indexOf(anchorId);
    if (position < 0) throw notAnchor();
    const first = direction === 'next' ? position + 1 : Math.max(0, position - limit);
    const last = direction === 'next' ? Math.min(small.length, position + 1 + limit) : position;
    return respond(small.slice(first, last), small.length, first);
  };

  // SQLite, a search through the trigram index (with the gallery's images at least): read through
  // the search's matches or the other filter's index, as a page of the listing is (searchDrives).
  // Left to itself, SQLite walked the whole account for each count: with a million files, a step
  // through the images of a search took 0.6 s, 2.5 s by name, 5.5 s among the unfiled files.
  const throughSearch = await searchAccess(db, dialect, userId, filters);
  // The images alone, or of some types: their number is kept by the database (countedTotal).
  const counted = await countedTotal(db, userId, filters);
  // A selection small enough is read whole, in one pass that stops once it is known to be larger.
  const small = counted !== null && counted > SMALL_SELECTION ? null : await smallSelection(db, dialect, userId, filters, sortBy, throughSearch ?? 'matches');
  if (small) return around(small);

  const { column } = sortOrder[sortBy];
  const selected = (access: Access = 'walk') => filteredFiles(db, dialect, userId, filters, access);
  const anchor = await selected().select(['files.id', `files.${column}`]).where('files.id', '=', anchorId).executeTakeFirst();
  if (!anchor) throw notAnchor();
  const key = (anchor as Record<string, unknown>)[column] as string | number;
  // The neighbours in walking order from the anchor (reversed for `previous`). Through a search's
  // matches, the selection is larger than a search reads whole: at least one file in fifty of the
  // account, so the walk is short.
  const neighbours = orderedBy(beyond(selected(throughSearch === 'search' ? 'walk-search' : 'walk'), sortBy, direction === 'next' ? 'after' : 'before', key, anchorId).select('files.id'), sortBy, direction === 'previous')
    .limit(limit)
    .execute();
  // A search's selection is counted once, with the files before the anchor: each count rechecks
  // every match (PostgreSQL) or reads it (SQLite, through the matches).
  const totalAndPosition = throughSearch || (dialect === 'postgres' && filters.search !== null)
    ? countAround(selected(throughSearch ?? 'walk'), sortBy, key, anchorId)
    : Promise.all([counted ?? countOf(selected()), countOf(beyond(selected(), sortBy, 'before', key, anchorId))]);
  const [[total, position], walked] = await Promise.all([totalAndPosition, neighbours]);
  const ids = walked.map((r) => r.id);
  if (direction === 'previous') ids.reverse();
  return respond(ids, total, direction === 'next' ? position + 1 : position - ids.length);
}

/** The files a query selects, and how many of them come before a row (`key`, `id`) in the sort's order, in one pass. */
async function countAround(query: FilesQuery, sortBy: SortBy, key: string | number, id: string): Promise<[number, number]> {
  const { column, direction } = sortOrder[sortBy];
  const row = await query
    .select((eb) => [
      eb.fn.countAll<number | string>().as('n'),
      eb.fn.count<number | string>(eb.case().when(eb(eb.refTuple(`files.${column}`, 'files.id'), direction === 'asc' ? '<' : '>', eb.tuple(key, id))).then(1).end()).as('before'),
    ])
    .executeTakeFirstOrThrow();
  return [Number(row.n), Number(row.before)];
}

/**
 * GET /api/files/types: the account's distinct MIME types in code-point order, from its counts per
 * type (migration 0018-file-counts), so an account's size does not matter.
 */
export async function listTypes(db: Db, userId: string): Promise<string[]> {
  const rows = await forAccount(db, userId).selectFrom('fileCounts').select('fileCounts.value').where('fileCounts.dimension', '=', 'type').where('fileCounts.files', '>', 0).execute();
  return rows.map((r) => r.value).sort(compareText);
}
