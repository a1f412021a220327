import { useCallback, useEffect, useId, useMemo, useRef, useState, type ReactNode } from 'react';
import { ApiError, del, get, patch, query, request } from '../api.ts';
import { copyText } from '../clipboard.ts';
import { formatDateTime, pluralize } from '../format.ts';
import { Link, useAskBeforeUnload, useQueryState } from '../router.tsx';
import { useSession } from '../session.tsx';
import { Badge, CopyButton, Empty, ErrorNote, focusItem, focusPageHeading, Loading, PageHeader, useAction, useAnnounce, useConfirm, useDialogTarget, useLoad, useToast } from '../ui.tsx';
import type { FileRecord, Folder, FolderShare, Pagination, Tag, Timeline } from '@api';
import { FolderOptions } from './FolderOptions.tsx';
import { shareUrl } from './file-links.ts';
import { FileGrid, FileList } from './FileItems.tsx';
import { FileEditor } from './FileEditor.tsx';
import { ARCHIVE_FILE_LIMIT, ArchiveContentsDialog, CreateArchiveDialog } from './ArchiveDialogs.tsx';
import { Gallery } from './Gallery.tsx';
import { usePendingThumbnails } from './pending-thumbnails.ts';
import { TimelineBar, type GroupBy } from './TimelineBar.tsx';
import { periodRange } from '../periods.ts';


/** Deletes a file; one already gone (deleted in another tab, or expired) is what was asked for, not a failure. */
const deletedOrGone = (id: string) =>
  del(`/api/files/${encodeURIComponent(id)}`).catch((error: unknown) => {
    if (!(error instanceof ApiError && error.status === 404)) throw error;
  });

export const sortOptions = [
  ['newest', 'Newest first'],
  ['oldest', 'Oldest first'],
  ['largest', 'Largest first'],
  ['smallest', 'Smallest first'],
  ['name', 'Name'],
  ['most-viewed', 'Most viewed'],
  ['least-viewed', 'Least viewed'],
  ['most-downloaded', 'Most downloaded'],
  ['least-downloaded', 'Least downloaded'],
] as const;

const visibilityOptions = [
  ['public', 'Public'],
  ['private', 'Private'],
  ['hasPassword', 'Password-protected'],
] as const;

const pageSizes = [24, 48, 96];
/**
 * The most files "Select all matching" takes: each bulk action is a request per file, and ten
 * thousand of them across a network take minutes (docs/web.md, "Bulk selection").
 */
const SELECT_ALL_LIMIT = 10_000;
/**
 * Requests a bulk action has under way at once: one at a time, each waited for its round trip, and
 * a selection of thousands took minutes; a few at once keep a server's cores (and a database on the
 * network) busy without crowding out other requests.
 */
const BULK_REQUESTS_AT_ONCE = 4;

/** The listing filters, as kept in the page's query string. */
interface Filters {
  search: string;
  sortBy: string;
  types: string[];
  visibility: string[];
  folder: string;
  tag: string;
  /** yyyy-mm-dd (browser-local days) */
  from: string;
  to: string;
}

function readFilters(params: URLSearchParams): Filters {
  const list = (name: string) => (params.get(name) ?? '').split(',').filter(Boolean);
  return {
    search: params.get('search') ?? '',
    sortBy: params.get('sortBy') ?? 'newest',
    types: list('types'),
    visibility: list('visibility'),
    folder: params.get('folder') ?? '',
    tag: params.get('tag') ?? '',
    from: calendarDay(params.get('from')),
    to: calendarDay(params.get('to')),
  };
}

/**
 * A yyyy-mm-dd day from the address, or '' when it is not one: the address can say anything
 * ("yesterday", 2026-13-45), and a day that does not exist (2026-02-30) is not rolled into the next month.
 */
function calendarDay(value: string | null): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value ?? '');
  if (!match) return '';
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(year, month - 1, day);
  return date.getFullYear() === year && date.getMonth() === month - 1 && date.getDate() === day ? value! : '';
}

/**
 * A browser-local calendar day's first and last instants, as ISO timestamps with a zone. The last
 * is the next day's first less a millisecond: "23:59:59.999" named the first of two such moments
 * on a day whose clocks go back at midnight (Chile, Lebanon, Egypt), and the repeated hour fell
 * between one day's end and the next day's start.
 */
const midnightOf = (day: string, after = 0) => {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(year, month - 1, date + after).getTime();
};
const dayStart = (day: string) => (day ? new Date(midnightOf(day)).toISOString() : '');
const dayEnd = (day: string) => (day ? new Date(midnightOf(day, 1) - 1).toISOString() : '');

/** The API's filter parameters (shared by the list, the gallery and the timeline). */
function filterParams(filters: Filters): Record<string, string> {
  return {
    search: filters.search.trim(),
    sortBy: filters.sortBy === 'newest' ? '' : filters.sortBy,
    types: filters.types.join(','),
    visibility: filters.visibility.join(','),
    folder: filters.folder,
    tag: filters.tag,
    dateFrom: dayStart(filters.from),
    dateTo: dayEnd(filters.to),
  };
}

/**
 * A timeline window read: the filters' date range intersected with the period's, and the snapshot
 * of the timeline it was chosen on (none when the period came with the address).
 */
export interface TimeWindow {
  from: number;
  to: number;
  snapshot?: string;
}

