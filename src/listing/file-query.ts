import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Dialect } from '../db/database.ts';
import { forAccount, type Executor } from '../db/account-scope.ts';
import { notFound } from '../errors.ts';
import { NO_FILTERS, type FileFilters, type SortBy, type VisibilityFilter } from './parameters.ts';

/**
 * The account's files narrowed by a filter set: every listing, count, gallery and timeline query
 * starts here, so they all select exactly the same files.
 */
export type FilesQuery = SelectQueryBuilder<Database, 'files', {}>;

/** `%` and `_` are wildcards in LIKE, and a backslash escapes them: the search term matches literally. */
function likeContaining(term: string): string {
  return `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** `column LIKE pattern`, with the escape character of likeContaining(). */
function like(column: Expression<string | null>, pattern: string) {
  return sql<boolean>`${column} like ${pattern} escape ${'\\'}`;
}

/**
 * A column in code point order (PostgreSQL's collate "C", SQLite's binary comparison) beginning with
 * `term`, as a range of its btree: from the term to the term with its last code point raised by one.
 * On PostgreSQL `LIKE 'term%'` selects the same rows, but the planner also checks the pattern on every
 * entry of the range it derives: a million files, 66,895 names beginning with a word, counted in
 * 9.0 ms that way and 7.8 ms this way.
 */
export function beginsWith(column: Expression<string | null>, term: string) {
  const following = followingPrefix(term);
  return following === null ? sql<boolean>`${column} >= ${term}` : sql<boolean>`(${column} >= ${term} and ${column} < ${following})`;
}

/** The first text after every text that begins with `prefix` in code point order; null if none. */
export function followingPrefix(prefix: string): string | null {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    // Surrogates never occur in text, so U+D7FF is followed by U+E000.
    if (last < 0x10ffff) return points.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return null;
}

/** The trigram tokenizer indexes runs of three characters: shorter terms cannot use the index. */
const TRIGRAM = 3;

/**
 * An FTS5 query matching `term` as a substring: one quoted string (a quote inside doubled), which the
 * trigram tokenizer turns into consecutive trigrams. Both the term and the indexed columns are
 * foldForSearch() text, so matching is case-insensitive exactly as LIKE over those columns was.
 */
function ftsPhrase(term: string): string {
  return `"${term.replaceAll('"', '""')}"`;
}

/**
 * A search whose matches an index names: any search on PostgreSQL (trigram GIN indexes); on SQLite
 * a term of at least three characters (the FTS5 trigram table). Shorter terms scan on SQLite.
 */
export function searchesThroughIndex(dialect: Dialect, filters: FileFilters): boolean {
  return filters.search !== null && (dialect === 'postgres' || [...filters.search].length >= TRIGRAM);
}

/**
 * The account's files whose folded name or text contains the search term (at least three
 * characters) and that the other filters select, as document numbers from SQLite's trigram index,
 * limited to the account's range of numbers (migration 0020-search-documents): the index answers on
 * its own, without looking at any file. It holds each file's filter values as facets (migration
 * 0034-search-facets); a list of IDs is not among them and is left to the caller (searchesDocuments).
 * Dates are the caller's too. `within` narrows the range further (a bucket of the timeline).
 */
export function searchDocuments(db: Executor, userId: string, filters: FileFilters, within?: DocumentRange) {
  return sql<{ rowid: number }>`select rowid from filesSearch where ${documentsMatching(db, userId, filters, within)}`;
}

/** The number of such documents, as a (scalar) subquery; `within` may refer to the outer query. */
export function countDocuments(db: Executor, userId: string, filters: FileFilters, within?: DocumentRange) {
  return sql<number>`(select count(*) from filesSearch where ${documentsMatching(db, userId, filters, within)})`;
}

/** Document numbers from `from` (inclusive) to `to` (exclusive). */
export interface DocumentRange {
  from: Expression<number>;
  to: Expression<number>;
}

function documentsMatching(db: Executor, userId: string, filters: FileFilters, within?: DocumentRange) {
  const range = forAccount(db, userId).documentRange();
  const narrowed = within ? sql`and rowid >= ${within.from} and rowid < ${within.to}` : sql``;
  return sql`filesSearch match ${ftsQuery(filters)} and rowid between ${range.first} and ${range.last} ${narrowed}`;
}

/**
 * The markers of the facets in SQLite's trigram index (migration 0034-search-facets); a facet is its
 * marker and two 12-bit digits, U+F0000 + digit.
 */
const FACET = { type: 0xe010, folder: 0xe011, visibility: 0xe012, tag: 0xe013, image: 0xe014, none: 0xe00f } as const;
const DIGITS = 0xf0000;

/** A facet whose code is known here, quoted for an FTS5 query. */
function facet(marker: number, code: number): string {
  return `"${String.fromCodePoint(marker, DIGITS + Math.floor(code / 4096), DIGITS + (code % 4096))}"`;
}

