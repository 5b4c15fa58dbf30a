import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export function useApiKeys(all: boolean) {
  return useQuery({ queryKey: ['api-keys', all], queryFn: () => unwrap(api.GET('/api/v1/api-keys', { params: { query: { all } } })) });
}

export function useCreateApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { name: string; scopes?: Array<'sdk:ruleset'>; expires_at?: string; environment?: string }) => unwrap(api.POST('/api/v1/api-keys', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}

export function useDeleteApiKey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/api/v1/api-keys/{key_id}', { params: { path: { key_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys'] }),
  });
}
