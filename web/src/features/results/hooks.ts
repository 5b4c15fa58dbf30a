import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrapComputed } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type Results = paths['/api/v1/results/{experiment_id}']['get']['responses']['200']['content']['application/json'];
export type DailyResults = paths['/api/v1/experiments/{experiment_id}/daily-results']['get']['responses']['200']['content']['application/json'];
export type Cuped = paths['/api/v1/results/{experiment_id}/cuped']['get']['responses']['200']['content']['application/json'];
export type SampleSize = paths['/api/v1/results/{experiment_id}/sample-size']['get']['responses']['200']['content']['application/json'];

const path = (id: string) => ({ params: { path: { experiment_id: id } } });

export function useResults(id: string, enabled: boolean) {
  return useQuery({ queryKey: ['results', id, 'summary'], enabled, queryFn: () => unwrapComputed<Results>(api.GET('/api/v1/results/{experiment_id}', { params: { path: { experiment_id: id }, query: { use_cache: true } } })) });
}

export function useDailyResults(id: string, enabled: boolean) {
  return useQuery({
    queryKey: ['results', id, 'daily'],
    enabled,
    queryFn: () => unwrapComputed<DailyResults>(api.GET('/api/v1/experiments/{experiment_id}/daily-results', path(id))),
  });
}

export function useSampleSize(id: string, enabled: boolean) {
  return useQuery({
    queryKey: ['results', id, 'sample-size'],
    enabled,
    queryFn: () => unwrapComputed<SampleSize>(api.GET('/api/v1/results/{experiment_id}/sample-size', { params: { path: { experiment_id: id }, query: {} } })),
  });
}

export function useCuped(id: string, enabled: boolean) {
  return useQuery({ queryKey: ['results', id, 'cuped'], enabled, queryFn: () => unwrapComputed<Cuped>(api.GET('/api/v1/results/{experiment_id}/cuped', path(id))) });
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

