import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSyncExternalStore } from 'react';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type Environment = paths['/api/v1/environments/{key}']['get']['responses']['200']['content']['application/json'];
export type EnvironmentCreate = paths['/api/v1/environments']['post']['requestBody']['content']['application/json'];
export type EnvironmentUpdate = NonNullable<paths['/api/v1/environments/{key}']['patch']['requestBody']>['content']['application/json'];

const envPath = (key: string) => ({ params: { path: { key } } });

export function useEnvironments() {
  return useQuery({ queryKey: ['environments'], queryFn: () => unwrap(api.GET('/api/v1/environments')), staleTime: 30_000 });
}

/** After an environment changes, every flag view (which carries each environment's state) and key list is stale. */
function useEnvironmentsChanged() {
  const client = useQueryClient();
  return () =>
    Promise.all([
      client.invalidateQueries({ queryKey: ['environments'] }),
      client.invalidateQueries({ queryKey: ['flags'] }),
      client.invalidateQueries({ queryKey: ['flag'] }),
    ]);
}

export function useCreateEnvironment() {
  const changed = useEnvironmentsChanged();
  return useMutation({ mutationFn: (body: EnvironmentCreate) => unwrap(api.POST('/api/v1/environments', { body })), onSuccess: changed });
}

export function useUpdateEnvironment() {
  const changed = useEnvironmentsChanged();
  return useMutation({
    mutationFn: ({ key, body }: { key: string; body: EnvironmentUpdate }) => unwrap(api.PATCH('/api/v1/environments/{key}', { ...envPath(key), body })),
    onSuccess: changed,
  });
}

export function useDeleteEnvironment() {
  const changed = useEnvironmentsChanged();
  return useMutation({ mutationFn: (key: string) => unwrap(api.DELETE('/api/v1/environments/{key}', envPath(key))), onSuccess: changed });
}

/** The environment the flag pages act on, remembered in this browser (all tabs and components see one choice). */
const STORAGE_KEY = 'uplift.environment';
const listeners = new Set<() => void>();

function readStored(): string | null {
  try {
    return window.localStorage.getItem(STORAGE_KEY);
  } catch {
    return null;
  }
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  const onStorage = (event: StorageEvent) => event.key === STORAGE_KEY && listener();
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

export function chooseEnvironment(key: string): void {
  try {
    window.localStorage.setItem(STORAGE_KEY, key);
  } catch {
    // A browser without storage still switches for this page view.
  }
  for (const listener of listeners) listener();
}

export interface SelectedEnvironment {
  /** Every environment (empty while loading or when they cannot be read). */
  all: Environment[];
  /** The environment chosen (the stored one if it still exists, else the default); undefined until known. */
  selected?: Environment;
  /** The `?environment=` value for flag routes: absent for the default environment, which the routes act on anyway. */
  param?: string;
  /** False while a remembered environment is being checked, so no flag route runs against the wrong one. */
  ready: boolean;
  /** More than one environment: the flag pages show the switcher and per-environment columns. */
  several: boolean;
}

export function useSelectedEnvironment(): SelectedEnvironment {
  const stored = useSyncExternalStore(subscribe, readStored, () => null);
  const environments = useEnvironments();
  if (environments.isSuccess) {
    const all = environments.data;
    const fallback = all.find((e) => e.is_default) ?? all[0];
    const selected = all.find((e) => e.key === stored) ?? fallback;
    return { all, selected, param: selected && !selected.is_default ? selected.key : undefined, ready: true, several: all.length > 1 };
  }
  // Unreadable environments: the flag routes act on the default environment, as before environments existed.
  if (environments.isError) return { all: [], ready: true, several: false };
  return { all: [], ready: stored === null, several: false };
}

/** Which environment a query or mutation acts on: the query string for flag routes. */
export const environmentQuery = (param?: string) => (param ? { environment: param } : {});
