import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrapComputed } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type Results = paths['/api/v1/results/{experiment_id}']['get']['responses']['200']['content']['application/json'];
export type DailyResults = paths['/api/v1/experiments/{experiment_id}/daily-results']['get']['responses']['200']['content']['application/json'];
export type Cuped = paths['/api/v1/results/{experiment_id}/cuped']['get']['responses']['200']['content']['application/json'];
export type SampleSize = paths['/api/v1/results/{experiment_id}/sample-size']['get']['responses']['200']['content']['application/json'];

const path = (id: string) => ({ params: { path: { experiment_id: id } } });

/**
 * How often the results panels read again while the page is open and the experiment can still gain data: the API's
 * results are at most RESULTS_MAX_STALENESS_SECONDS (5 by default) behind the events. React Query keeps the shown data
 * while it reads (no loading state, and an unchanged answer keeps the same objects, so nothing redraws), skips the
 * interval while the tab is hidden and reads again as soon as it shows.
 */
export const LIVE_REFRESH_MS = 5_000;
const liveOptions = (live: boolean) => ({ refetchInterval: live ? LIVE_REFRESH_MS : (false as const), refetchIntervalInBackground: false });

export function useResults(id: string, enabled: boolean, live = false) {
  return useQuery({
    queryKey: ['results', id, 'summary'],
    enabled,
    ...liveOptions(live),
    queryFn: () => unwrapComputed<Results>(api.GET('/api/v1/results/{experiment_id}', { params: { path: { experiment_id: id }, query: { use_cache: true } } })),
  });
}

export function useDailyResults(id: string, enabled: boolean, live = false) {
  return useQuery({
    queryKey: ['results', id, 'daily'],
    enabled,
    ...liveOptions(live),
    queryFn: () => unwrapComputed<DailyResults>(api.GET('/api/v1/experiments/{experiment_id}/daily-results', path(id))),
  });
}

export function useSampleSize(id: string, enabled: boolean, live = false) {
  return useQuery({
    queryKey: ['results', id, 'sample-size'],
    enabled,
    ...liveOptions(live),
    queryFn: () => unwrapComputed<SampleSize>(api.GET('/api/v1/results/{experiment_id}/sample-size', { params: { path: { experiment_id: id }, query: {} } })),
  });
}

export function useCuped(id: string, enabled: boolean, live = false) {
  return useQuery({ queryKey: ['results', id, 'cuped'], enabled, ...liveOptions(live), queryFn: () => unwrapComputed<Cuped>(api.GET('/api/v1/results/{experiment_id}/cuped', path(id))) });
}

/** Recomputes the results past the cache (running experiments cache them for 5 minutes), then reloads the panels. */
export function useRefreshResults(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrapComputed<Results>(api.GET('/api/v1/results/{experiment_id}', { params: { path: { experiment_id: id }, query: { use_cache: false } } })),
    onSuccess: (data) => {
      client.setQueryData(['results', id, 'summary'], data);
      return client.invalidateQueries({ queryKey: ['results', id], predicate: (q) => q.queryKey[2] !== 'summary' });
    },
  });
}

