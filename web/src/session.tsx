import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ApiError, get, post, UNAUTHORIZED_EVENT } from './api.ts';
import type { Me, Permission, SetupStatus } from '@api';

interface Session {
  /** undefined while loading; null when signed out. */
  me: Me | null | undefined;
  setup: SetupStatus | null;
  /** Whether the account holds a permission (`administrator` holds all of them). */
  can(permission: Permission): boolean;
  /** Reads the account again; answers it, or null when signed out. */
  refresh(): Promise<Me | null>;
  signedIn(me: Me): void;
  signOut(): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

export function hasPermission(me: Me | null | undefined, permission: Permission): boolean {
  if (!me) return false;
  return me.permissions.includes('administrator') || me.permissions.includes(permission);
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [setup, setSetup] = useState<SetupStatus | null>(null);

  const refresh = useCallback(async (): Promise<Me | null> => {
    try {
      const data = await get<{ user: Me }>('/api/auth/me');
      setMe(data.user);
      return data.user;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      setMe(null);
      setSetup(await get<SetupStatus>('/api/setup').catch(() => null));
      return null;
    }
  }, []);

  useEffect(() => {
    refresh().catch(() => setMe(null));
    // Permissions can change between requests (an administrator edits a role): re-read them when the
    // tab comes back into view.
    const onVisible = () => {
      if (document.visibilityState === 'visible') refresh().catch(() => {});
    };
    const onUnauthorized = () => {
      setMe(null);
      get<SetupStatus>('/api/setup').then(setSetup, () => {});
    };
    document.addEventListener('visibilitychange', onVisible);
    window.addEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
    return () => {
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener(UNAUTHORIZED_EVENT, onUnauthorized);
    };
  }, [refresh]);

  const signOut = useCallback(async () => {
    await post('/api/auth/logout').catch(() => {});
    setMe(null);
    setSetup(await get<SetupStatus>('/api/setup').catch(() => null));
  }, []);

  const value = useMemo<Session>(
    () => ({ me, setup, can: (p) => hasPermission(me, p), refresh, signedIn: setMe, signOut }),
    [me, setup, refresh, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in account (pages under the shell only render when there is one). */
export function useMe(): Me {
  const { me } = useSession();
  if (!me) throw new Error('useMe without a session');
  return me;
}
