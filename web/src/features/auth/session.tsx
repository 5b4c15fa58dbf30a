import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { setToken, setUnauthorizedHandler } from '../../api/client';
import { WARN_BEFORE_MS, tokenExpiry } from './expiry';
import { useMe } from './hooks';
import { ExpiryWarning, ReauthDialog } from './Reauth';

type Me = NonNullable<Awaited<ReturnType<typeof useMe>>['data']>;
const STORAGE_KEY = 'uplift.token';

/** What the signed-in account may do, mirroring the spec's role table so the UI offers only allowed actions. */
export interface Permissions {
  /** Create, edit, start and delete experiments and flags (ADMIN, DEVELOPER). */
  canChange: boolean;
  /** Segments: DEVELOPER and up. */
  canChangeSegments: boolean;
  /** The metric library: ANALYST and up (ADMIN, DEVELOPER, ANALYST). */
  canChangeMetrics: boolean;
  isAdmin: boolean;
  isSuperuser: boolean;
}

export function permissionsFor(me: Pick<Me, 'role' | 'is_superuser'> | undefined): Permissions {
  const su = Boolean(me?.is_superuser);
  const role = me?.role ?? null;
  const dev = su || role === 'ADMIN' || role === 'DEVELOPER';
  return { canChange: dev, canChangeSegments: dev, canChangeMetrics: dev || role === 'ANALYST', isAdmin: su || role === 'ADMIN', isSuperuser: su };
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
  const me = useMe(Boolean(token));
  const meLoaded = me.data !== undefined;
  /**
   * A session that ends while the page is open does not throw the page away: a 401 (or the token's exp passing)
   * opens the sign-in dialog over the page, and the page, with any edit in progress, stays mounted. Before the
   * account is known there is nothing to keep, so that goes to the sign-in page.
   */
  const [expired, setExpired] = useState(false);
  const [renewing, setRenewing] = useState(false);
  const expiresAt = tokenExpiry(token);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => setUnauthorizedHandler(() => (meLoaded ? setExpired(true) : signOut())), [signOut, meLoaded]);
  useEffect(() => {
    if (!token || expiresAt === null) return;
    const left = expiresAt - Date.now();
    if (left <= 0) {
      if (meLoaded) setExpired(true);
      else signOut();
      return;
    }
    // Wake at the warning, then each minute of it (to count down), then at expiry.
    const wait = left > WARN_BEFORE_MS ? left - WARN_BEFORE_MS : Math.min(left, 60_000);
    const timer = setTimeout(() => setNow(Date.now()), Math.min(wait, 2 ** 31 - 1));
    return () => clearTimeout(timer);
  }, [token, expiresAt, now, meLoaded, signOut]);
  const renewed = useCallback(
    (value: string) => {
      signIn(value);
      setExpired(false);
      setRenewing(false);
      setNow(Date.now());
      // Whatever failed while signed out reads again; edits on the page were never touched.
      void queryClient.refetchQueries({ type: 'active', predicate: (q) => q.state.status === 'error' });
    },
    [signIn, queryClient],
  );
  const warn = Boolean(token && meLoaded && expiresAt !== null && !expired && expiresAt - now <= WARN_BEFORE_MS);
  const value = useMemo<Session>(
    () => ({ token, me: me.data, loading: Boolean(token) && me.isPending, permissions: permissionsFor(me.data), signIn, signOut }),
    [token, me.data, me.isPending, signIn, signOut],
  );
  return (
    <SessionContext.Provider value={value}>
      {warn && expiresAt !== null && <ExpiryWarning expiresAt={expiresAt} now={now} onRenew={() => setRenewing(true)} />}
      {children}
      {token && me.data && (expired || renewing) && (
        <ReauthDialog
          email={me.data.email ?? ''}
          expired={expired}
          onSignedIn={renewed}
          onCancel={expired ? undefined : () => setRenewing(false)}
          onSignOut={() => {
            setExpired(false);
            setRenewing(false);
            signOut();
          }}
        />
      )}
    </SessionContext.Provider>
  );
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

