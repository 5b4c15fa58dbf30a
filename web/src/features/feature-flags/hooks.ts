import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';
import { environmentQuery } from '../environments/hooks';

export type Flag = paths['/api/v1/feature-flags/{flag_id}']['get']['responses']['200']['content']['application/json'];
export type FlagBody = paths['/api/v1/feature-flags/']['post']['requestBody']['content']['application/json'];
export type FlagUpdate = NonNullable<paths['/api/v1/feature-flags/{flag_id}']['put']['requestBody']>['content']['application/json'];
export type FlagStatusFilter = 'ACTIVE' | 'INACTIVE' | 'ARCHIVED';
export type Evaluation = paths['/api/v1/feature-flags/evaluate/{flag_key}']['post']['responses']['200']['content']['application/json'];

const flagPath = (id: string, environment?: string) => ({ params: { path: { flag_id: id }, query: environmentQuery(environment) } });

/** The flags in one environment (`environment` absent: the default); `enabled` false holds the read until it is known. */
export function useFlags(query: { search?: string; status?: FlagStatusFilter }, environment?: string, enabled = true) {
  return useQuery({
    queryKey: ['flags', query, environment ?? null],
    enabled,
    queryFn: () =>
      unwrap(api.GET('/api/v1/feature-flags/', { params: { query: { skip: 0, limit: 500, ...query, ...environmentQuery(environment) } } })),
    placeholderData: (previous) => previous,
  });
}

export function useFlag(id: string, environment?: string, enabled = true) {
  return useQuery({
    queryKey: ['flag', id, environment ?? null],
    enabled,
    queryFn: () => unwrap(api.GET('/api/v1/feature-flags/{flag_id}', flagPath(id, environment))),
  });
}

/** A flag changed in one environment: its view there is the answer; its other views and every list are stale. */
function useFlagSaved() {
  const client = useQueryClient();
  return (flag: Flag, environment?: string) => {
    client.setQueryData(['flag', flag.id, environment ?? null], flag);
    return Promise.all([
      client.invalidateQueries({ queryKey: ['flags'] }),
      client.invalidateQueries({ queryKey: ['flag', flag.id], predicate: (q) => q.queryKey[2] !== (environment ?? null) }),
    ]);
  };
}

export function useCreateFlag(environment?: string) {
  const saved = useFlagSaved();
  return useMutation({
    mutationFn: (body: FlagBody) => unwrap(api.POST('/api/v1/feature-flags/', { params: { query: environmentQuery(environment) }, body })),
    onSuccess: (flag) => saved(flag, environment),
  });
}

export function useUpdateFlag(id: string, environment?: string) {
  const saved = useFlagSaved();
  return useMutation({
    mutationFn: (body: FlagUpdate) => unwrap(api.PUT('/api/v1/feature-flags/{flag_id}', { ...flagPath(id, environment), body })),
    onSuccess: (flag) => saved(flag, environment),
  });
}

/** On/off switch: activate or deactivate in one environment (the spec's verbs; an archived flag answers 400 with its sentence). */
export function useSetFlagActive() {
  const saved = useFlagSaved();
  return useMutation({
    mutationFn: ({ id, on, environment }: { id: string; on: boolean; environment?: string }) =>
      on
        ? unwrap(api.POST('/api/v1/feature-flags/{flag_id}/activate', flagPath(id, environment)))
        : unwrap(api.POST('/api/v1/feature-flags/{flag_id}/deactivate', flagPath(id, environment))),
    onSuccess: (flag, { environment }) => saved(flag, environment),
  });
}

export function useArchiveFlag(environment?: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      const answer = await unwrap(
        api.POST('/api/v1/feature-flags/bulk-toggle', { params: { query: environmentQuery(environment) }, body: { ids: [id], action: 'archive' } }),
      );
      const failed = answer.results.find((r) => !r.success);
      if (failed) throw new ApiError(400, failed.error ?? 'The flag could not be archived.');
      return answer;
    },
    onSuccess: (_answer, id) => Promise.all([client.invalidateQueries({ queryKey: ['flags'] }), client.invalidateQueries({ queryKey: ['flag', id] })]),
  });
}

export function useUnarchiveFlag(environment?: string) {
  const saved = useFlagSaved();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/api/v1/feature-flags/{flag_id}/unarchive', flagPath(id, environment))),
    onSuccess: (flag) => saved(flag, environment),
  });
}

/** Promotes one flag's state (status, rollout, rules, serving variations) from one environment to another. */
export function useCopyFlagState() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, from, to }: { id: string; from: string; to: string }) =>
      unwrap(api.POST('/api/v1/feature-flags/{flag_id}/environments/{target}/copy', { params: { path: { flag_id: id, target: to } }, body: { from } })),
    onSuccess: (_flag, { id }) => Promise.all([client.invalidateQueries({ queryKey: ['flags'] }), client.invalidateQueries({ queryKey: ['flag', id] })]),
  });
}

export function useDeleteFlag() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/feature-flags/{flag_id}', { params: { path: { flag_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['flags'] }),
  });
}

export interface EvaluateInput {
  flagKey: string;
  apiKey: string;
  userId: string;
  context: Record<string, unknown> | null;
  /** The flag's updated_at, so a change to the flag re-evaluates at once. */
  version: string;
}

/** Evaluates the flag as an SDK would: with an API key, for one user and context. */
export function useEvaluateFlag(input: EvaluateInput | null) {
  return useQuery({
    queryKey: ['flag-evaluation', input],
    enabled: input !== null,
    queryFn: () => {
      const { flagKey, apiKey, userId, context } = input as EvaluateInput;
      return unwrap(
        api.POST('/api/v1/feature-flags/evaluate/{flag_key}', {
          params: { path: { flag_key: flagKey } },
          headers: { 'X-API-Key': apiKey },
          body: { user_id: userId, ...(context ? { context } : {}) },
        }),
      );
    },
  });
}
