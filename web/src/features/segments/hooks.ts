import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type Segment = paths['/api/v1/segments/{segment_id}']['get']['responses']['200']['content']['application/json'];
export type SegmentBody = paths['/api/v1/segments']['post']['requestBody']['content']['application/json'];
export type SegmentUpdate = paths['/api/v1/segments/{segment_id}']['put']['requestBody']['content']['application/json'];
type Status = 'active' | 'inactive' | 'archived';

export function useSegments(status?: Status) {
  return useQuery({
    queryKey: ['segments', status ?? 'all'],
    queryFn: () => unwrap(api.GET('/api/v1/segments', { params: { query: { skip: 0, limit: 500, ...(status ? { status } : {}) } } })),
  });
}

export function useSegment(id: string) {
  return useQuery({
    queryKey: ['segment', id],
    queryFn: () => unwrap(api.GET('/api/v1/segments/{segment_id}', { params: { path: { segment_id: id } } })),
  });
}

export function useCreateSegment() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SegmentBody) => unwrap(api.POST('/api/v1/segments', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['segments'] }),
  });
}

export function useUpdateSegment(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SegmentUpdate) => unwrap(api.PUT('/api/v1/segments/{segment_id}', { params: { path: { segment_id: id } }, body })),
    onSuccess: () => Promise.all([client.invalidateQueries({ queryKey: ['segments'] }), client.invalidateQueries({ queryKey: ['segment', id] })]),
  });
}

export function useArchiveSegment(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/segments/{segment_id}', { params: { path: { segment_id: id } } })),
    onSuccess: () => Promise.all([client.invalidateQueries({ queryKey: ['segments'] }), client.invalidateQueries({ queryKey: ['segment', id] })]),
  });
}

export function useAddMembers(id: string) {
  return useMutation({
    mutationFn: (add: string[]) => unwrap(api.POST('/api/v1/segments/{segment_id}/members', { params: { path: { segment_id: id } }, body: { add } })),
  });
}
