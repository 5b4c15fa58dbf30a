import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type Flag = paths['/api/v1/feature-flags/{flag_id}']['get']['responses']['200']['content']['application/json'];
export type FlagBody = paths['/api/v1/feature-flags/']['post']['requestBody']['content']['application/json'];
export type FlagUpdate = NonNullable<paths['/api/v1/feature-flags/{flag_id}']['put']['requestBody']>['content']['application/json'];
export type FlagStatusFilter = 'ACTIVE' | 'INACTIVE' | 'ARCHIVED';
export type Evaluation = paths['/api/v1/feature-flags/evaluate/{flag_key}']['post']['responses']['200']['content']['application/json'];

const flagPath = (id: string) => ({ params: { path: { flag_id: id } } });

export function useFlags(query: { search?: string; status?: FlagStatusFilter }) {
  return useQuery({
    queryKey: ['flags', query],
    queryFn: () => unwrap(api.GET('/api/v1/feature-flags/', { params: { query: { skip: 0, limit: 500, ...query } } })),
    placeholderData: (previous) => previous,
  });
}

export function useFlag(id: string) {
  return useQuery({ queryKey: ['flag', id], queryFn: () => unwrap(api.GET('/api/v1/feature-flags/{flag_id}', flagPath(id))) });
}

function useFlagSaved() {
  const client = useQueryClient();
  return (flag: Flag) => {
    client.setQueryData(['flag', flag.id], flag);
    return client.invalidateQueries({ queryKey: ['flags'] });
  };
}

export function useCreateFlag() {
  const saved = useFlagSaved();
  return useMutation({ mutationFn: (body: FlagBody) => unwrap(api.POST('/api/v1/feature-flags/', { body })), onSuccess: saved });
}

export function useUpdateFlag(id: string) {
  const saved = useFlagSaved();
  return useMutation({
    mutationFn: (body: FlagUpdate) => unwrap(api.PUT('/api/v1/feature-flags/{flag_id}', { ...flagPath(id), body })),
    onSuccess: saved,
  });
}

/** On/off switch: activate or deactivate (the spec's verbs; an archived flag answers 400 with its sentence). */
export function useSetFlagActive() {
  const saved = useFlagSaved();
  return useMutation({
    mutationFn: ({ id, on }: { id: string; on: boolean }) =>
      on
        ? unwrap(api.POST('/api/v1/feature-flags/{flag_id}/activate', flagPath(id)))
        : unwrap(api.POST('/api/v1/feature-flags/{flag_id}/deactivate', flagPath(id))),
    onSuccess: saved,
  });
}

export function useArchiveFlag() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      const answer = await unwrap(api.POST('/api/v1/feature-flags/bulk-toggle', { body: { ids: [id], action: 'archive' } }));
      const failed = answer.results.find((r) => !r.success);
      if (failed) throw new ApiError(400, failed.error ?? 'The flag could not be archived.');
      return answer;
    },
    onSuccess: (_answer, id) => Promise.all([client.invalidateQueries({ queryKey: ['flags'] }), client.invalidateQueries({ queryKey: ['flag', id] })]),
  });
}

export function useUnarchiveFlag() {
  const saved = useFlagSaved();
  return useMutation({ mutationFn: (id: string) => unwrap(api.POST('/api/v1/feature-flags/{flag_id}/unarchive', flagPath(id))), onSuccess: saved });
}

export function useDeleteFlag() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/feature-flags/{flag_id}', flagPath(id))),
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
