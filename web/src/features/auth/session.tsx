import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { setToken, setUnauthorizedHandler } from '../../api/client';
import { useMe } from './hooks';

type Me = NonNullable<Awaited<ReturnType<typeof useMe>>['data']>;
const STORAGE_KEY = 'uplift.token';

/** What the signed-in account may do, mirroring the spec's role table so the UI offers only allowed actions. */
export interface Permissions {
  /** Create, edit, start and delete experiments and flags (ADMIN, DEVELOPER). */
  canChange: boolean;
  /** Segments: DEVELOPER and up. */
  canChangeSegments: boolean;
  isAdmin: boolean;
  isSuperuser: boolean;
}

export function permissionsFor(me: Pick<Me, 'role' | 'is_superuser'> | undefined): Permissions {
  const su = Boolean(me?.is_superuser);
  const role = me?.role ?? null;
  const dev = su || role === 'ADMIN' || role === 'DEVELOPER';
  return { canChange: dev, canChangeSegments: dev, isAdmin: su || role === 'ADMIN', isSuperuser: su };
}

interface Session {
  token: string | null;
  me: Me | undefined;
  loading: boolean;
  permissions: Permissions;
  signIn(token: string): void;
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

function storedToken(): string | null {
  try {
    return window.localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [token, setTokenState] = useState<string | null>(() => {
    const stored = storedToken();
    setToken(stored);
    return stored;
  });
  const signOut = useCallback(() => {
    window.localStorage.removeItem(STORAGE_KEY);
    setToken(null);
    setTokenState(null);
    queryClient.clear();
  }, [queryClient]);
  const signIn = useCallback((value: string) => {
    window.localStorage.setItem(STORAGE_KEY, value);
    setToken(value);
    setTokenState(value);
  }, []);
  useEffect(() => setUnauthorizedHandler(signOut), [signOut]);
  const me = useMe(Boolean(token));
  const value = useMemo<Session>(
    () => ({ token, me: me.data, loading: Boolean(token) && me.isPending, permissions: permissionsFor(me.data), signIn, signOut }),
    [token, me.data, me.isPending, signIn, signOut],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

