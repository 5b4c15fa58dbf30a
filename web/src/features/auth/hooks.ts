import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export function useMe(enabled: boolean) {
  return useQuery({ queryKey: ['me'], enabled, queryFn: () => unwrap(api.GET('/api/v1/auth/me')) });
}

export function useLogin() {
  return useMutation({ mutationFn: (body: { email: string; password: string }) => unwrap(api.POST('/api/v1/auth/login', { body })) });
}
