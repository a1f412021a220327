import { createContext, useCallback, useContext, useEffect, useMemo, useState, type AnchorHTMLAttributes, type MouseEvent, type ReactNode } from 'react';

/**
 * A small History-API router: the app's pages live under /app/ (docs/web.md), and page state that
 * is worth sharing or going back to (file filters, the open tab) is kept in the query string.
 */
interface Location {
  path: string;
  search: URLSearchParams;
}

interface Router extends Location {
  navigate(to: string, options?: { replace?: boolean }): void;
}

const RouterContext = createContext<Router | null>(null);

function current(): Location {
  return { path: window.location.pathname, search: new URLSearchParams(window.location.search) };
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const onPop = () => setLocation(current());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const navigate = useCallback((to: string, options: { replace?: boolean } = {}) => {
    const target = new URL(to, window.location.href);
    const same = target.pathname === window.location.pathname && target.search === window.location.search;
    if (options.replace || same) window.history.replaceState(null, '', target);
    else window.history.pushState(null, '', target);
    if (!same && !options.replace) window.scrollTo(0, 0);
    setLocation(current());
  }, []);
  const value = useMemo(() => ({ ...location, navigate }), [location, navigate]);
  return <RouterContext.Provider value={value}>{children}</RouterContext.Provider>;
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
