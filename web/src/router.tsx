import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

/**
 * A small History-API router: the app's pages live under /app/ (docs/web.md), and page state that
 * is worth sharing or going back to (file filters, the open tab) is kept in the query string.
 */
interface Location {
  path: string;
  search: URLSearchParams;
}

/** Asked before the current page is left; resolves to whether to leave. */
type LeaveGuard = () => Promise<boolean>;

interface Router extends Location {
  navigate(to: string, options?: { replace?: boolean }): void;
  /** Sets (or with null, removes) the question asked before leaving the current page. */
  setLeaveGuard(guard: LeaveGuard | null): void;
}

const RouterContext = createContext<Router | null>(null);

function current(): Location {
  return { path: window.location.pathname, search: new URLSearchParams(window.location.search) };
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(current);
  const leaveGuard = useRef<LeaveGuard | null>(null);
  // The address the app shows, to put back when Back is pressed on a page that may not be left yet.
  const shown = useRef(window.location.href);
  const show = useCallback(() => {
    shown.current = window.location.href;
    setLocation(current());
  }, []);
  useEffect(() => {
    let leaving = false;
    const onPop = () => {
      const guard = leaveGuard.current;
      if (leaving || !guard || window.location.pathname === new URL(shown.current).pathname) {
        leaving = false;
        show();
        return;
      }
      // The browser has already moved: go back to the page, and move on again only if leaving is confirmed.
      window.history.pushState(null, '', shown.current);
      void guard().then((ok) => {
        if (!ok) return;
        leaving = true;
        window.history.back();
      });
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [show]);
  const navigate = useCallback(
    (to: string, options: { replace?: boolean } = {}) => {
      const target = new URL(to, window.location.href);
      const go = () => {
        const same = target.pathname === window.location.pathname && target.search === window.location.search;
        if (options.replace || same) window.history.replaceState(null, '', target);
        else window.history.pushState(null, '', target);
        if (!same && !options.replace) window.scrollTo(0, 0);
        show();
      };
      // Only going to another page is asked about; a redirect (replace) is the app's own doing, not the user's.
      const guard = leaveGuard.current;
      if (!guard || options.replace || target.pathname === window.location.pathname) return go();
      void guard().then((ok) => {
        if (ok) go();
      });
    },
    [show],
  );
  const setLeaveGuard = useCallback((guard: LeaveGuard | null) => {
    leaveGuard.current = guard;
  }, []);
  const value = useMemo(() => ({ ...location, navigate, setLeaveGuard }), [location, navigate, setLeaveGuard]);
  return <RouterContext.Provider value={value}>{children}</RouterContext.Provider>;
}

/**
 * While `when` holds, leaving the page through the app (a link, Back) first asks `ask`, and stays when
 * it resolves to false. Closing or reloading the tab is the browser's to ask (beforeunload).
 */
export function useLeaveGuard(when: boolean, ask: LeaveGuard): void {
  const { setLeaveGuard } = useRouter();
  const latest = useRef(ask);
  useEffect(() => {
    latest.current = ask;
  });
  useEffect(() => {
    if (!when) return;
    setLeaveGuard(() => latest.current());
    return () => setLeaveGuard(null);
  }, [when, setLeaveGuard]);
}

export function useRouter(): Router {
  const router = useContext(RouterContext);
  if (!router) throw new Error('useRouter outside RouterProvider');
  return router;
}

/** Updates some query parameters of the current page (empty values are removed). */
export function useQueryState(): [URLSearchParams, (changes: Record<string, string | null | undefined>, options?: { push?: boolean }) => void] {
  const { search, path, navigate } = useRouter();
  const update = useCallback(
    (changes: Record<string, string | null | undefined>, options: { push?: boolean } = {}) => {
      const next = new URLSearchParams(window.location.search);
      for (const [key, value] of Object.entries(changes)) {
        if (value === null || value === undefined || value === '') next.delete(key);
        else next.set(key, value);
      }
      const text = next.toString();
      navigate(`${path}${text ? `?${text}` : ''}`, { replace: !options.push });
    },
    [navigate, path],
  );
  return [search, update];
}

export function Link({ to, children, ...rest }: { to: string; children: ReactNode } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  const { navigate } = useRouter();
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={to} {...rest} onClick={onClick}>
      {children}
    </a>
  );
}

/** While `when` holds, closing or reloading the tab is asked about first (the browser's own question). */
export function useAskBeforeUnload(when: boolean): void {
  useEffect(() => {
    if (!when) return;
    const ask = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [when]);
}
