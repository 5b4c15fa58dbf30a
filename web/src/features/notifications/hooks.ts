import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type Preferences = paths['/api/v1/notifications/preferences']['get']['responses']['200']['content']['application/json'];
export type PreferencesUpdate = paths['/api/v1/notifications/preferences']['put']['requestBody']['content']['application/json'];

export function usePreferences() {
  return useQuery({ queryKey: ['notification-preferences'], queryFn: () => unwrap(api.GET('/api/v1/notifications/preferences')) });
}

export function useSavePreferences() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: PreferencesUpdate) => unwrap(api.PUT('/api/v1/notifications/preferences', { body })),
    onSuccess: (saved) => client.setQueryData(['notification-preferences'], saved),
  });
}

export function useTestNotification() {
  return useMutation({ mutationFn: () => unwrap(api.POST('/api/v1/notifications/test', { params: { query: {} } })) });
}
