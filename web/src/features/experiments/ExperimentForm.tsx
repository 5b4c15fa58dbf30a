import { useState, type FormEvent } from 'react';
import { useRouter } from '../../router';
import { FormError, Select, TextArea, TextField, fieldError, fieldErrorsUnder } from '../../components/form';
import { RuleBuilder, emptyRules, fromRules, toRules, type RulesDraft } from '../../components/rule-builder';
import { PageHeader } from '../../components/ui';
import { experimentKeyProblem, requiredText } from '../../components/validate';
import { useMetricDefinitions } from '../metric-definitions/hooks';
import { useSegments } from '../segments/hooks';
import { useCreateExperiment, useUpdateExperiment, type Experiment, type ExperimentBody } from './hooks';
import { MetricsFieldset, metricBody, metricDraftOf, metricProblems, newMetricDraft, type MetricDraft } from './MetricsFieldset';

interface VariantDraft {
  name: string;
  is_control: boolean;
  traffic_allocation: string;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 100);

/** Sum of allocations to two decimals, so 33.33 + 33.33 + 33.34 is exactly 100. */
export function allocationTotal(variants: ReadonlyArray<{ traffic_allocation: string }>): number {
  return Math.round(variants.reduce((sum, v) => sum + (Number(v.traffic_allocation) || 0), 0) * 100) / 100;
}

/** Equal shares that add up to exactly 100 (the remainder goes to the first variants). */
export function evenSplit(count: number): string[] {
  const base = Math.floor(10000 / count);
  const extra = 10000 - base * count;
  return Array.from({ length: count }, (_, i) => String((base + (i < extra ? 1 : 0)) / 100));
}

