import { FormError } from '../../components/form';
import { Badge, ErrorBox, Loading, PageHeader, dateTime } from '../../components/ui';
import { Link, useRouter } from '../../router';
import { useSession } from '../auth/session';
import { ResultsView } from '../results/ResultsView';
import { CodeSnippets } from '../snippets/CodeSnippets';
import { useCloneExperiment, useDeleteExperiment, useExperiment, useTransition, type Experiment } from './hooks';
import { STATUS_TONE, allowedTransitions, transitionLabel } from './lifecycle';

export function ExperimentDetail({ id }: { id: string }) {
  const experiment = useExperiment(id);
  if (experiment.isPending) return <Loading rows={6} label="Loading experiment" />;
  if (experiment.isError) return <ErrorBox error={experiment.error} />;
  return <ExperimentPage experiment={experiment.data} />;
}

function ExperimentPage({ experiment }: { experiment: Experiment }) {
  const { permissions } = useSession();
  const { navigate } = useRouter();
  const transition = useTransition(experiment.id);
  const remove = useDeleteExperiment(experiment.id);
  const clone = useCloneExperiment(experiment.id);
  const moves = allowedTransitions(experiment.status);
  const error = transition.error ?? remove.error ?? clone.error;
  return (
    <section>
      <PageHeader
        title={experiment.name}
        actions={
          <>
            <Link className="button secondary" to={`/experiments/${experiment.id}/history`}>
              History
            </Link>
            {permissions.canChange && (
            <>
              {moves.map((move) => (
                <button
                  key={move}
                  type="button"
                  className={move === 'start' ? '' : 'secondary'}
                  disabled={transition.isPending}
                  onClick={() => {
                    if (move === 'complete' && !window.confirm('Complete this experiment? It stops assigning users.')) return;
                    transition.mutate(move);
                  }}
                >
                  {transitionLabel(move, experiment.status)}
                </button>
              ))}
              {experiment.status !== 'archived' && (
                <Link className="button secondary" to={`/experiments/${experiment.id}/edit`}>
                  Edit
                </Link>
              )}
              <button type="button" className="secondary" disabled={clone.isPending} onClick={() => clone.mutate(undefined, { onSuccess: (copy) => navigate(`/experiments/${copy.id}`) })}>
                Clone
              </button>
              {experiment.status === 'draft' && (
                <button
                  type="button"
                  className="danger"
                  disabled={remove.isPending}
                  onClick={() => {
                    if (window.confirm(`Delete the draft “${experiment.name}”?`)) remove.mutate(undefined, { onSuccess: () => navigate('/experiments') });
                  }}
                >
                  Delete
                </button>
              )}
            </>
            )}
          </>
        }
      />
      <p className="meta">
        <Badge tone={STATUS_TONE[experiment.status]}>{experiment.status}</Badge> <code>{experiment.key}</code> · {experiment.experiment_type} · owner{' '}
        {experiment.owner_name ?? '—'} · started {dateTime(experiment.start_date)}
        {experiment.end_date ? ` · ended ${dateTime(experiment.end_date)}` : ''}
      </p>
      <FormError error={error} />
      {experiment.hypothesis && <p className="hypothesis">Hypothesis: {experiment.hypothesis}</p>}
      <div className="grid-3">
        <div className="card">
          <h2>Variants</h2>
          <ul className="plain">
            {experiment.variants.map((v) => (
              <li key={v.id}>
                {v.name} {v.is_control && <Badge tone="neutral">control</Badge>} <span className="hint">{v.traffic_allocation}%</span>
              </li>
            ))}
          </ul>
        </div>
        <div className="card">
          <h2>Metrics</h2>
          <ul className="plain">
            {experiment.metrics.map((m) => (
              <li key={m.id}>
                {m.name}{' '}
                {m.metric_definition_id ? (
                  <span className="hint">
                    (<Link to={`/metrics/${m.metric_definition_id}`}>metric library</Link>)
                  </span>
                ) : (
                  <span className="hint">
                    ({m.metric_type}, event <code>{m.event_name}</code>)
                  </span>
                )}{' '}
                {m.is_primary && <Badge tone="info">primary</Badge>}
              </li>
            ))}
          </ul>
        </div>
        <div className="card">
          <h2>Settings</h2>
          <ul className="plain">
            <li>Correction: {experiment.correction_method.replace(/_/g, ' ')}</li>
            <li>Confidence: {Math.round(experiment.confidence_level * 100)}%</li>
            <li>Sequential testing: {experiment.sequential_testing_enabled ? 'on' : 'off'}</li>
            <li>Bayesian: {experiment.bayesian_enabled ? 'on' : 'off'}</li>
            <li>Targeting: {(experiment.targeting_rules as { groups?: unknown[] } | null)?.groups?.length ? 'rules set' : 'everyone'}</li>
          </ul>
        </div>
      </div>
      <h2>Results</h2>
      <ResultsView experiment={experiment} />
      <CodeSnippets target={{ kind: 'experiment', key: experiment.key, event: experiment.metrics.find((m) => m.is_primary)?.event_name ?? null }} />
    </section>
  );
}
