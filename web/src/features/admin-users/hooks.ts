import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type UserPatch = paths['/api/v1/admin/users/{user_id}']['patch']['requestBody']['content']['application/json'];
export type NewUser = paths['/api/v1/users/']['post']['requestBody']['content']['application/json'];

export function useAdminUsers(search: string) {
  return useQuery({
    queryKey: ['admin-users', search],
    queryFn: () => unwrap(api.GET('/api/v1/admin/users', { params: { query: { skip: 0, limit: 100, ...(search ? { search } : {}) } } })),
    placeholderData: (previous) => previous,
  });
}

export function usePatchUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, patch }: { id: string; patch: UserPatch }) => unwrap(api.PATCH('/api/v1/admin/users/{user_id}', { params: { path: { user_id: id } }, body: patch })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['admin-users'] }),
  });
}

/** Creates the account (a new account is VIEWER), then gives it the chosen role. */
export function useCreateUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async ({ user, role }: { user: NewUser; role: NonNullable<UserPatch['role']> }) => {
      const created = await unwrap(api.POST('/api/v1/users/', { body: user }));
      if (role === 'VIEWER') return created;
      return unwrap(api.PATCH('/api/v1/admin/users/{user_id}', { params: { path: { user_id: created.id } }, body: { role } }));
    },
    onSuccess: () => client.invalidateQueries({ queryKey: ['admin-users'] }),
  });
}