export function ExperimentForm({ experiment }: { experiment?: Experiment }) {
  const { navigate } = useRouter();
  const create = useCreateExperiment();
  const update = useUpdateExperiment(experiment?.id ?? '');
  const mutation = experiment ? update : create;
  const segments = useSegments('active');
  const definitions = useMetricDefinitions();
  const isDraft = !experiment || experiment.status === 'draft';

  const [name, setName] = useState(experiment?.name ?? '');
  const [key, setKey] = useState(experiment?.key ?? '');
  const [keyTouched, setKeyTouched] = useState(Boolean(experiment));
  const [description, setDescription] = useState(experiment?.description ?? '');
  const [hypothesis, setHypothesis] = useState(experiment?.hypothesis ?? '');
  const [type, setType] = useState<ExperimentBody['experiment_type']>(experiment?.experiment_type ?? 'a_b');
  const [variants, setVariants] = useState<VariantDraft[]>(
    experiment?.variants.map((v) => ({ name: v.name, is_control: v.is_control, traffic_allocation: String(v.traffic_allocation) })) ?? [
      { name: 'control', is_control: true, traffic_allocation: '50' },
      { name: 'treatment', is_control: false, traffic_allocation: '50' },
    ],
  );
  const [metrics, setMetrics] = useState<MetricDraft[]>(
    experiment?.metrics.map(metricDraftOf) ?? [newMetricDraft({ name: 'Conversion', event_name: 'purchase', is_primary: true, expected_effect: '0.1' })],
  );
  const [rules, setRules] = useState<RulesDraft>(experiment ? fromRules(experiment.targeting_rules) : emptyRules());
  const [correction, setCorrection] = useState<NonNullable<ExperimentBody['correction_method']>>(experiment?.correction_method ?? 'benjamini_hochberg');
  const [confidence, setConfidence] = useState(String(experiment?.confidence_level ?? 0.95));
  const [sequential, setSequential] = useState(experiment?.sequential_testing_enabled ?? false);
  const [alpha, setAlpha] = useState(String((experiment?.sequential_testing_config as { alpha?: number } | null)?.alpha ?? 0.05));
  const [bayesian, setBayesian] = useState(experiment?.bayesian_enabled ?? false);
  const [covariate, setCovariate] = useState(
    (experiment?.variance_reduction_config as { covariate_metric_id?: string | null } | null)?.covariate_metric_id ?? '',
  );
  const [attempted, setAttempted] = useState(false);

  const total = allocationTotal(variants);
  // Checked live once the user has tried to save, so fixing the numbers clears the message at once.
  const problems: Record<string, string> = {};
  const nameProblem = requiredText(name);
  if (nameProblem) problems.name = nameProblem;
  const keyProblem = experiment ? undefined : experimentKeyProblem(key);
  if (keyProblem) problems.key = keyProblem;
  if (total !== 100) problems.variants = `Allocations add up to ${total}%; they must add up to 100%.`;
  if (variants.filter((v) => v.is_control).length !== 1) problems['variants.control'] = 'Choose exactly one control variant.';
  Object.assign(problems, metricProblems(metrics));
  const err = (field: string) => (attempted ? problems[field] : undefined) ?? fieldError(mutation.error, field);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAttempted(true);
    if (Object.keys(problems).length > 0) return;
    const body: ExperimentBody = {
      name,
      key,
      description: description || null,
      hypothesis: hypothesis || null,
      experiment_type: type,
      variants: variants.map((v) => ({ name: v.name, is_control: v.is_control, traffic_allocation: Number(v.traffic_allocation) })),
      metrics: metrics.map(metricBody),
      targeting_rules: toRules(rules),
      sequential_testing_enabled: sequential,
      sequential_testing_config: sequential ? { alpha: Number(alpha) } : null,
      bayesian_enabled: bayesian,
      ...(experiment ? { variance_reduction_config: covariate ? { covariate_metric_id: covariate } : null } : {}),
      ...(isDraft ? { correction_method: correction, confidence_level: Number(confidence) } : {}),
    };
    if (experiment) {
      const { key: _key, ...changes } = body;
      update.mutate(changes, { onSuccess: (saved) => navigate(`/experiments/${saved.id}`) });
    } else {
      create.mutate(body, { onSuccess: (saved) => navigate(`/experiments/${saved.id}`) });
    }
  };

  const setVariant = (i: number, patch: Partial<VariantDraft>) => setVariants(variants.map((v, j) => (j === i ? { ...v, ...patch } : v)));
  const shown = ['name', 'key', 'description', 'hypothesis', 'experiment_type', 'variants', 'metrics', 'targeting_rules', 'correction_method', 'confidence_level', 'sequential_testing_config'];

  return (
    <section>
      <PageHeader title={experiment ? `Edit ${experiment.name}` : 'New experiment'} />
      <form className="form" onSubmit={submit} noValidate>
        <div className="card">
          <h2>Basics</h2>
          <div className="grid-2">
            <TextField
              label="Name"
              required
              value={name}
              error={err('name')}
              onChange={(e) => {
                setName(e.target.value);
                if (!keyTouched) setKey(slug(e.target.value));
              }}
            />
            <TextField
              label="Key"
              required
              value={key}
              disabled={Boolean(experiment)}
              hint="Used by SDKs and tracking calls; letters, digits, _ . : -"
              error={err('key')}
              onChange={(e) => {
                setKeyTouched(true);
                setKey(e.target.value);
              }}
            />
          </div>
          <TextArea label="Description" value={description} error={err('description')} onChange={(e) => setDescription(e.target.value)} rows={2} />
          <TextArea label="Hypothesis" value={hypothesis} error={err('hypothesis')} onChange={(e) => setHypothesis(e.target.value)} rows={2} />
          <Select
            label="Type"
            value={type}
            error={err('experiment_type')}
            onChange={(e) => setType(e.target.value as ExperimentBody['experiment_type'])}
            options={[
              ['a_b', 'A/B test'],
              ['mv', 'Multivariate'],
              ['split_url', 'Split URL'],
              ['bandit', 'Bandit'],
            ]}
          />
        </div>

        <fieldset className="card">
          <legend>Variants</legend>
          <p className={`allocation-total${total === 100 ? '' : ' bad'}`} aria-live="polite">
            Total allocation: <strong>{total}%</strong> {total === 100 ? '✓' : '(must be 100%)'}
          </p>
          {variants.map((v, i) => (
            <div className="row variant-row" key={i}>
              <TextField label={`Variant ${i + 1} name`} value={v.name} error={err(`variants.${i}.name`)} onChange={(e) => setVariant(i, { name: e.target.value })} />
              <TextField
                label="Allocation %"
                type="number"
                min={0}
                max={100}
                step="any"
                inputMode="decimal"
                value={v.traffic_allocation}
                error={err(`variants.${i}.traffic_allocation`)}
                onChange={(e) => setVariant(i, { traffic_allocation: e.target.value })}
              />
              <label className="inline checkbox">
                <input
                  type="radio"
                  name="control"
                  checked={v.is_control}
                  onChange={() => setVariants(variants.map((w, j) => ({ ...w, is_control: j === i })))}
                />
                Control
              </label>
              <button
                type="button"
                className="icon"
                aria-label={`Remove variant ${i + 1}`}
                disabled={variants.length <= 1}
                onClick={() => setVariants(variants.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </div>
          ))}
          {(err('variants') || err('variants.control')) && (
            <p className="field-error" role="alert">
              {err('variants') ?? err('variants.control')}
            </p>
          )}
          <div className="row">
            <button type="button" className="secondary" onClick={() => setVariants([...variants, { name: `variant-${variants.length + 1}`, is_control: false, traffic_allocation: '0' }])}>
              + Add variant
            </button>
            <button type="button" className="secondary" onClick={() => setVariants(variants.map((v, i) => ({ ...v, traffic_allocation: evenSplit(variants.length)[i] })))}>
              Split evenly
            </button>
          </div>
        </fieldset>

        <MetricsFieldset metrics={metrics} definitions={definitions.data ?? []} onChange={setMetrics} err={err} />

        <div className="card">
          <RuleBuilder value={rules} onChange={setRules} segments={segments.data ?? []} error={fieldErrorsUnder(mutation.error, 'targeting_rules')} idPrefix="experiment-rules" />
        </div>

        <fieldset className="card">
          <legend>Statistics</legend>
          {!isDraft && <p className="hint">Correction and confidence level are fixed once the experiment has started.</p>}
          <div className="grid-2">
            <Select
              label="Multiple-comparison correction"
              value={correction}
              disabled={!isDraft}
              error={err('correction_method')}
              onChange={(e) => setCorrection(e.target.value as typeof correction)}
              options={[
                ['benjamini_hochberg', 'Benjamini–Hochberg (default)'],
                ['bonferroni', 'Bonferroni'],
                ['none', 'None'],
              ]}
            />
            <TextField
              label="Confidence level"
              type="number"
              min={0.8}
              max={0.99}
              step={0.01}
              disabled={!isDraft}
              value={confidence}
              hint="0.80 to 0.99"
              error={err('confidence_level')}
              onChange={(e) => setConfidence(e.target.value)}
            />
          </div>
          <label className="inline checkbox">
            <input type="checkbox" checked={sequential} onChange={(e) => setSequential(e.target.checked)} /> Sequential testing (safe to peek)
          </label>
          {sequential && (
            <TextField label="Sequential alpha" type="number" step="any" value={alpha} hint="Above 0, at most 0.2" error={err('sequential_testing_config.alpha')} onChange={(e) => setAlpha(e.target.value)} />
          )}
          <label className="inline checkbox">
            <input type="checkbox" checked={bayesian} onChange={(e) => setBayesian(e.target.checked)} /> Bayesian analysis (probability to beat control, expected loss)
          </label>
          {experiment ? (
            <Select
              label="CUPED covariate metric"
              hint="Pre-experiment history of this metric reduces variance (CUPED)."
              value={covariate}
              error={err('variance_reduction_config.covariate_metric_id')}
              onChange={(e) => setCovariate(e.target.value)}
              options={[['', 'Off'], ...experiment.metrics.map((m) => [m.id, m.name] as const)]}
            />
          ) : (
            <p className="hint">CUPED variance reduction can be turned on after creation, choosing one of the saved metrics.</p>
          )}
        </fieldset>

        <FormError error={mutation.error} shown={shown} />
        <div className="row">
          <button type="submit" disabled={mutation.isPending}>
            {mutation.isPending ? 'Saving…' : experiment ? 'Save changes' : 'Create experiment'}
          </button>
          <button type="button" className="secondary" onClick={() => navigate(experiment ? `/experiments/${experiment.id}` : '/experiments')}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