/** Text made of the characters of facets only: their markers and digits. */
const FACET_TEXT = /^[\uE00F-\uE014\u{F0000}-\u{F0FFF}]+$/u;

/** A facet that no file has: what a filter value never indexed selects. */
const NO_FACET = facet(FACET.none, 0);

/** The facet of a type, folder or tag by its code in `searchFacetValues`, as SQL text; NO_FACET when the value has none. */
function facetOf(marker: number, kind: 't' | 'f' | 'g', values: string[]) {
  return sql<string>`coalesce((select group_concat('"' || char(${sql.lit(marker)}, ${sql.lit(DIGITS)} + code / 4096, ${sql.lit(DIGITS)} + code % 4096) || '"', ' OR ')
    from ${sql.table('searchFacetValues')} where kind = ${sql.lit(kind)} and value in (${sql.join(values)})), ${NO_FACET})`;
}

/**
 * The FTS5 query of a search and the other filters (not dates, not a list of IDs): the term as a
 * substring of the name or the text, and of each other filter one of the facets it accepts. The
 * codes of types, folders and tags are looked up in the same statement.
 */
function ftsQuery(filters: FileFilters) {
  const groups: Array<RawBuilder<string> | string> = [];
  const { types, imagesOnly, visibility, folder, tag } = filters;
  if (types) groups.push(types.length ? facetOf(FACET.type, 't', [...new Set(types)]) : NO_FACET);
  if (imagesOnly) groups.push(facet(FACET.image, 0));
  if (visibility) {
    const code: Record<VisibilityFilter, number> = { public: 0, private: 1, hasPassword: 2 };
    groups.push(visibility.length ? [...new Set(visibility)].map((v) => facet(FACET.visibility, code[v])).join(' OR ') : NO_FACET);
  }
  if (folder) groups.push(folder.kind === 'unfiled' ? facet(FACET.folder, 0) : facetOf(FACET.folder, 'f', [folder.id]));
  if (tag) groups.push(tag.kind === 'untagged' ? facet(FACET.tag, 0) : facetOf(FACET.tag, 'g', [tag.id]));
  // A term matches a file's facets only if it is written in their characters alone; any other term
  // is looked for in every column, which is cheaper than naming the two (a million files, a word of
  // the recognised text in 424,257: 83 against 108 ms).
  const term = filters.search!;
  const phrase = FACET_TEXT.test(term) ? `{searchName searchOcr} : ${ftsPhrase(term)}` : ftsPhrase(term);
  if (groups.length === 0) return sql<string>`${phrase}`;
  return sql<string>`${sql.join(
    [phrase, ...groups].map((g, i) => (i === 0 ? sql`${g}` : sql`${' AND searchFacets : ('} || ${g} || ${')'}`)),
    sql` || `,
  )}`;
}

/** A search and nothing else but dates. */
export function searchOnly(filters: FileFilters): boolean {
  const { search, ids, types, visibility, folder, tag, imagesOnly } = filters;
  return search !== null && ids === null && types === null && visibility === null && folder === null && tag === null && !imagesOnly;
}

/**
 * A search through SQLite's trigram index with any other filters but a list of IDs: the index names
 * the selected files by itself (searchDocuments), dates aside.
 */
export function searchesDocuments(dialect: Dialect, filters: FileFilters): boolean {
  return dialect === 'sqlite' && searchesThroughIndex(dialect, filters) && filters.ids === null;
}

/**
 * PostgreSQL, a search of at least three characters and nothing else but dates: its matches are
 * counted in parts (searchMatchParts). A shorter term has no trigram to look up: each part would
 * read every file (1.3 s with a million files, against 0.7 s for one pass over the files' rows).
 */
export function searchesNamesApart(dialect: Dialect, filters: FileFilters): boolean {
  return dialect === 'postgres' && searchOnly(filters) && [...filters.search!].length >= TRIGRAM;
}

/**
 * SQLite: the first document number of the account's files uploaded at or after `time`, as SQL (null
 * when there is none). Meaningful only while the account's numbers follow upload order
 * (`users.docsUnordered` = 0): its files from `time` on are then exactly those numbered from here.
 */
export function firstDocumentFrom(db: Executor, userId: string, time: Expression<number> | number) {
  const account = forAccount(db, userId);
  const earliest = account.selectFrom('files').select((eb) => eb.fn.min('files.createdAt').as('t')).where('files.createdAt', '>=', time);
  return account.selectFrom('files').select((eb) => eb.fn.min('files.docId').as('d')).where('files.createdAt', '=', earliest);
}

/** SQLite: whether the account's document numbers follow upload order (migration 0020-search-documents). */
export async function documentsInUploadOrder(db: Executor, userId: string): Promise<boolean> {
  const row = await db.selectFrom('users').select('docsUnordered').where('id', '=', userId).executeTakeFirst();
  return Number(row?.docsUnordered ?? 1) === 0;
}