function windowParams(base: Record<string, string>, window: TimeWindow | null): Record<string, string> {
  if (!window) return base;
  const from = Math.max(base.dateFrom ? Date.parse(base.dateFrom) : -Infinity, window.from);
  // `to` is exclusive, dateTo inclusive.
  const to = Math.min(base.dateTo ? Date.parse(base.dateTo) : Infinity, window.to - 1);
  return { ...base, dateFrom: new Date(from).toISOString(), dateTo: new Date(to).toISOString(), ...(window.snapshot ? { snapshot: window.snapshot } : {}) };
}

interface Listing {
  data: FileRecord[];
  pagination: Pagination;
  /** The filters, page and page size this answer was asked for. */
  requested: string;
}

// The server takes IANA names only; a browser that knows its zone as no more than an offset counts in UTC.
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const timezone = browserZone && !/^[+-]/.test(browserZone) ? browserZone : 'UTC';
/** One empty listing for every render without data, so hooks that follow the listing see no change. */
const NO_FILES: FileRecord[] = [];

export function FilesPage() {
  const { can } = useSession();
  const toast = useToast();
  const run = useAction();
  const confirm = useConfirm();
  const [params, setParams] = useQueryState();
  const filters = readFilters(params);
  const view = params.get('view') === 'list' ? 'list' : 'grid';
  // A whole number from 1, else the first page: `page=2.5` or `page=-1` in an address was sent on and
  // showed the server's 400 without the list.
  const pageParam = Number(params.get('page'));
  const page = Number.isSafeInteger(pageParam) && pageParam >= 1 ? pageParam : 1;
  const limit = pageSizes.includes(Number(params.get('limit'))) ? Number(params.get('limit')) : 24;
  const groupBy = (['month', 'week', 'year'].includes(params.get('groupBy') ?? '') ? params.get('groupBy') : 'month') as GroupBy;
  const [previews, setPreviews] = useState(() => localStorage.getItem('hoard.previews') !== 'off');
  const [searchText, setSearchText] = useState(filters.search);
  const searchBox = useRef<HTMLInputElement>(null);
  // The period chosen on the timeline is in the address (`period`, its bucket's key), so a reload,
  // a link or Back keeps or undoes it as it does the filters. The snapshot of the timeline it was
  // chosen on is kept beside it, for the list to show what that bar counted.
  const period = params.get('period') ?? '';
  const [chosenOn, setChosenOn] = useState<{ period: string; snapshot: string } | null>(null);
  const [selection, setSelection] = useState<Map<string, FileRecord>>(new Map());
  // The editor and the viewer stay on the page once opened, and are closed as dialogs.
  const editor = useDialogTarget<FileRecord>();
  const viewer = useDialogTarget<FileRecord>();
  const [browsing, setBrowsing] = useState<FileRecord | null>(null);
  const [creatingArchive, setCreatingArchive] = useState(false);
  const [generation, setGeneration] = useState(0);
  const refresh = useCallback(() => setGeneration((g) => g + 1), []);

  const base = filterParams(filters);
  const baseKey = JSON.stringify(base);
  const range = period ? periodRange(period, groupBy) : null;
  const timeWindow: TimeWindow | null = range && { ...range, ...(chosenOn?.period === period ? { snapshot: chosenOn.snapshot } : {}) };
  const listParams = windowParams(base, timeWindow);
  const listKey = JSON.stringify(listParams);

  // The search box writes to the URL after a pause in typing. The box follows the URL when another
  // hand changed it (Back, Clear filters, a link), not when the box wrote it: the page showed those
  // words after the next keys on a busy machine, and putting them back dropped what was typed since.
  const searchWritten = useRef(filters.search);
  useEffect(() => {
    if (filters.search === searchWritten.current) return;
    searchWritten.current = filters.search;
    setSearchText(filters.search);
  }, [filters.search]);
  useEffect(() => {
    if (searchText === filters.search) return;
    const timer = window.setTimeout(() => {
      searchWritten.current = searchText;
      setParams({ search: searchText, page: null, period: null });
    }, 300);
    return () => window.clearTimeout(timer);
  }, [searchText, filters.search, setParams]);

  const requested = `${listKey}|${page}|${limit}`;
  const listing = useLoad(async () => {
    const response = await request('GET', `/api/files${query({ ...listParams, page: page > 1 ? page : undefined, limit })}`);
    return { ...(response.body as Omit<Listing, 'requested'>), requested };
  }, [listKey, page, limit, generation]);
  const timeline = useLoad(() => get<Timeline>(`/api/files/timeline${query({ ...base, groupBy, timezone })}`), [baseKey, groupBy, generation]);
  const types = useLoad(() => get<{ types: string[] }>('/api/files/types').then((d) => d.types), [generation]);
  const tags = useLoad(() => get<{ tags: Tag[] }>('/api/files/tags').then((d) => d.tags), []);
  const folders = useLoad(() => (can('folders.manage') ? get<{ folders: Folder[] }>('/api/folders').then((d) => d.folders) : Promise.resolve([] as Folder[])), []);
  // The folder the list is filtered by, when it has a public address (docs/web.md, "Files"): which of
  // the files in view its page shows is then worth saying here, not only in Organisation.
  const shownFolder = filters.folder && filters.folder !== 'unfiled' && can('folders.manage') ? filters.folder : null;
  const folderShare = useLoad(
    () =>
      shownFolder === null
        ? Promise.resolve(null)
        : get<{ share: FolderShare | null }>(`/api/folders/${encodeURIComponent(shownFolder)}/share`).then(
            (d) => d.share,
            // A folder deleted since the address was made is said by the folder filter.
            (error: unknown) => {
              if (error instanceof ApiError && error.status === 404) return null;
              throw error;
            },
          ),
    [shownFolder],
  );

  /**
   * A filter chosen is a step Back undoes, as a page turned is: each one was written over the last,
   * so Back left the Files page altogether. Typing (the search box, after its pause; a date as its
   * digits come) replaces the entry instead, or Back would go through every word and digit.
   */
  // A new filter set starts a new timeline (and snapshot): the period chosen on the old one goes.
  const setFilter = (changes: Record<string, string | null>, { typed = false } = {}) => setParams({ ...changes, page: null, period: null }, { push: !typed });
  const activeFilters = [filters.search, filters.types.length, filters.visibility.length, filters.folder, filters.tag, filters.from, filters.to].filter(Boolean).length;

  // Thumbnails still being made are fetched again until they arrive, while the grid shows them.
  const files = usePendingThumbnails(listing.data?.data ?? NO_FILES, view === 'grid' && previews);
  const pagination = listing.data?.pagination;

  const toggleSelected = (file: FileRecord) =>
    setSelection((current) => {
      const next = new Map(current);
      if (next.has(file.id)) next.delete(file.id);
      else next.set(file.id, file);
      return next;
    });
  // The selection keeps each file's record for the bulk bar (its links): a file renamed or changed
  // since it was ticked takes its record from the newest listing, or Copy links gave its old, dead URL.
  useEffect(() => {
    setSelection((current) => {
      let next: Map<string, FileRecord> | null = null;
      for (const file of files) {
        const kept = current.get(file.id);
        if (kept === undefined || kept === file) continue;
        next ??= new Map(current);
        next.set(file.id, file);
      }
      return next ?? current;
    });
  }, [files]);
  // While another page or filter loads, the files shown are the last answer's: "Select all on this
  // page" waits for the page it names, so it never selects the page being left.
  const showsRequested = !listing.loading && listing.data?.requested === requested;
  const allOnPageSelected = showsRequested && files.length > 0 && files.every((f) => selection.has(f.id));
  const selectPage = (select: boolean) =>
    setSelection((current) => {
      const next = new Map(current);
      for (const file of files) {
        if (select) next.set(file.id, file);
        else next.delete(file.id);
      }
      return next;
    });

  /**
   * Every file the filters (and the period chosen) match joins the selection, up to
   * SELECT_ALL_LIMIT, newest first: read 100 at a time below an upload-time ceiling taken at the
   * start, so a file uploaded meanwhile neither joins nor pushes another off its page.
   */
  const [selectingAll, setSelectingAll] = useState<number | null>(null);
  const [allMatchingOf, setAllMatchingOf] = useState<string | null>(null);
  const selectAllMatching = async () => {
    if (selectingAll !== null) return;
    const key = listKey;
    const walk = { ...listParams, sortBy: '', snapshot: listParams.snapshot ?? new Date().toISOString() };
    const found: FileRecord[] = [];
    setSelectingAll(0);
    try {
      for (let pageNumber = 1; found.length < SELECT_ALL_LIMIT; pageNumber++) {
        const answer = (await request('GET', `/api/files${query({ ...walk, page: pageNumber > 1 ? pageNumber : undefined, limit: 100 })}`)).body as { data: FileRecord[]; pagination: Pagination };
        found.push(...answer.data.slice(0, SELECT_ALL_LIMIT - found.length));
        setSelectingAll(found.length);
        if (answer.data.length < 100 || pageNumber * 100 >= answer.pagination.total) break;
      }
      setSelection((current) => {
        const next = new Map(current);
        for (const file of found) next.set(file.id, file);
        return next;
      });
      setAllMatchingOf(key);
    } catch (error) {
      toast(`Could not select the matching files: ${error instanceof Error ? error.message : 'failed'}`, 'error');
    } finally {
      setSelectingAll(null);
    }
  };
  const matching = pagination ? Math.min(pagination.total, SELECT_ALL_LIMIT) : 0;
  // Offered once the whole page is ticked and more files match, until they are all in the selection.
  const offerAllMatching = allOnPageSelected && pagination !== undefined && pagination.total > files.length && !(allMatchingOf === listKey && selection.size >= matching);

  // After a deletion, focus goes to the next file's card (or the previous one's) once the page is drawn again.
  const focusAfterLoad = useRef<string[] | null>(null);
  useEffect(() => {
    const wanted = focusAfterLoad.current;
    if (!wanted || listing.loading) return;
    focusAfterLoad.current = null;
    if (!wanted.some((key) => focusItem(key))) focusPageHeading();
  }, [listing.data, listing.loading]);

  const deleteFile = async (file: FileRecord) => {
    if (!(await confirm('Delete file', `Delete “${file.name}”? Its bytes, links and metadata are removed for good.`))) return;
    const position = files.findIndex((f) => f.id === file.id);
    const successors = [files[position + 1]?.id, files[position - 1]?.id].filter((id): id is string => Boolean(id));
    if (await run(() => deletedOrGone(file.id), `Deleted ${file.name}`)) {
      setSelection((current) => {
        const next = new Map(current);
        next.delete(file.id);
        return next;
      });
      focusAfterLoad.current = successors;
      refresh();
    }
  };

  // A page past the end (its last files deleted, a bookmark from a longer list) answers no files and
  // the real total: go to the last page there is, rather than show an empty page of a list that has files.
  const pastTheEnd = showsRequested && files.length === 0 && pagination !== undefined && pagination.total > 0 && page > pagination.pageCount;
  const lastPage = pagination?.pageCount ?? 1;
  useEffect(() => {
    if (pastTheEnd) setParams({ page: lastPage > 1 ? String(lastPage) : null });
  }, [pastTheEnd, lastPage, setParams]);

  const announce = useAnnounce();
  // A new page of the listing is announced once it has arrived.
  const announcedPage = useRef(page);
  useEffect(() => {
    if (!pagination || listing.loading || announcedPage.current === page) return;
    announcedPage.current = page;
    announce(`Page ${page} of ${Math.max(1, pagination.pageCount)}`);
  }, [page, pagination, listing.loading, announce]);
  const selected = selection.size;
  const hiddenSelected = useMemo(() => {
    const shown = new Set(files.map((f) => f.id));
    let hidden = 0;
    for (const id of selection.keys()) if (!shown.has(id)) hidden += 1;
    return hidden;
  }, [files, selection]);
  const announcedOnce = useRef(false);
  useEffect(() => {
    // Not on the first render: only a change of the selection is news.
    if (!announcedOnce.current) {
      announcedOnce.current = true;
      return;
    }
    announce(selected === 0 ? 'No files selected' : `${pluralize(selected, 'file')} selected`);
  }, [selected, announce]);

  /**
   * The selected files' records as they are now, asked for by ID (100 at a time; the listing on the
   * screen may be older than a change made in another tab). One deleted meanwhile leaves the
   * selection: its record from when it was ticked gave Copy links an old name's dead link, and a
   * deleted file stayed selected for good, failing every bulk action after.
   */
  const currentSelection = async (): Promise<FileRecord[]> => {
    const chosen = [...selection.keys()];
    const found = new Map<string, FileRecord>();
    for (let start = 0; start < chosen.length; start += 100) {
      const answer = await request('GET', `/api/files${query({ ids: chosen.slice(start, start + 100).join(','), limit: 100 })}`);
      for (const file of (answer.body as { data: FileRecord[] }).data) found.set(file.id, file);
    }
    setSelection((now) => {
      const next = new Map(now);
      for (const id of chosen) {
        const file = found.get(id);
        if (file === undefined) next.delete(id);
        else if (next.has(id)) next.set(id, file);
      }
      return next;
    });
    return chosen.flatMap((id) => found.get(id) ?? []);
  };
  const goneNote = (gone: number) => (gone > 0 ? `; ${pluralize(gone, 'selected file')} no longer ${gone === 1 ? 'exists' : 'exist'} and left the selection` : '');

  // A bulk action under way: its buttons are marked unusable (a second press started a second run
  // beside the first), the bar says how far it is, and leaving the page asks first.
  const [bulkProgress, setBulkProgress] = useState<{ label: string; done: number; total: number } | null>(null);
  const bulkRunning = useRef(false);
  const busy = bulkProgress !== null;
  useAskBeforeUnload(busy);

  /**
   * Applies one change to every selected file, BULK_REQUESTS_AT_ONCE requests at a time, and
   * reports the outcome: which files failed and why. Files that no longer exist leave the selection;
   * `deleting`, so do the files it was done to, and the ones that failed stay selected to try again.
   */
  const bulk = async (label: string, action: (file: FileRecord) => Promise<unknown>, options: { deleting?: boolean } = {}) => {
    if (bulkRunning.current) return;
    bulkRunning.current = true;
    try {
      const before = selection.size;
      setBulkProgress({ label, done: 0, total: before });
      const chosen = await currentSelection();
      const failures: Array<{ file: FileRecord; message: string }> = [];
      const leaving = new Set<string>();
      let done = 0;
      let gone = before - chosen.length;
      let next = 0;
      let finished = 0;
      const worker = async () => {
        while (next < chosen.length) {
          const file = chosen[next++]!;
          try {
            await action(file);
            done += 1;
            if (options.deleting) leaving.add(file.id);
          } catch (error) {
            if (error instanceof ApiError && error.status === 404) {
              gone += 1;
              leaving.add(file.id);
            } else failures.push({ file, message: error instanceof Error ? error.message : 'error' });
          }
          finished += 1;
          setBulkProgress({ label, done: finished, total: chosen.length });
        }
      };
      await Promise.all(Array.from({ length: Math.min(BULK_REQUESTS_AT_ONCE, chosen.length) }, worker));
      if (leaving.size > 0) {
        // Every file left the selection, and the bar goes with it: the focus goes to the heading, as after Clear selection.
        if (chosen.every((file) => leaving.has(file.id))) {
          const bar = barRef.current;
          headingAfterBar.current = bar !== null && (bar.contains(document.activeElement) || document.activeElement === document.body);
        }
        setSelection((now) => {
          const next = new Map(now);
          for (const id of leaving) next.delete(id);
          return next;
        });
      }
      // A file deleted meanwhile (another tab) is deleted as asked: counted as done, not as gone.
      if (options.deleting) [done, gone] = [done + gone, 0];
      if (failures.length === 0) toast(`${label}: ${pluralize(done, 'file')}${goneNote(gone)}`);
      else {
        const named = failures.slice(0, 3).map((f) => `${f.file.name} (${f.message})`).join(', ');
        toast(`${label}: ${failures.length} of ${chosen.length} failed, still selected: ${named}${failures.length > 3 ? ` and ${failures.length - 3} more` : ''}${goneNote(gone)}`, 'error');
      }
    } catch (error) {
      toast(`${label}: ${error instanceof Error ? error.message : 'failed'}`, 'error');
    } finally {
      bulkRunning.current = false;
      setBulkProgress(null);
      refresh();
    }
  };

  // The bar goes when the selection is emptied (Delete, Clear selection): focus on one of its
  // buttons would fall to the page's body, so it goes to the page's heading once the bar is gone.
  const barRef = useRef<HTMLDivElement>(null);
  const headingAfterBar = useRef(false);
  const clearSelection = () => {
    const bar = barRef.current;
    headingAfterBar.current = bar !== null && (bar.contains(document.activeElement) || document.activeElement === document.body);
    setSelection(new Map());
  };
  useEffect(() => {
    if (selection.size > 0 || !headingAfterBar.current) return;
    headingAfterBar.current = false;
    focusPageHeading();
  }, [selection]);

  const bulkDelete = async () => {
    if (bulkRunning.current) return;
    if (!(await confirm('Delete files', `Delete ${pluralize(selection.size, 'selected file')}? This cannot be undone.`, `Delete ${selection.size}`))) return;
    await bulk('Deleted', (file) => deletedOrGone(file.id), { deleting: true });
  };

  const [moveTarget, setMoveTarget] = useState('');
  const [tagTarget, setTagTarget] = useState('');
  /**
   * Adds a tag to, or takes it from, every selected file. A file's tags are set as a whole (PATCH
   * tagIds), so each file's own are read first (currentSelection, in bulk) and kept: only the one tag
   * changes. A file that already is as asked is left alone.
   */
  const bulkTag = (tagId: string, add: boolean) => {
    const name = tags.data?.find((tag) => tag.id === tagId)?.name ?? 'the tag';
    void bulk(add ? `Tagged ${name}` : `Untagged ${name}`, async (file) => {
      const has = file.tags.some((tag) => tag.id === tagId);
      if (has === add) return;
      const tagIds = add ? [...file.tags.map((tag) => tag.id), tagId] : file.tags.filter((tag) => tag.id !== tagId).map((tag) => tag.id);
      await patch(`/api/files/${encodeURIComponent(file.id)}`, { tagIds });
    });
    setTagTarget('');
  };

  return (
    <section className="files-page">
      <PageHeader title="Files">
        {can('files.upload') && (
          <Link to="/app/upload" className="button primary">
            Upload
          </Link>
        )}
      </PageHeader>

      <div className="toolbar" role="search">
        <label className="grow">
          <span className="visually-hidden">Search files</span>
          <input type="search" ref={searchBox} placeholder="Search names and text…" value={searchText} onChange={(e) => setSearchText(e.target.value)} />
        </label>
        <label>
          <span className="visually-hidden">Sort by</span>
          <select value={filters.sortBy} onChange={(e) => setFilter({ sortBy: e.target.value === 'newest' ? null : e.target.value })} aria-label="Sort by">
            {sortOptions.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <div className="segmented" role="group" aria-label="View">
          <button type="button" aria-pressed={view === 'grid'} onClick={() => setParams({ view: null })}>
            Grid
          </button>
          <button type="button" aria-pressed={view === 'list'} onClick={() => setParams({ view: 'list' })}>
            List
          </button>
        </div>
        <label className="checkbox">
          <input
            type="checkbox"
            checked={previews}
            onChange={(e) => {
              setPreviews(e.target.checked);
              localStorage.setItem('hoard.previews', e.target.checked ? 'on' : 'off');
            }}
          />
          Image previews
        </label>
      </div>

      <div className="filters" aria-label="Filters" role="group">
        <MultiSelect
          label="Type"
          options={(types.data ?? []).map((t) => [t, t] as const)}
          selected={filters.types}
          onChange={(values) => setFilter({ types: values.join(',') })}
          empty="No files yet"
        />
        <MultiSelect label="Visibility" options={visibilityOptions} selected={filters.visibility} onChange={(values) => setFilter({ visibility: values.join(',') })} />
        <label>
          Folder
          <select value={filters.folder} onChange={(e) => setFilter({ folder: e.target.value })}>
            <option value="">Any folder</option>
            <option value="unfiled">Unfiled</option>
            <FolderOptions folders={folders.data ?? []} />
            {/* A folder deleted since the address was made still filters: said so, not shown as "Any folder". */}
            {filters.folder && filters.folder !== 'unfiled' && folders.data && !folders.data.some((f) => f.id === filters.folder) && <option value={filters.folder}>A folder no longer there</option>}
          </select>
        </label>
        <label>
          Tag
          <select value={filters.tag} onChange={(e) => setFilter({ tag: e.target.value })}>
            <option value="">Any tag</option>
            <option value="untagged">Untagged</option>
            {(tags.data ?? []).map((tag) => (
              <option key={tag.id} value={tag.id}>
                {tag.name}
              </option>
            ))}
            {filters.tag && filters.tag !== 'untagged' && tags.data && !tags.data.some((t) => t.id === filters.tag) && <option value={filters.tag}>A tag no longer there</option>}
          </select>
        </label>
        <label>
          From
          <input type="date" value={filters.from} max={filters.to || undefined} onChange={(e) => setFilter({ from: e.target.value }, { typed: true })} />
        </label>
        <label>
          To
          <input type="date" value={filters.to} min={filters.from || undefined} onChange={(e) => setFilter({ to: e.target.value }, { typed: true })} />
        </label>
        {activeFilters > 0 && (
          <button
            type="button"
            className="link-button"
            onClick={() => {
              setSearchText('');
              setParams({ search: null, types: null, visibility: null, folder: null, tag: null, from: null, to: null, page: null, period: null }, { push: true });
              // The button goes with the filters: the focus goes to the search box, not the page's body.
              searchBox.current?.focus();
            }}
          >
            Clear filters
          </button>
        )}
      </div>

      {folderShare.data && (
        <p className="folder-share-note" data-testid="folder-share-note">
          <Badge kind="ok">Shared</Badge>
          <span>
            The public files of {folders.data?.find((f) => f.id === shownFolder)?.name ?? 'this folder'}
            {folderShare.data.subfolders ? ' and its subfolders' : ''} without a password are listed at{' '}
            <a href={folderShare.data.url} target="_blank" rel="noopener noreferrer">
              {folderShare.data.url}
            </a>
            {folderShare.data.expiresAt ? ` until ${formatDateTime(folderShare.data.expiresAt)}` : ''}
          </span>
          <CopyButton text={folderShare.data.url} label="Copy address" className="small" />
        </p>
      )}

      <TimelineBar
        timeline={timeline.data}
        // One failure of the filters (an unknown tag in the address) is said once, by the list.
        error={listing.error ? null : timeline.error}
        groupBy={groupBy}
        // A period of another length goes with the old grouping: a year chosen, then weeks, left no
        // week pressed while the list still showed only that year.
        onGroupBy={(value) => setParams({ groupBy: value === 'month' ? null : value, period: null })}
        selected={range ? period : null}
        onSelect={(bucket) => {
          if (bucket && timeline.data) setChosenOn({ period: bucket.key, snapshot: timeline.data.snapshot });
          setParams({ period: bucket?.key ?? null, page: null }, { push: true });
        }}
      />

      {selection.size > 0 && (
        <div className="bulk-bar" role="region" aria-label="Selected files" ref={barRef}>
          <strong>{pluralize(selection.size, 'file')} selected</strong>
          {/* The selection lasts across pages and filters: the bar's actions reach files not shown too, and says so. */}
          {hiddenSelected > 0 && <span className="muted small">({hiddenSelected} not shown here)</span>}
          {bulkProgress && (
            // Shown, not announced: a screen reader would be read every file's step; the outcome is said once, at the end.
            <span className="small">
              {bulkProgress.label === 'Deleted' ? 'Deleting' : 'Working'}: {bulkProgress.done} of {bulkProgress.total}…
            </span>
          )}
          <button
            type="button"
            aria-disabled={busy}
            onClick={async () => {
              if (busy) return;
              const before = selection.size;
              let current: FileRecord[];
              try {
                current = await currentSelection();
              } catch (error) {
                toast(`Could not copy the links: ${error instanceof Error ? error.message : 'failed'}`, 'error');
                return;
              }
              const ok = await copyText(current.map(shareUrl).join('\n'));
              toast(ok ? `Copied ${pluralize(current.length, 'link')}${goneNote(before - current.length)}` : 'Could not copy the links', ok ? 'info' : 'error');
            }}
          >
            Copy links
          </button>
          {can('files.update') && can('files.share') && (
            <>
              <button type="button" aria-disabled={busy} onClick={() => void bulk('Made public', (file) => patch(`/api/files/${encodeURIComponent(file.id)}`, { visibility: 'PUBLIC' }))}>
                Make public
              </button>
              <button type="button" aria-disabled={busy} onClick={() => void bulk('Made private', (file) => patch(`/api/files/${encodeURIComponent(file.id)}`, { visibility: 'PRIVATE' }))}>
                Make private
              </button>
            </>
          )}
          {can('files.update') && can('folders.manage') && (
            <span className="inline-form">
              <label>
                <span className="visually-hidden">Move to folder</span>
                <select value={moveTarget} onChange={(e) => setMoveTarget(e.target.value)} aria-label="Move to folder">
                  <option value="">Move to…</option>
                  <option value="unfiled">Unfiled</option>
                  <FolderOptions folders={folders.data ?? []} />
                </select>
              </label>
              {/* Marked, not disabled, when no folder is chosen: emptied after a move, a disabled
                  button would drop the focus it had to the page's body. */}
              <button
                type="button"
                aria-disabled={!moveTarget || busy}
                onClick={() => {
                  if (!moveTarget || busy) return;
                  const folderId = moveTarget === 'unfiled' ? null : moveTarget;
                  void bulk('Moved', (file) => patch(`/api/files/${encodeURIComponent(file.id)}`, { folderId }));
                  setMoveTarget('');
                }}
              >
                Move
              </button>
            </span>
          )}
          {can('files.update') && can('tags.manage') && (tags.data?.length ?? 0) > 0 && (
            <span className="inline-form">
              <label>
                <span className="visually-hidden">Tag to add or remove</span>
                <select value={tagTarget} onChange={(e) => setTagTarget(e.target.value)} aria-label="Tag to add or remove">
                  <option value="">Tag…</option>
                  {tags.data!.map((tag) => (
                    <option key={tag.id} value={tag.id}>
                      {tag.name}
                    </option>
                  ))}
                </select>
              </label>
              {/* Marked, not disabled, without a tag chosen, as Move is. */}
              <button type="button" aria-disabled={!tagTarget || busy} onClick={() => tagTarget && !busy && bulkTag(tagTarget, true)}>
                Add tag
              </button>
              <button type="button" aria-disabled={!tagTarget || busy} onClick={() => tagTarget && !busy && bulkTag(tagTarget, false)}>
                Remove tag
              </button>
            </span>
          )}
          {can('files.upload') && (
            <>
              <button type="button" onClick={() => !busy && setCreatingArchive(true)} aria-disabled={busy} disabled={selection.size > ARCHIVE_FILE_LIMIT} aria-describedby={selection.size > ARCHIVE_FILE_LIMIT ? 'archive-limit' : undefined}>
                Create archive
              </button>
              {selection.size > ARCHIVE_FILE_LIMIT && (
                <span id="archive-limit" className="small">
                  An archive holds at most {ARCHIVE_FILE_LIMIT} files: select fewer to create one.
                </span>
              )}
            </>
          )}
          {can('files.delete') && (
            <button type="button" className="danger" aria-disabled={busy} onClick={() => void bulkDelete()}>
              Delete
            </button>
          )}
          <button type="button" className="link-button" aria-disabled={busy} onClick={() => !busy && clearSelection()}>
            Clear selection
          </button>
        </div>
      )}

      <div className="listing-head">
        {/* The page's box and the offer of every match stay together, the count apart on the right. */}
        <span className="listing-select">
          <label className="checkbox">
            <input type="checkbox" checked={allOnPageSelected} disabled={files.length === 0 || !showsRequested} onChange={(e) => selectPage(e.target.checked)} />
            Select all on this page
          </label>
          {offerAllMatching && (
            <button type="button" className="link-button" aria-disabled={selectingAll !== null || busy} onClick={() => !busy && void selectAllMatching()}>
              {selectingAll !== null
                ? `Selecting… ${selectingAll} of ${matching}`
                : pagination.total <= SELECT_ALL_LIMIT
                  ? `Select all ${pagination.total} matching`
                  : `Select the newest ${SELECT_ALL_LIMIT.toLocaleString('en')} of ${pagination.total.toLocaleString('en')} matching`}
            </button>
          )}
        </span>
        <span className="muted" aria-live="polite">
          {pagination ? `${pluralize(pagination.total, 'file')}${timeWindow ? ' in this period' : ''}` : ''}
        </span>
      </div>

      <ErrorNote error={listing.error} />
      {/* The first page's room is held while it loads, so nothing below it moves into view and out again. */}
      {listing.loading && !listing.data && (
        <div className="listing-placeholder">
          <Loading />
        </div>
      )}
      {/* Said only when the answer has no files at all: a page past the end has none, but the list does. */}
      {listing.data && listing.data.pagination.total === 0 && (
        <Empty>
          {activeFilters > 0 || timeWindow ? 'No files match these filters.' : 'No files yet.'}{' '}
          {activeFilters === 0 && can('files.upload') && <Link to="/app/upload">Upload your first file</Link>}
        </Empty>
      )}
      {files.length > 0 &&
        (view === 'grid' ? (
          <FileGrid files={files} folders={folders.data ?? []} selection={selection} previews={previews} onToggle={toggleSelected} onOpen={viewer.show} onEdit={editor.show} onDelete={deleteFile} onBrowse={setBrowsing} />
        ) : (
          <FileList files={files} folders={folders.data ?? []} selection={selection} onToggle={toggleSelected} onOpen={viewer.show} onEdit={editor.show} onDelete={deleteFile} onBrowse={setBrowsing} />
        ))}

      {pagination && pagination.total > 0 && (
        <nav className="pagination" aria-label="Pages">
          {/* aria-disabled, not disabled: a button disabled under the keyboard's focus (Next onto the
              last page) dropped the focus to the page's body. */}
          <PageButton off={page <= 1} go={() => setParams({ page: null }, { push: true })}>
            First
          </PageButton>
          <PageButton off={page <= 1} go={() => setParams({ page: page - 1 > 1 ? String(page - 1) : null }, { push: true })}>
            Previous
          </PageButton>
          <span>
            Page {page} of {Math.max(1, pagination.pageCount)}
          </span>
          {pagination.pageCount > 2 && <PageJump key={page} page={page} pageCount={pagination.pageCount} go={(to) => setParams({ page: to > 1 ? String(to) : null }, { push: true })} />}
          <PageButton off={page >= pagination.pageCount} go={() => setParams({ page: String(page + 1) }, { push: true })}>
            Next
          </PageButton>
          <PageButton off={page >= pagination.pageCount} go={() => setParams({ page: String(pagination.pageCount) }, { push: true })}>
            Last
          </PageButton>
          <label>
            Per page
            <select value={limit} onChange={(e) => setParams({ limit: e.target.value === '24' ? null : e.target.value, page: null })}>
              {pageSizes.map((size) => (
                <option key={size} value={size}>
                  {size}
                </option>
              ))}
            </select>
          </label>
        </nav>
      )}

      {/* The viewer comes first: when its Edit opens the editor, the viewer closes (giving focus back
          to the card it came from) before the editor remembers where focus is. */}
      {viewer.target && (
        <Gallery
          key={viewer.key}
          start={viewer.target}
          open={viewer.open}
          listParams={listParams}
          onClose={viewer.close}
          onEdit={(file) => {
            viewer.close();
            editor.show(file);
          }}
        />
      )}
      {editor.target && (
        <FileEditor
          key={editor.key}
          file={editor.target}
          open={editor.open}
          folders={folders.data ?? []}
          tags={tags.data ?? []}
          onClose={editor.close}
          onSaved={() => {
            editor.close();
            refresh();
          }}
        />
      )}
      {browsing && <ArchiveContentsDialog file={browsing} folders={folders.data ?? []} onClose={() => setBrowsing(null)} onExtracted={refresh} />}
      {creatingArchive && <CreateArchiveDialog files={[...selection.values()]} folders={folders.data ?? []} onClose={() => setCreatingArchive(false)} onCreated={refresh} />}
      <p className="muted small">Dates and the timeline use your browser’s time zone ({timezone}).</p>
    </section>
  );
}

/**
 * A dropdown of checkboxes (types, visibility): values are ORed. Named by its label and then its
 * current choice ("Type, Any type": the words it shows are part of its name); closes on Escape
 * (focus back on its button) and on a click or focus outside it; its panel opens towards whichever
 * side has room, inside the window.
 */
/**
 * A page by its number, for a library of thousands of pages that First, Previous, Next and Last
 * would take thousands of presses to cross. A number past the end goes to the last page.
 */
function PageJump({ page, pageCount, go }: { page: number; pageCount: number; go: (page: number) => void }) {
  const [value, setValue] = useState(String(page));
  return (
    // Not validated by the browser: its range would refuse 999 with a bubble, where the last page is meant.
    <form
      className="page-jump"
      noValidate
      aria-label="Go to a page"
      onSubmit={(event) => {
        event.preventDefault();
        const wanted = Math.trunc(Number(value));
        if (!Number.isFinite(wanted) || value.trim() === '') return;
        const to = Math.min(Math.max(wanted, 1), pageCount);
        setValue(String(to));
        if (to !== page) go(to);
      }}
    >
      <label>
        Go to page
        <input type="number" inputMode="numeric" min={1} max={pageCount} step={1} value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">Go</button>
    </form>
  );
}

function PageButton({ off, go, children }: { off: boolean; go: () => void; children: ReactNode }) {
  return (
    <button type="button" aria-disabled={off || undefined} onClick={() => !off && go()}>
      {children}
    </button>
  );
}

function MultiSelect({ label, options, selected, onChange, empty }: { label: string; options: ReadonlyArray<readonly [string, string]>; selected: string[]; onChange: (values: string[]) => void; empty?: string }) {
  const summary = selected.length === 0 ? `Any ${label.toLowerCase()}` : selected.length === 1 ? (options.find(([v]) => v === selected[0])?.[1] ?? selected[0]) : `${selected.length} selected`;
  const toggle = (value: string, on: boolean) => onChange(on ? [...selected, value] : selected.filter((v) => v !== value));
  const values = useMemo(() => {
    // Keep a selected value visible even when it is no longer listed (e.g. a type with no files left).
    const known = new Set(options.map(([v]) => v));
    return [...options, ...selected.filter((v) => !known.has(v)).map((v) => [v, v] as const)];
  }, [options, selected]);
  const id = useId();
  const details = useRef<HTMLDetailsElement>(null);
  const panel = useRef<HTMLFieldSetElement>(null);
  const [open, setOpen] = useState(false);
  const [alignEnd, setAlignEnd] = useState(false);
  const close = (returnFocus: boolean) => {
    if (details.current) details.current.open = false;
    if (returnFocus) details.current?.querySelector('summary')?.focus();
  };
  useEffect(() => {
    if (!open) return;
    // Opened: the panel goes right-aligned when it would pass the window's right edge.
    const box = panel.current?.getBoundingClientRect();
    setAlignEnd(Boolean(box && box.right > document.documentElement.clientWidth - 8));
    const outside = (event: Event) => {
      if (!details.current?.contains(event.target as Node)) close(false);
    };
    document.addEventListener('pointerdown', outside);
    document.addEventListener('focusin', outside);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('focusin', outside);
    };
  }, [open]);
  return (
    <div className="field">
      <span className="field-label" id={`${id}-label`}>
        {label}
      </span>
      <details
        ref={details}
        className="dropdown"
        onToggle={(event) => {
          const isOpen = (event.currentTarget as HTMLDetailsElement).open;
          if (!isOpen) setAlignEnd(false);
          setOpen(isOpen);
        }}
        onKeyDown={(event) => {
          if (event.key === 'Escape' && details.current?.open) {
            event.preventDefault();
            event.stopPropagation();
            close(true);
          }
        }}
      >
        <summary aria-labelledby={`${id}-label ${id}-value`}>
          <span id={`${id}-value`}>{summary}</span>
          <span className="dropdown-caret" aria-hidden="true">
            ▾
          </span>
        </summary>
        {/* Focusable, so that a press on an option's word focuses the panel, not the page's main
            region: that focus would count as leaving the dropdown and close it under the press. */}
        <fieldset ref={panel} tabIndex={-1} className={alignEnd ? 'dropdown-panel align-end' : 'dropdown-panel'}>
          <legend className="visually-hidden">{label}</legend>
          {values.length === 0 && <p className="muted">{empty ?? 'Nothing to choose'}</p>}
          {values.map(([value, text]) => (
            <label key={value} className="checkbox">
              <input type="checkbox" checked={selected.includes(value)} onChange={(e) => toggle(value, e.target.checked)} />
              {text}
            </label>
          ))}
        </fieldset>
      </details>
    </div>
  );
}
