import { useEffect, useState } from 'react';
import { get } from './api.ts';

/**
 * GET `path` now, and again every `intervalMs` while `again(answer)` says what it waits for is still
 * on its way (for at most `forMs`). A new `path` or `key` starts over; leaving the page stops it.
 * `again` is the one of the first render: a condition on the answer, not on the page's state.
 */
export function usePolled<T>(path: string, again: (answer: T) => boolean, intervalMs: number, options: { forMs?: number; key?: unknown } = {}): { data: T | null; error: unknown } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const { forMs = Number.POSITIVE_INFINITY, key } = options;
  useEffect(() => {
    let cancelled = false;
    let timer: number | undefined;
    const until = Date.now() + forMs;
    const load = async () => {
      try {
        const answer = await get<T>(path);
        if (cancelled) return;
        setData(answer);
        setError(null);
        if (again(answer) && Date.now() < until) timer = window.setTimeout(load, intervalMs);
      } catch (caught) {
        if (!cancelled) setError(caught);
      }
    };
    void load();
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [path, intervalMs, forMs, key]);
  return { data, error };
}
