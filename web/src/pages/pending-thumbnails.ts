import { useEffect, useMemo, useRef, useState } from 'react';
import { query, request } from '../api.ts';
import type { FileRecord } from '@api';

/** How often files whose thumbnail is on its way are asked for again. */
const POLL_MS = 3000;
/**
 * How long after a listing loaded its pending thumbnails are still waited for. A thumbnail usually
 * takes seconds; one still missing after this is stuck behind a long queue or a stopped worker, and a
 * tab left open must not ask the server every few seconds for ever. Reloading the listing starts over.
 */
const GIVE_UP_MS = 120_000;
/** The most IDs one `ids` filter takes (spec, GET /api/files). */
const MAX_IDS = 100;

interface Updates {
  /** The listing these updates belong to: a new listing (reload, filter, page) drops them. */
  source: FileRecord[];
  byId: Map<string, FileRecord>;
}

/**
 * The listing's files with the thumbnails made since it was loaded. While some of them are still
 * `pending`, only those files are fetched again (`GET /api/files?ids=…`), every few seconds, until
 * none is pending or two minutes have passed. Pass the listing's own array (stable between renders);
 * `watch` is false where no thumbnail is shown (the list view, previews off), which asks for nothing.
 */
export function usePendingThumbnails(files: FileRecord[], watch: boolean): FileRecord[] {
  const [updates, setUpdates] = useState<Updates | null>(null);
  const [round, setRound] = useState(0);
  const started = useRef<{ source: FileRecord[]; at: number } | null>(null);

  const current = useMemo(() => (updates && updates.source === files ? files.map((file) => updates.byId.get(file.id) ?? file) : files), [files, updates]);
  const pendingKey = current
    .filter((file) => file.thumbnailStatus === 'pending')
    .slice(0, MAX_IDS)
    .map((file) => file.id)
    .join(',');

  useEffect(() => {
    // The two minutes count from when the grid started showing this listing.
    if (!watch) {
      started.current = null;
      return;
    }
    if (started.current?.source !== files) started.current = { source: files, at: Date.now() };
    if (!pendingKey || Date.now() - started.current.at > GIVE_UP_MS) return;
    const abort = new AbortController();
    const timer = window.setTimeout(async () => {
      try {
        // A hidden tab skips its turn: nobody is looking at the grid.
        if (document.visibilityState === 'hidden') return;
        const ids = pendingKey.split(',');
        const response = await request('GET', `/api/files${query({ ids: pendingKey, limit: ids.length })}`, { signal: abort.signal });
        const fresh = (response.body as { data: FileRecord[] }).data;
        if (abort.signal.aborted || fresh.length === 0) return;
        setUpdates((previous) => {
          const byId = new Map(previous && previous.source === files ? previous.byId : []);
          for (const file of fresh) byId.set(file.id, file);
          return { source: files, byId };
        });
      } catch {
        // A failed refresh (offline, a restart) waits for the next round.
      } finally {
        if (!abort.signal.aborted) setRound((n) => n + 1);
      }
    }, POLL_MS);
    return () => {
      window.clearTimeout(timer);
      abort.abort();
    };
  }, [files, pendingKey, round, watch]);

  return current;
}
