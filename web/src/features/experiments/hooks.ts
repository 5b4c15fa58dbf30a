import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { paths } from '../../api/schema.gen';

export type ExperimentListQuery = NonNullable<paths['/api/v1/experiments/']['get']['parameters']['query']>;
export type ExperimentBody = paths['/api/v1/experiments/']['post']['requestBody']['content']['application/json'];
export type ExperimentUpdate = NonNullable<paths['/api/v1/experiments/{experiment_id}']['put']['requestBody']>['content']['application/json'];
export type Experiment = paths['/api/v1/experiments/{experiment_id}']['get']['responses']['200']['content']['application/json'];
export type ExperimentStatus = Experiment['status'];
export type Transition = 'start' | 'pause' | 'complete' | 'archive';

export function useExperiments(query: ExperimentListQuery) {
  return useQuery({
    queryKey: ['experiments', query],
    queryFn: () => unwrap(api.GET('/api/v1/experiments/', { params: { query } })),
    placeholderData: (previous) => previous,
  });
}

export function useExperiment(id: string) {
  return useQuery({
    queryKey: ['experiment', id],
    queryFn: () => unwrap(api.GET('/api/v1/experiments/{experiment_id}', { params: { path: { experiment_id: id } } })),
  });
}

export function useCreateExperiment() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ExperimentBody) => unwrap(api.POST('/api/v1/experiments/', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['experiments'] }),
  });
}

/**
 * Stores an experiment the API sent back from a write. Only GET detail carries owner_name, so the name already
 * shown is kept (the header would read "owner —" until a reload), and the detail is read again to be sure.
 */
function useExperimentSaved(id: string) {
  const client = useQueryClient();
  return (data: Omit<Experiment, 'owner_name'> & { owner_name?: string | null }) => {
    client.setQueryData<Experiment>(['experiment', id], (previous) => ({ ...data, owner_name: data.owner_name ?? previous?.owner_name ?? null }));
    void client.invalidateQueries({ queryKey: ['experiment', id] });
  };
}

export function useUpdateExperiment(id: string) {
  const client = useQueryClient();
  const saved = useExperimentSaved(id);
  return useMutation({
    mutationFn: (body: ExperimentUpdate) => unwrap(api.PUT('/api/v1/experiments/{experiment_id}', { params: { path: { experiment_id: id } }, body })),
    onSuccess: (data) => {
      saved(data);
      return client.invalidateQueries({ queryKey: ['experiments'] });
    },
  });
}

export function useTransition(id: string) {
  const client = useQueryClient();
  const saved = useExperimentSaved(id);
  return useMutation({
    mutationFn: (move: Transition) => {
      const path = { experiment_id: id };
      switch (move) {
        case 'start':
          return unwrap(api.POST('/api/v1/experiments/{experiment_id}/start', { params: { path } }));
        case 'pause':
          return unwrap(api.POST('/api/v1/experiments/{experiment_id}/pause', { params: { path } }));
        case 'complete':
          return unwrap(api.POST('/api/v1/experiments/{experiment_id}/complete', { params: { path } }));
        case 'archive':
          return unwrap(api.POST('/api/v1/experiments/{experiment_id}/archive', { params: { path } }));
      }
    },
    onSuccess: (data) => {
      saved(data);
      void client.invalidateQueries({ queryKey: ['experiments'] });
      return client.invalidateQueries({ queryKey: ['results', id] });
    },
  });
}

export function useDeleteExperiment(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/v1/experiments/{experiment_id}', { params: { path: { experiment_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['experiments'] }),
  });
}

export function useCloneExperiment(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/api/v1/experiments/{experiment_id}/clone', { params: { path: { experiment_id: id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['experiments'] }),
  });
}
