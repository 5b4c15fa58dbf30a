import { ErrorBox, Loading } from '../../components/ui';
import { ExperimentForm } from './ExperimentForm';
import { useExperiment } from './hooks';

export function ExperimentEdit({ id }: { id: string }) {
  const experiment = useExperiment(id);
  if (experiment.isPending) return <Loading rows={8} label="Loading experiment" />;
  if (experiment.isError) return <ErrorBox error={experiment.error} />;
  return <ExperimentForm experiment={experiment.data} />;
}
