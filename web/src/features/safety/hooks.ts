import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

export function useSafetyCheck(flagId: string) {
  return useQuery({
    queryKey: ['safety-check', flagId],
    queryFn: () => unwrap(api.GET('/api/v1/safety/feature-flags/{flag_id}/check', { params: { path: { flag_id: flagId } } })),
  });
}
