import { Select, TextField } from '../../components/form';
import { requiredText } from '../../components/validate';
import { cappingLabel, describeDefinition } from '../metric-definitions/draft';
import type { MetricDefinition } from '../metric-definitions/hooks';
import { KindBadge } from '../metric-definitions/MetricLibrary';
import type { Experiment, ExperimentBody } from './hooks';

type MetricType = 'conversion' | 'count' | 'revenue' | 'duration';
export interface MetricDraft {
  name: string;
  event_name: string;
  metric_type: MetricType;
  is_primary: boolean;
  expected_effect: string;
  /** '' for a metric typed here; else the metric library definition it uses. */
  metric_definition_id: string;
}

export const newMetricDraft = (patch: Partial<MetricDraft> = {}): MetricDraft => ({
  name: '',
  event_name: '',
  metric_type: 'conversion',
  is_primary: false,
  expected_effect: '',
  metric_definition_id: '',
  ...patch,
});

export function metricDraftOf(m: Experiment['metrics'][number]): MetricDraft {
  return {
    name: m.name,
    event_name: m.event_name,
    metric_type: m.metric_type as MetricType,
    is_primary: m.is_primary,
    expected_effect: m.expected_effect === null || m.expected_effect === undefined ? '' : String(m.expected_effect),
    metric_definition_id: m.metric_definition_id ?? '',
  };
}

/**
 * The event and type a definition-backed metric carries. The API analyses it per the definition and keeps these as
 * its label (they stay required), so they say what the definition reads: its event (a ratio's numerator) and a type
 * of the same family.
 */
export function labelOf(d: MetricDefinition): { event_name: string; metric_type: MetricType } {
  const main = d.kind === 'ratio' ? d.numerator : d.event_name ? { event_name: d.event_name, aggregate: d.aggregate ?? 'count' } : null;
  const metric_type: MetricType = d.kind === 'proportion' ? 'conversion' : main?.aggregate === 'count' ? 'count' : 'revenue';
  return { event_name: main?.event_name ?? '', metric_type };
}

export function metricBody(m: MetricDraft): ExperimentBody['metrics'][number] {
  return {
    name: m.name,
    event_name: m.event_name,
    metric_type: m.metric_type,
    is_primary: m.is_primary,
    ...(m.expected_effect.trim() ? { expected_effect: Number(m.expected_effect) } : {}),
    ...(m.metric_definition_id ? { metric_definition_id: m.metric_definition_id } : {}),
  };
}

/** Checks before sending, keyed as the API's field errors (`metrics.0.name`). */
export function metricProblems(metrics: MetricDraft[]): Record<string, string> {
  const problems: Record<string, string> = {};
  metrics.forEach((m, i) => {
    const name = requiredText(m.name);
    if (name) problems[`metrics.${i}.name`] = name;
    const event = m.metric_definition_id ? undefined : requiredText(m.event_name);
    if (event) problems[`metrics.${i}.event_name`] = event;
  });
  if (!metrics.some((m) => m.is_primary)) problems['metrics.primary'] = 'Mark one metric as primary.';
  return problems;
}

export function MetricsFieldset({
  metrics,
  definitions,
  onChange,
  err,
}: {
  metrics: MetricDraft[];
  definitions: MetricDefinition[];
  onChange(next: MetricDraft[]): void;
  err(field: string): string | undefined;
}) {
  const byId = new Map(definitions.map((d) => [d.id, d]));
  const setMetric = (i: number, patch: Partial<MetricDraft>) => onChange(metrics.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  const choose = (i: number, id: string) => {
    const d = byId.get(id);
    const current = metrics[i];
    const previous = byId.get(current.metric_definition_id);
    // The metric's name follows the definition unless the user typed one of their own.
    const keepName = current.name.trim() && current.name !== previous?.name;
    setMetric(i, d ? { metric_definition_id: id, ...labelOf(d), name: keepName ? current.name : d.name } : { metric_definition_id: '' });
  };
  const options: ReadonlyArray<readonly [string, string]> = [
    ['', 'None: type the metric here'],
    ...definitions.map((d) => [d.id, `${d.name} (${d.kind})`] as const),
  ];
  return (
    <fieldset className="card">
      <legend>Metrics</legend>
      {metrics.map((m, i) => {
        const definition = byId.get(m.metric_definition_id);
        return (
          <div className="metric-row" key={i}>
            <div className="row">
              <Select
                label={`Metric ${i + 1} from the library`}
                value={m.metric_definition_id}
                error={err(`metrics.${i}.metric_definition_id`)}
                options={definition || !m.metric_definition_id ? options : [...options, [m.metric_definition_id, 'A definition not in the library']]}
                onChange={(e) => choose(i, e.target.value)}
              />
              <TextField label={`Metric ${i + 1} name`} value={m.name} error={err(`metrics.${i}.name`)} onChange={(e) => setMetric(i, { name: e.target.value })} />
            </div>
            <div className="row">
              {m.metric_definition_id ? (
                <p className="definition-summary">
                  {definition ? (
                    <>
                      <KindBadge kind={definition.kind} /> {describeDefinition(definition)}
                      {cappingLabel(definition.capping) && <span className="hint"> · {cappingLabel(definition.capping)}</span>} <span className="hint">· version {definition.version}</span>
                    </>
                  ) : (
                    <span className="hint">Analysed per its metric library definition.</span>
                  )}
                </p>
              ) : (
                <>
                  <TextField label="Event name" value={m.event_name} error={err(`metrics.${i}.event_name`)} onChange={(e) => setMetric(i, { event_name: e.target.value })} />
                  <Select
                    label="Type"
                    value={m.metric_type}
                    error={err(`metrics.${i}.metric_type`)}
                    onChange={(e) => setMetric(i, { metric_type: e.target.value as MetricType })}
                    options={[
                      ['conversion', 'Conversion'],
                      ['count', 'Count'],
                      ['revenue', 'Revenue'],
                      ['duration', 'Duration'],
                    ]}
                  />
                </>
              )}
              <TextField
                label="Minimum detectable effect"
                hint="Relative, e.g. 0.1 = 10%"
                type="number"
                step="any"
                value={m.expected_effect}
                error={err(`metrics.${i}.expected_effect`)}
                onChange={(e) => setMetric(i, { expected_effect: e.target.value })}
              />
              <label className="inline checkbox">
                <input type="radio" name="primary" checked={m.is_primary} onChange={() => onChange(metrics.map((n, j) => ({ ...n, is_primary: j === i })))} />
                Primary
              </label>
              <button type="button" className="icon" aria-label={`Remove metric ${i + 1}`} disabled={metrics.length <= 1} onClick={() => onChange(metrics.filter((_, j) => j !== i))}>
                ×
              </button>
            </div>
          </div>
        );
      })}
      {(err('metrics') || err('metrics.primary')) && (
        <p className="field-error" role="alert">
          {err('metrics') ?? err('metrics.primary')}
        </p>
      )}
      <button type="button" className="secondary" onClick={() => onChange([...metrics, newMetricDraft()])}>
        + Add metric
      </button>
    </fieldset>
  );
}
