import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type ScheduleBody = paths['/api/v1/rollout-schedules/']['post']['requestBody']['content']['application/json'];
export type ScheduleAction = 'activate' | 'pause' | 'cancel';

export function useSchedules(flagId: string) {
  return useQuery({
    queryKey: ['rollout-schedules', flagId],
    queryFn: () => unwrap(api.GET('/api/v1/rollout-schedules/', { params: { query: { flag_id: flagId, skip: 0, limit: 100 } } })),
  });
}

export function useCreateSchedule(flagId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ScheduleBody) => unwrap(api.POST('/api/v1/rollout-schedules/', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['rollout-schedules', flagId] }),
  });
}

export function useScheduleAction(flagId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: string; action: ScheduleAction }) => {
      const params = { params: { path: { schedule_id: id } } };
      if (action === 'activate') return unwrap(api.POST('/api/v1/rollout-schedules/{schedule_id}/activate', params));
      if (action === 'pause') return unwrap(api.POST('/api/v1/rollout-schedules/{schedule_id}/pause', params));
      return unwrap(api.POST('/api/v1/rollout-schedules/{schedule_id}/cancel', params));
    },
    onSuccess: () => client.invalidateQueries({ queryKey: ['rollout-schedules', flagId] }),
  });
}
