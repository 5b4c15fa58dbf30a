import { ErrorBox, Loading } from '../../components/ui';
import { useExperiment } from '../experiments/hooks';
import { useFlag } from '../feature-flags/hooks';
import { EntityHistory } from './EntityHistory';

export function FlagHistory({ id }: { id: string }) {
  const flag = useFlag(id);
  if (flag.isPending) return <Loading rows={4} label="Loading flag" />;
  if (flag.isError) return <ErrorBox error={flag.error} />;
  return <EntityHistory entityType="feature_flag" entityId={id} name={flag.data.name} backTo={`/flags/${id}`} />;
}

export function ExperimentHistory({ id }: { id: string }) {
  const experiment = useExperiment(id);
  if (experiment.isPending) return <Loading rows={4} label="Loading experiment" />;
  if (experiment.isError) return <ErrorBox error={experiment.error} />;
  return <EntityHistory entityType="experiment" entityId={id} name={experiment.data.name} backTo={`/experiments/${id}`} />;
}
