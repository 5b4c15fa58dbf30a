import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type MetricDefinition = paths['/api/v1/metric-definitions/{metric_definition_id}']['get']['responses']['200']['content']['application/json'];
export type MetricDefinitionBody = paths['/api/v1/metric-definitions']['post']['requestBody']['content']['application/json'];
export type MetricDefinitionUpdate = paths['/api/v1/metric-definitions/{metric_definition_id}']['put']['requestBody']['content']['application/json'];
export type MetricKind = MetricDefinition['kind'];

/** The whole library (the API pages at most 500 a read): searched and filtered on the page. */
export function useMetricDefinitions() {
  return useQuery({
    queryKey: ['metric-definitions'],
    queryFn: () => unwrap(api.GET('/api/v1/metric-definitions', { params: { query: { skip: 0, limit: 500 } } })),
  });
}

export function useMetricDefinition(id: string) {
  return useQuery({
    queryKey: ['metric-definition', id],
    queryFn: () => unwrap(api.GET('/api/v1/metric-definitions/{metric_definition_id}', { params: { path: { metric_definition_id: id } } })),
  });
}

export function useCreateMetricDefinition() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: MetricDefinitionBody) => unwrap(api.POST('/api/v1/metric-definitions', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['metric-definitions'] }),
  });
}

export function useUpdateMetricDefinition(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: MetricDefinitionUpdate) =>
      unwrap(api.PUT('/api/v1/metric-definitions/{metric_definition_id}', { params: { path: { metric_definition_id: id } }, body })),
    onSuccess: (saved) => {
      client.setQueryData(['metric-definition', id], saved);
      return client.invalidateQueries({ queryKey: ['metric-definitions'] });
    },
  });
}

export function useDeleteMetricDefinition(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/metric-definitions/{metric_definition_id}', { params: { path: { metric_definition_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['metric-definitions'] }),
  });
}