/**
 * SQLite: the number of the account's files a search and the other filters select (searchesDocuments),
 * dates included, counted by the trigram index alone (no file is looked at): 62,067 matches among a
 * million files in about 15 ms, against 150 ms when each match's account was checked in the files
 * table. Null when a date bound is set and the account's document numbers do not follow upload order.
 */
export async function countSearchDocuments(db: Executor, userId: string, filters: FileFilters): Promise<number | null> {
  const dated = filters.from !== null || filters.until !== null;
  if (dated && !(await documentsInUploadOrder(db, userId))) return null;
  const last = forAccount(db, userId).documentRange().last;
  const within = dated
    ? {
        from: filters.from === null ? forAccount(db, userId).documentRange().first : sql<number>`coalesce((${firstDocumentFrom(db, userId, filters.from)}), ${last} + 1)`,
        to: filters.until === null ? sql<number>`${last} + 1` : sql<number>`coalesce((${firstDocumentFrom(db, userId, filters.until + 1)}), ${last} + 1)`,
      }
    : undefined;
  const { rows } = await sql<{ n: number }>`select ${countDocuments(db, userId, filters, within)} as n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * PostgreSQL, a search and dates: the upload time of each selected file, once, in two parts
 * (migration 0025-search-names). `beginning`: the files whose folded name begins with the term, a
 * range of the names' index read alone. `rest`: those whose name contains it after its first
 * character and do not begin with it (the trigram index of the names' rest), and those whose
 * recognised text contains it and whose name does not (the files' own trigram index). A million
 * files, 66,895 names beginning with a word: counted in 9 ms, against 96 through the files' rows.
 */
export function searchMatchParts(db: Executor, userId: string, filters: FileFilters) {
  const term = filters.search!;
  const containing = likeContaining(term);
  const dated = <Q extends SelectQueryBuilder<Database, any, any>>(query: Q, column: 'fileNames.createdAt' | 'files.createdAt'): Q => {
    let q = query;
    if (filters.from !== null) q = q.where(column, '>=', filters.from) as Q;
    if (filters.until !== null) q = q.where(column, '<=', filters.until) as Q;
    return q;
  };
  const account = forAccount(db, userId);
  const name = sql.ref<string | null>('fileNames.searchName');
  const names = () => account.selectFrom('fileNames').select('fileNames.createdAt as t');
  // The expression of the index, `2` written in the SQL: a parameter would not match it.
  const byNameStart = dated(names().where(beginsWith(name, term)), 'fileNames.createdAt');
  const byNameRest = dated(names().where(like(sql`substr(${name}, 2)`, containing)).where((eb) => eb.not(beginsWith(name, term))), 'fileNames.createdAt');
  const byText = dated(
    account
      .selectFrom('files')
      .select('files.createdAt as t')
      .where('files.searchOcr', 'is not', null)
      .where(like(sql.ref('files.searchOcr'), containing))
      .where((eb) => eb.not(like(eb.fn.coalesce('files.searchName', sql.lit('')), containing))),
    'files.createdAt',
  );
  return { beginning: byNameStart, rest: byNameRest.unionAll(byText) };
}

/** PostgreSQL: every file a search and dates select, as its upload time `t` (searchMatchParts). */
export function searchMatchTimes(db: Executor, userId: string, filters: FileFilters) {
  const { beginning, rest } = searchMatchParts(db, userId, filters);
  return beginning.unionAll(rest);
}

/**
 * PostgreSQL: how many files a search and dates select (searchMatchParts), and how many of them
 * have a name that begins with the term. One statement in the request's own transaction: counted on
 * a second connection beside it, the parts took 7.8 and 3.8 ms side by side instead of one after the
 * other, but a request then held one connection while it waited for another, and as many searches at
 * once as the pool has connections waited for ever (test/http/file-counts.test.ts).
 */
export async function countSearchMatches(db: Executor, userId: string, filters: FileFilters): Promise<{ total: number; beginning: number }> {
  const { beginning, rest } = searchMatchParts(db, userId, filters);
  const row = await db
    .selectNoFrom((eb) => [
      eb.selectFrom(beginning.as('b')).select((e) => e.fn.countAll<number | string>().as('n')).as('beginning'),
      eb.selectFrom(rest.as('r')).select((e) => e.fn.countAll<number | string>().as('n')).as('rest'),
    ])
    .executeTakeFirstOrThrow();
  return { total: Number(row.beginning) + Number(row.rest), beginning: Number(row.beginning) };
}

/**
 * A search counted by the index that serves it: on SQLite the trigram index, with any other filters
 * but a list of IDs (searchesDocuments); on PostgreSQL a search alone (and dates), by the table of
 * names, which also tells how many names begin with the term (`beginning`; null on SQLite). Null for
 * other selections, and on SQLite for dates its numbers cannot bound.
 */
export async function countSearchByIndex(db: Executor, dialect: Dialect, userId: string, filters: FileFilters): Promise<{ total: number; beginning: number | null } | null> {
  if (searchesNamesApart(dialect, filters)) return countSearchMatches(db, userId, filters);
  if (!searchesDocuments(dialect, filters)) return null;
  const total = await countSearchDocuments(db, userId, filters);
  return total === null ? null : { total, beginning: null };
}

/** How a query finds the selected files. */
export type Access =
  /** The account's index is walked; a search through SQLite's trigram index is a filter on it. */
  | 'walk'
  /**
   * The selected files are read or counted themselves, found through an index that names them, so
   * the cost follows the selection, not the library. On SQLite: a search's matches by document
   * number (the trigram index), a tag's files from its list, a folder's files from the folder index.
   * Without statistics SQLite would walk the account's index instead, checking every file: 84 ms for
   * a tag of two files among a million, against 0.01 ms.
   */
  | 'matches'
  /**
   * The account's index is walked and each row is checked on its own: its folded text matched, its
   * tag looked up by its ID. For the first pages of a search with many matches, or of a tag that
   * holds a good share of the account, where a page is full after a few hundred rows and reading
   * every match or the tag's whole list first would cost more.
   */
  | 'rowwise'
  /**
   * SQLite, a search with other filters: as 'matches', with the search's matches (the trigram
   * index) driving and every other filter checked on each match, its index hidden from the planner
   * (searchDrives says when).
   */
  | 'search'
  /** As 'walk' (the sort's index drives), with the other filters' indexes hidden as for 'search', the dates' excepted. */
  | 'walk-search'
  /**
   * A tag with a type, a visibility or a folder: as 'matches', with the tag's list narrowed by the
   * tag rows' copy of their file's columns (migration 0052-tag-combinations); on SQLite it drives,
   * the other filters' indexes hidden (tagDrives says when).
   */
  | 'tag';

export function filteredFiles(db: Executor, dialect: Dialect, userId: string, filters: FileFilters, access: Access = 'walk'): FilesQuery {
  const bySearchIndex = dialect === 'sqlite' && searchesThroughIndex(dialect, filters) && access !== 'rowwise';
  const byOwnIndex = bySearchIndex || (dialect === 'sqlite' && (filters.tag?.kind === 'tag' || filters.folder?.kind === 'folder'));
  const byTag = access === 'tag' && filters.tag?.kind === 'tag';
  let query = forAccount(db, userId, { notByOwnerIndex: byOwnIndex && (access === 'matches' || access === 'search' || byTag) }).selectFrom('files');
  // SQLite's unary `+` keeps a column's value and hides it from index selection. A walk keeps the
  // dates in sight: they bound the walk of the upload-order index itself. The tag's list is read
  // through the IDs.
  const hide = (bySearchIndex && (access === 'search' || access === 'walk-search')) || (byTag && dialect === 'sqlite');
  const col = <C extends 'files.id' | 'files.createdAt' | 'files.mimeType' | 'files.visibility' | 'files.passwordHash' | 'files.folderId'>(column: C) =>
    (hide && !(column === 'files.createdAt' && access === 'walk-search') && !(column === 'files.id' && byTag) ? sql`+${sql.ref(column)}` : column) as C;
  if (filters.ids) query = query.where('files.id', 'in', filters.ids);
  if (filters.from !== null) query = query.where(col('files.createdAt'), '>=', filters.from);
  if (filters.until !== null) query = query.where(col('files.createdAt'), '<=', filters.until);
  if (filters.types) query = query.where(col('files.mimeType'), 'in', filters.types);
  if (filters.imagesOnly) query = query.where(imageType(sql.ref('files.mimeType')));
  if (filters.search !== null) {
    // Both columns hold foldForSearch() text (migration 0006-listing), as does the term.
    const pattern = likeContaining(filters.search);
    const contains = (column: 'files.searchName' | 'files.searchOcr') => like(sql.ref(column), pattern);
    if (dialect === 'postgres') {
      // Two trigram index scans, ORed as bitmaps.
      query = query.where((eb) => eb.or([contains('files.searchName'), contains('files.searchOcr')]));
    } else if (bySearchIndex) {
      // The trigram index (migration 0016-search-index) names the account's files whose name or text
      // contains the term, and that the other filters select (their facets, migration
      // 0034-search-facets; with a list of IDs, the term alone). The conditions below check them
      // again on each row, at no cost worth noting: the rows are read anyway.
      const indexed = filters.ids === null ? filters : { ...filters, types: null, visibility: null, folder: null, tag: null, imagesOnly: false };
      query = query.where(sql<boolean>`${sql.ref('files.docId')} in (${searchDocuments(db, userId, indexed)})`);
    } else if (access === 'rowwise') {
      query = query.where((eb) => eb.or([contains('files.searchName'), contains('files.searchOcr')]));
    } else {
      // Too short for a trigram: the name is matched in the listing index; OCR text in the rows of
      // the files that have some, read once per statement (migration 0051-ocr-scan-index). The
      // bound on the upload time holds for every file: it has SQLite walk the account's upload-order
      // index, whose order is the order the rows were written in, instead of the (account, name)
      // index of the unique names, from which each row is fetched from a page anywhere in the table.
      // A million files, every OCR match of `in` listed: 3.0 s that way, 1.7 s this way.
      const byOcr = forAccount(db, userId)
        .selectFrom('files')
        .select('files.id')
        .where('files.createdAt', '>=', Number.MIN_SAFE_INTEGER)
        .where('files.searchOcr', 'is not', null)
        .where(contains('files.searchOcr'));
      query = query.where((eb) => eb.or([contains('files.searchName'), eb('files.id', 'in', byOcr)]));
    }
  }
  if (filters.visibility) {
    const chosen = filters.visibility;
    // The values are written in the SQL: each visibility has a partial index (migration
    // 0022-visibility-indexes), which SQLite considers only where the query implies its condition.
    query = query.where((eb) =>
      eb.or(
        chosen.map((v) =>
          visibilityCondition(v, {
            public: () => eb.and([eb(col('files.visibility'), '=', sql.lit('PUBLIC' as const)), eb(col('files.passwordHash'), 'is', null)]),
            private: () => eb(col('files.visibility'), '=', sql.lit('PRIVATE' as const)),
            hasPassword: () => eb(col('files.passwordHash'), 'is not', null),
          }),
        ),
      ),
    );
  }
  const folder = filters.folder;
  if (folder) query = folder.kind === 'unfiled' ? query.where(col('files.folderId'), 'is', null) : query.where(col('files.folderId'), '=', folder.id);
  const tag = filters.tag;
  if (tag?.kind === 'tag' && access === 'rowwise') {
    // One look-up of the (fileId, tagId) key per file walked, instead of the tag's whole list.
    query = query.where((eb) =>
      eb.exists(
        eb.selectFrom('fileTags').select(sql.lit(1).as('one')).whereRef('fileTags.fileId', '=', 'files.id').where('fileTags.tagId', '=', tag.id).where('fileTags.excluded', '=', 0),
      ),
    );
  } else if (tag?.kind === 'tag') {
    // The tag is the account's (assertOwnedSelection), so its files are too. A short list of IDs
    // from the (tagId, excluded, fileId) index; when it drives ('tag'), only the IDs of the files
    // the other filters select, by the tag rows' copy of the files' columns.
    const copied = copiedFolder(folder);
    const tagged = db
      .selectFrom('fileTags')
      .select('fileTags.fileId')
      .where('fileTags.tagId', '=', tag.id)
      .where('fileTags.excluded', '=', 0)
      .$if(byTag && filters.types !== null, (q) => q.where('fileTags.mimeType', 'in', filters.types!))
      .$if(byTag && filters.visibility !== null, (q) => q.where((eb) => copiedVisibility(eb, (name) => sql.ref(`fileTags.${name}`), filters.visibility!)))
      .$if(byTag && copied !== null, (q) => q.where('fileTags.folderId', '=', copied!));
    query = query.where(col('files.id'), 'in', tagged);
  } else if (tag?.kind === 'untagged') {
    if (dialect === 'postgres' && filters.types === null && filters.visibility === null && folder === null) {
      // Alone, an anti-join, probing an index of the tag rows per file: the file's mark (below) is
      // in its row, which PostgreSQL reads from the table (`tag=untagged` among a million files).
      query = query.where((eb) =>
        eb.not(eb.exists(eb.selectFrom('fileTags').select(sql.lit(1).as('one')).whereRef('fileTags.fileId', '=', 'files.id').where('fileTags.excluded', '=', 0))),
      );
    } else {
      // The file's own mark, kept by the database (migration 0031-tagged-files), read with the row
      // that the walk reads anyway, instead of a look-up of its tags or the account's whole list of
      // tagged files (SQLite, a million files, page 500: 117–121 → 10 ms). The indexes of a type,
      // a folder and each visibility hold it too (migration 0033-untagged-timeline-indexes), so
      // with one of those filters each calendar bucket is one range of that index.
      query = query.where('files.tagged', '=', 0);
    }
  }
  return query;
}

/**
 * What each `visibility` value selects, over the columns of the files or of their counts per
 * combination: `public` is public without a password, `private` is private with or without one,
 * `hasPassword` is either visibility with one (so a private file with a password is both).
 */
function visibilityCondition<T>(value: VisibilityFilter, conditions: Record<VisibilityFilter, () => T>): T {
  return conditions[value]();
}

/**
 * The visibility values over the copies of a file's columns that the counts per combination and the
 * tag rows hold (migrations 0028-filter-combinations, 0052-tag-combinations): its visibility, and
 * `password`, 1 when it has one.
 */
function copiedVisibility(eb: ExpressionBuilder<any, any>, column: (name: 'visibility' | 'password') => RawBuilder<unknown>, values: VisibilityFilter[]) {
  return eb.or(
    values.map((v) =>
      visibilityCondition(v, {
        public: () => eb.and([eb(column('visibility'), '=', 'PUBLIC'), eb(column('password'), '=', 0)]),
        private: () => eb(column('visibility'), '=', 'PRIVATE'),
        hasPassword: () => eb(column('password'), '=', 1),
      }),
    ),
  );
}

/** A folder filter as those copies hold the folder: its ID, or '' for the unfiled files. */
function copiedFolder(folder: FileFilters['folder']): string | null {
  return folder && (folder.kind === 'unfiled' ? '' : folder.id);
}

/** The tag whose rows alone select the files (tagRows): a tag with nothing else but dates and a folder (or the unfiled files); else null. */
export function tagOfItsRows(filters: FileFilters): string | null {
  const { tag } = filters;
  if (tag?.kind !== 'tag' || filters.types !== null || filters.visibility !== null || filters.search !== null || filters.ids !== null || filters.imagesOnly) return null;
  return tag.id;
}

/**
 * The tag rows that select a tag's files when the filters are the tag and nothing else but dates and
 * a folder (or the unfiled files); null for any other filters. They are one range of an index that
 * holds them in upload order: (tagId, excluded, createdAt) for the tag alone (migration
 * 0030-tag-upload-times), (tagId, excluded, folderId, createdAt) with a folder (migration
 * 0055-tag-folder-index; each row carries its file's folder). The tag is the account's
 * (assertOwnedSelection), so its rows are the account's files.
 */
export function tagRows(db: Executor, filters: FileFilters) {
  const tagId = tagOfItsRows(filters);
  if (tagId === null) return null;
  const { folder, from, until } = filters;
  const folderId = copiedFolder(folder);
  return db
    .selectFrom('fileTags')
    .where('fileTags.tagId', '=', tagId)
    .where('fileTags.excluded', '=', 0)
    .$if(folderId !== null, (q) => q.where('fileTags.folderId', '=', folderId!))
    .$if(from !== null, (q) => q.where('fileTags.createdAt', '>=', from!))
    .$if(until !== null, (q) => q.where('fileTags.createdAt', '<=', until!));
}

/** The gallery's images: a MIME type beginning with `image/`, in SQL and here. */
function imageType(mimeType: RawBuilder<unknown>) {
  return sql<boolean>`substr(${mimeType}, 1, 6) = ${'image/'}`;
}
function isImageType(mimeType: string): boolean {
  return mimeType.slice(0, 6) === 'image/';
}

/** A folder or tag filter must name one of the account's own (404 otherwise, like everywhere else). */
export async function assertOwnedSelection(db: Executor, userId: string, filters: FileFilters): Promise<void> {
  const account = forAccount(db, userId);
  const [folder, tag] = await Promise.all([
    filters.folder?.kind === 'folder' ? account.selectFrom('folders').select('id').where('id', '=', filters.folder.id).executeTakeFirst() : true,
    filters.tag?.kind === 'tag' ? account.selectFrom('tags').select('id').where('id', '=', filters.tag.id).executeTakeFirst() : true,
  ]);
  if (!folder) throw notFound('Folder not found');
  if (!tag) throw notFound('Tag not found');
}

export type SortColumn = 'createdAt' | 'size' | 'searchName' | 'views' | 'downloads';

/** Each order is a column and a direction; ties are broken by the ID in the same direction. */
export const sortOrder: Record<SortBy, { column: SortColumn; direction: 'asc' | 'desc' }> = {
  newest: { column: 'createdAt', direction: 'desc' },
  oldest: { column: 'createdAt', direction: 'asc' },
  largest: { column: 'size', direction: 'desc' },
  smallest: { column: 'size', direction: 'asc' },
  // Case-insensitively by the folded name, in code-point order on both databases.
  name: { column: 'searchName', direction: 'asc' },
  'most-viewed': { column: 'views', direction: 'desc' },
  'least-viewed': { column: 'views', direction: 'asc' },
  'most-downloaded': { column: 'downloads', direction: 'desc' },
  'least-downloaded': { column: 'downloads', direction: 'asc' },
};

export function isDateSort(sortBy: SortBy): boolean {
  return sortBy === 'newest' || sortBy === 'oldest';
}

/** Orders a query by the sort (reversed when asked), the ID breaking ties. */
export function orderedBy<Q extends SelectQueryBuilder<Database, 'files', any>>(query: Q, sortBy: SortBy, reversed = false): Q {
  const { column, direction } = sortOrder[sortBy];
  const dir = reversed ? (direction === 'asc' ? 'desc' : 'asc') : direction;
  return query.orderBy(`files.${column}`, dir).orderBy('files.id', dir) as Q;
}

/**
 * Rows strictly before (`before`) or after the position of a row whose sort key is `key` and ID is
 * `id`, in the sort's order: a row-value comparison the sort's index answers.
 */
export function beyond(query: FilesQuery, sortBy: SortBy, side: 'before' | 'after', key: string | number, id: string): FilesQuery {
  const { column, direction } = sortOrder[sortBy];
  const greater = (direction === 'asc') === (side === 'after');
  return query.where((eb) => eb(eb.refTuple(`files.${column}`, 'files.id'), greater ? '>' : '<', eb.tuple(key, id)));
}

/**
 * How the database counts a listing's files without counting them, or null when it does not:
 * - a single filter whose files it counts per value (migration 0018-file-counts): several values of
 *   one filter are summed where they cannot select a file twice (types, the visibility values other
 *   than `private` with `hasPassword`, of which a private file with a password is both); `untagged`
 *   is the account's files less the `tagged` count (migration 0023-tagged-count);
 * - several of `types`, `visibility`, `folder` and `tag=untagged`, the gallery's images with any of
 *   the others, and overlapping visibility values: the counts per combination of those columns and
 *   the file's tagged mark (migrations 0028-filter-combinations, 0032-untagged-combinations), in
 *   which each file counts once;
 * - a tag with any of `types`, `visibility`, `folder` or the gallery's images: the tag's counts per
 *   combination (migration 0052-tag-combinations).
 * A search, dates or a list of IDs are counted over the files.
 */
type CountedFilter =
  | { dimension: 'type' | 'visibility' | 'folder' | 'tag' | 'tagged'; values: string[] | 'images' }
  | { dimension: 'combination'; tagId: string | null; types: string[] | 'images' | null; visibility: VisibilityFilter[] | null; folderId: string | null; untagged: boolean };

function countedFilter(filters: FileFilters): CountedFilter | null {
  const { ids, search, from, until, imagesOnly, types, visibility, folder, tag } = filters;
  if (ids !== null || search !== null || from !== null || until !== null) return null;
  const untagged = tag?.kind === 'untagged';
  const tagId = tag?.kind === 'tag' ? tag.id : null;
  const typeValues = imagesOnly ? (types ? [...new Set(types)].filter(isImageType) : 'images') : types && [...new Set(types)];
  const visibilityValues = visibility && [...new Set(visibility)];
  const overlapping = visibilityValues !== null && visibilityValues.includes('private') && visibilityValues.includes('hasPassword');
  const folderId = copiedFolder(folder);
  const given = [typeValues, visibilityValues, folderId].filter((f) => f !== null).length;
  if (given === 0) return tagId !== null ? { dimension: 'tag', values: [tagId] } : untagged ? { dimension: 'tagged', values: [''] } : null;
  if (given > 1 || overlapping || untagged || tagId !== null) return { dimension: 'combination', tagId, types: typeValues, visibility: visibilityValues, folderId, untagged };
  if (typeValues) return { dimension: 'type', values: typeValues };
  if (visibilityValues) return { dimension: 'visibility', values: visibilityValues };
  return { dimension: 'folder', values: [folderId!] };
}

/**
 * The exact number of files a listing selects, read from the account's counts instead of counted
 * over its files (countedFilter); null for the filters they do not cover.
 */
export async function countedTotal(db: Executor, userId: string, filters: FileFilters): Promise<number | null> {
  const counted = countedFilter(filters);
  if (!counted) return null;
  if (counted.dimension === 'combination') {
    const { tagId, types, visibility, folderId, untagged } = counted;
    if (types?.length === 0 || visibility?.length === 0) return 0;
    // A tag's counts (migration 0052-tag-combinations) have the same columns as the account's, but
    // the tagged mark: every file they count has the tag.
    const table = tagId === null ? 'fileCombinations' : 'tagCombinations';
    const column = (name: 'mimeType' | 'visibility' | 'password' | 'folderId' | 'tagged' | 'tagId' | 'files') => sql.ref<string | number>(`${table}.${name}`);
    const row = await forAccount(db, userId)
      .selectFrom(table)
      .select(sql<number | string | null>`sum(${column('files')})`.as('n'))
      .$if(tagId !== null, (query) => query.where(column('tagId'), '=', tagId!))
      .$if(types !== null, (query) => (types === 'images' ? query.where(imageType(column('mimeType'))) : query.where(column('mimeType'), 'in', types as string[])))
      .$if(folderId !== null, (query) => query.where(column('folderId'), '=', folderId!))
      .$if(untagged, (query) => query.where(column('tagged'), '=', 0))
      .$if(visibility !== null, (query) => query.where((eb) => copiedVisibility(eb, column, visibility!)))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
  const { values } = counted;
  if (values.length === 0) return 0;
  const row = await forAccount(db, userId)
    .selectFrom('fileCounts')
    .select((eb) => eb.fn.sum<number | string | null>('fileCounts.files').as('n'))
    .where('fileCounts.dimension', '=', counted.dimension)
    .$call((query) => (values === 'images' ? query.where(imageType(sql.ref('fileCounts.value'))) : query.where('fileCounts.value', 'in', values)))
    .executeTakeFirst();
  const n = Number(row?.n ?? 0);
  return counted.dimension === 'tagged' ? (await accountFileCount(db, userId)) - n : n;
}

/**
 * SQLite, a search with other filters: whether the search's matches should drive the query
 * ('search' access) rather than another filter's index. Without statistics SQLite takes the other
 * filter's index whatever its size: a search of the unfiled files of a million, half of them, walked
 * those 500,000 files to check each against the matches (470 ms for a term matching nothing, 655 ms
 * for 85,000 matches). The search drives unless the other filter, counted by the database
 * (countedTotal), selects fewer than half as many files as the search matches, or a list of IDs is
 * given. Several other filters (a tag with another among them), or overlapping visibility values,
 * let the search drive: only one of their indexes could drive, reading every file it selects and
 * checking the others on each row, so their count together (migrations 0028-filter-combinations,
 * 0052-tag-combinations) says little about that read's cost.
 */
async function searchDrives(db: Executor, userId: string, filters: FileFilters): Promise<boolean> {
  if (filters.ids !== null) return false;
  // `untagged` has no index of its own to read the selection through, nor have the gallery's images
  // (their count, countedTotal, serves the gallery's total): the search drives, as before they were
  // counted. With `types` as well the types' index could, but that was not measured for the gallery.
  if (filters.tag?.kind === 'untagged' || filters.imagesOnly) return true;
  const others = { ...filters, search: null, from: null, until: null };
  if (countedFilter(others)?.dimension === 'combination') return true;
  const selected = await countedTotal(db, userId, others);
  if (selected === null) return true;
  const matches = await countSearchDocuments(db, userId, { ...filters, ids: null, types: null, visibility: null, folder: null, tag: null, imagesOnly: false });
  return matches === null || selected > 2 * matches;
}

/**
 * How a SQLite search through the trigram index with other filters reads its selection, in the
 * listing, the gallery and the timeline alike: through the search's matches ('search') or through the
 * other filter's index ('matches'), as searchDrives decides. Null elsewhere: PostgreSQL plans with
 * statistics, and a search too short for a trigram is a filter on the walk.
 */
export async function searchAccess(db: Executor, dialect: Dialect, userId: string, filters: FileFilters): Promise<'search' | 'matches' | null> {
  if (dialect !== 'sqlite' || !searchesThroughIndex(dialect, filters)) return null;
  return (await searchDrives(db, userId, filters)) ? 'search' : 'matches';
}

/**
 * A tag with a type, a visibility or a folder (no search): whether a read of the whole selection
 * should narrow the tag's list by the other filters ('tag'). Without statistics SQLite takes the
 * other filter's index whatever its size: among 100,000 files a tag with the unfiled private files
 * read the 50,000 unfiled ones to find 423. There the tag drives when it holds no more files than
 * the other filters select, both counted by the database (countedTotal). PostgreSQL, which plans
 * with statistics, gets the narrowed list and chooses: its estimate of the tag's list then follows
 * the selection, and it reads the selected files by ID instead of every file of a folder.
 */
export async function tagDrives(db: Executor, dialect: Dialect, userId: string, filters: FileFilters): Promise<boolean> {
  const { tag, types, visibility, folder } = filters;
  if (tag?.kind !== 'tag' || filters.search !== null || filters.ids !== null) return false;
  if (types === null && visibility === null && folder === null) return false;
  if (dialect === 'postgres') return true;
  // With a folder the list is one range of the (tag, excluded, folder) index (migration
  // 0055-tag-folder-index): exactly the tag's files in the folder, whatever the tag's size.
  if (folder !== null) return true;
  const [tagged, others] = await Promise.all([countedTotal(db, userId, { ...NO_FILTERS, tag }), countedTotal(db, userId, { ...filters, tag: null, from: null, until: null, imagesOnly: false })]);
  return tagged !== null && others !== null && tagged <= others;
}

/** The account's file count, maintained by triggers (migration 0006-listing): no COUNT needed. */
export async function accountFileCount(db: Executor, userId: string): Promise<number> {
  const row = await db.selectFrom('users').select('fileCount').where('id', '=', userId).executeTakeFirst();
  return Number(row?.fileCount ?? 0);
}

export async function countOf(query: FilesQuery): Promise<number> {
  const row = await query.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
