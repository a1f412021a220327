import { useEffect, useState } from 'react';
import { get } from '../../api.ts';

/**
 * A list read newest first a page at a time, each older page asked for with the last one's
 * `nextBefore` and added below (the audit records, the administration log). `path` gives the
 * address of a page; the first page is asked for again whenever `deps` change.
 */
export function useOlderPages<Page extends { nextBefore: string | null }, Item>(path: (before: string | null) => string, itemsOf: (page: Page) => Item[], deps: unknown[]) {
  const [items, setItems] = useState<Item[]>([]);
  const [nextBefore, setNextBefore] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);

  const load = async (before: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const page = await get<Page>(path(before));
      setItems((shown) => (before ? [...shown, ...itemsOf(page)] : itemsOf(page)));
      setNextBefore(page.nextBefore);
    } catch (caught) {
      setError(caught);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    void load(null);
  }, deps);
  return { items, error, loading, nextBefore, loadOlder: () => nextBefore && void load(nextBefore) };
}

/** The button that adds the next older page, while there is one. */
export function ShowOlder({ pages }: { pages: { nextBefore: string | null; loading: boolean; loadOlder: () => unknown } }) {
  if (!pages.nextBefore) return null;
  return (
    <div>
      <button type="button" onClick={() => pages.loadOlder()} disabled={pages.loading}>
        {pages.loading ? 'Loading…' : 'Show older'}
      </button>
    </div>
  );
}
