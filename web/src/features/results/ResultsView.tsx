import { useEffect, useState } from 'react';
import { Badge, DataTable, Empty, ErrorBox, Loading, num, pValue, pct, timeAgo } from '../../components/ui';
import type { Experiment } from '../experiments/hooks';
import { DailyChart, LiftChart, RateChart } from './charts';
import { DefinitionMetricResult } from './DefinitionResult';
import { useCuped, useDailyResults, useRefreshResults, useResults, useSampleSize, type Cuped, type Results, type SampleSize } from './hooks';

const TEST_NAME: Record<Results['metrics'][number]['test'], string> = {
  fisher_exact: "Fisher's exact test",
  welch_t: "Welch's t-test",
  delta_method: 'delta method',
  quantile_order_statistic: 'order-statistic interval',
};

const RECOMMENDATION: Record<Results['summary']['recommendation'], { label: string; tone: string }> = {
  SHIP_VARIANT: { label: 'Ship the winning variant', tone: 'success' },
  KEEP_CONTROL: { label: 'Keep the control', tone: 'warning' },
  CONTINUE_TESTING: { label: 'Keep testing', tone: 'info' },
  INCONCLUSIVE: { label: 'Inconclusive', tone: 'neutral' },
};

export function ResultsView({ experiment }: { experiment: Experiment }) {
  const enabled = experiment.status !== 'draft';
  // Running or paused, its users can still convert: the page keeps up while it is open. Ended, the data is final.
  const live = experiment.status === 'active' || experiment.status === 'paused';
  const results = useResults(experiment.id, enabled, live);
  const daily = useDailyResults(experiment.id, enabled, live);
  const sampleSize = useSampleSize(experiment.id, enabled, live);
  const hasCovariate = Boolean((experiment.variance_reduction_config as { covariate_metric_id?: string | null } | null)?.covariate_metric_id);
  const cuped = useCuped(experiment.id, enabled && hasCovariate, live);
  const refresh = useRefreshResults(experiment.id);

  if (!enabled) {
    return <Empty title="No results yet.">Start the experiment, then send assignments and events; results appear here.</Empty>;
  }
  if (results.isPending) return <Loading rows={6} label="Loading results" />;
  if (results.isError) return <ErrorBox error={results.error} />;
  const r = results.data;
  const verdict = shownVerdict(experiment, r);
  const rec = verdict.rec;
  const winner = experiment.variants.find((v) => v.id === r.summary.winning_variant_id);
  return (
    <div className="results">
      <div className={`recommendation card tone-${rec.tone}`} aria-live="polite">
        <div>
          <p className="eyebrow">Recommendation</p>
          <p className="recommendation-label">
            <Badge tone={rec.tone}>{verdict.badge}</Badge> {rec.label}
            {winner && r.summary.has_winner ? `: ${winner.name}` : ''}
          </p>
          <p>{verdict.reason}</p>
          {sampleSize.data && <EarlyCaveat recommendation={r.summary.recommendation} plan={sampleSize.data} />}
        </div>
        <div className="recommendation-meta">
          <span>
            {r.correction_method.replace(/_/g, '–')} correction · {Math.round(r.confidence_level * 100)}% confidence
          </span>
          <UpdatedAgo computedAt={r.computed_at} dataThrough={r.data_through} live={live} />
          <button type="button" className="secondary" disabled={refresh.isPending} onClick={() => refresh.mutate()}>
            {refresh.isPending ? 'Refreshing…' : 'Refresh'}
          </button>
        </div>
      </div>

      {r.srm?.warning && <SrmBanner srm={r.srm} />}

      {sampleSize.data && <SampleSizeProgress plan={sampleSize.data} />}

      {r.metrics.map((metric) => (
        <section className="card metric-result" key={metric.metric_id} aria-labelledby={`metric-${metric.metric_id}`}>
          <h3 id={`metric-${metric.metric_id}`}>
            {metric.metric_name} {metric.is_primary && <Badge tone="info">primary</Badge>} <span className="hint">({TEST_NAME[metric.test]})</span>
          </h3>
          {metric.definition ? (
            <DefinitionMetricResult metric={metric} definition={metric.definition} confidence={r.confidence_level} />
          ) : (
            <InlineMetricResult metric={metric} confidence={r.confidence_level} />
          )}
        </section>
      ))}

      {r.sequential_testing && <SequentialPanel seq={r.sequential_testing} />}
      {r.bayesian_results && <BayesianPanel bayes={r.bayesian_results} />}
      {hasCovariate && cuped.data && <CupedPanel cuped={cuped.data} />}

      <section className="card">
        <h3>Over time</h3>
        {daily.isPending ? (
          <Loading rows={4} label="Loading daily results" />
        ) : daily.isError ? (
          <ErrorBox error={daily.error} />
        ) : (
          daily.data.metrics
            .filter((m) => m.is_primary)
            .map((m) => (m.days.length === 0 ? <Empty key={m.metric_id} title="No daily data yet." /> : <DailyChart key={m.metric_id} metric={m} />))
        )}
      </section>
    </div>
  );
}

/** A metric typed into the experiment: rate or mean per variant, lift and its interval. */
function InlineMetricResult({ metric, confidence }: { metric: Results['metrics'][number]; confidence: number }) {
  const isConversion = metric.metric_type === 'conversion';
  return (
    <>
      <DataTable headers={['Variant', 'Users', isConversion ? 'Conversions' : 'Events', isConversion ? 'Rate' : 'Mean', 'Lift', `${Math.round(confidence * 100)}% CI of lift`, 'p-value', 'Corrected p', 'Significant']} className="numbers">
        {metric.variants.map((v) => (
          <tr key={v.variant_id}>
            <th scope="row">
              {v.variant_name} {v.is_control && <Badge tone="neutral">control</Badge>}
            </th>
            <td>{v.sample_size.toLocaleString()}</td>
            <td>{v.conversions.toLocaleString()}</td>
            <td>{isConversion ? pct(v.mean, 2) : num(v.mean)}</td>
            <td>{v.is_control ? '—' : pct(v.relative_lift)}</td>
            <td>{v.is_control || !v.confidence_interval ? '—' : `${pct(v.confidence_interval.lower)} to ${pct(v.confidence_interval.upper)}`}</td>
            <td>{v.is_control ? '—' : pValue(v.p_value)}</td>
            <td>{v.is_control ? '—' : pValue(v.adjusted_p_value)}</td>
            <td>{v.is_control ? '—' : v.is_significant ? <Badge tone="success">significant</Badge> : <Badge tone="neutral">not significant</Badge>}</td>
          </tr>
        ))}
      </DataTable>
      <div className="grid-2">
        <RateChart metric={metric} isConversion={isConversion} />
        <LiftChart metric={metric} confidence={confidence} />
      </div>
    </>
  );
}

/**
 * What the recommendation card says. The API judges the data alone, so for an experiment that has ended its
 * CONTINUE_TESTING ("keep collecting data") would ask for data that will never come: say it ended without a clear
 * winner instead.
 */
export function shownVerdict(experiment: Pick<Experiment, 'status' | 'metrics'>, r: Results): { badge: string; rec: { label: string; tone: string }; reason: string } {
  const ended = experiment.status === 'completed' || experiment.status === 'archived';
  if (ended && r.summary.recommendation === 'CONTINUE_TESTING') {
    const primary = experiment.metrics.find((m) => m.is_primary)?.name ?? 'the primary metric';
    return {
      badge: 'NO CLEAR WINNER',
      rec: { label: 'Ended without a clear winner', tone: 'neutral' },
      reason: `The experiment ended before showing a significant difference on ${primary}; it no longer collects data. Clone it to test again with more users.`,
    };
  }
  return { badge: r.summary.recommendation.replace(/_/g, ' '), rec: RECOMMENDATION[r.summary.recommendation], reason: r.summary.recommendation_reason };
}

/** "12 s ago" under a minute (the page refreshes every few seconds, so "just now" would say nothing), else timeAgo's words. */
export function updatedAgo(iso: string, now: number): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  return seconds < 60 ? `${seconds} s ago` : timeAgo(iso, now);
}

/**
 * "Updated 12 s ago": how old the shown numbers are (their computed_at), counting on by itself each second. Its own
 * component, so that the tick redraws this line only.
 */
function UpdatedAgo({ computedAt, dataThrough, live }: { computedAt: string; dataThrough: string | null; live: boolean }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [computedAt]);
  const through = dataThrough ? `; includes data through ${new Date(dataThrough).toLocaleTimeString()}` : '';
  return (
    <span className="updated-ago" title={`Computed at ${new Date(computedAt).toLocaleString()}${through}${live ? '; refreshes itself while this page is open' : ''}`}>
      Updated <time dateTime={computedAt}>{updatedAgo(computedAt, now)}</time>
    </span>
  );
}

/** Beside a decision reached before the planned sample: the numbers, and why an early result deserves caution. */
function EarlyCaveat({ recommendation, plan }: { recommendation: Results['summary']['recommendation']; plan: SampleSize }) {
  const required = plan.required_sample_size_per_variant;
  if ((recommendation !== 'SHIP_VARIANT' && recommendation !== 'KEEP_CONTROL') || !required || plan.is_adequate) return null;
  return (
    <p className="caveat" role="note">
      <strong>Below the planned sample size:</strong> {plan.current_sample_size_per_variant.toLocaleString()} of {required.toLocaleString()} users per variant.
      Effects found this early are often smaller than they look; consider waiting for the planned sample before acting.
    </p>
  );
}

function SrmBanner({ srm }: { srm: NonNullable<Results['srm']> }) {
  return (
    <div className="alert alert-warning" role="alert">
      <p>
        <strong>Sample ratio mismatch.</strong> Users did not split between variants the way the allocation says they should (chi-square p ={' '}
        {pValue(srm.p_value)}, below the {srm.threshold} threshold). This usually means a bug in assignment or tracking (for example, one variant
        loses events or redirects drop users), so the numbers below may be biased and the recommendation is Inconclusive until the cause is fixed.
      </p>
      <ul>
        {srm.variants.map((v) => (
          <li key={v.variant_id}>
            {v.variant_name}: {v.observed.toLocaleString()} users observed, {Math.round(v.expected).toLocaleString()} expected ({v.allocation}%)
          </li>
        ))}
      </ul>
    </div>
  );
}

function SampleSizeProgress({ plan }: { plan: SampleSize }) {
  const required = plan.required_sample_size_per_variant;
  const share = required ? Math.min(1, plan.current_sample_size_per_variant / required) : 0;
  return (
    <section className="card">
      <h3>Sample size</h3>
      {required ? (
        <>
          <label className="progress-label" htmlFor="sample-progress">
            {plan.current_sample_size_per_variant.toLocaleString()} of {required.toLocaleString()} users per variant needed to detect a {pct(plan.mde, 0)} relative
            change with {pct(plan.power_target, 0)} power {plan.is_adequate ? '— reached' : ''}
          </label>
          <progress id="sample-progress" max={1} value={share}>
            {pct(share, 0)}
          </progress>
          {plan.guide_only_reasons.length > 0 && <p className="hint">Guide only: {plan.guide_only_reasons.join(', ').replace(/_/g, ' ')}.</p>}
        </>
      ) : (
        <p className="hint">No sample-size plan yet ({(plan.unavailable_reason ?? 'unavailable').replace(/_/g, ' ')}).</p>
      )}
    </section>
  );
}

function SequentialPanel({ seq }: { seq: NonNullable<Results['sequential_testing']> }) {
  return (
    <section className="card">
      <h3>
        Sequential test <span className="hint">(always-valid, α = {seq.alpha})</span>
      </h3>
      <p>
        Early stopping: <Badge tone={seq.early_stop_recommendation === 'CONTINUE' ? 'neutral' : seq.early_stop_recommendation === 'STOP_FOR_HARM' ? 'danger' : 'success'}>{seq.early_stop_recommendation.replace(/_/g, ' ')}</Badge>
        {seq.at_risk && <> · <Badge tone="warning">at risk</Badge></>}
      </p>
      <DataTable headers={['Variant', 'Difference', 'Confidence sequence', 'Always-valid p', 'Can stop']} className="numbers">
        {seq.comparisons.map((c) => (
          <tr key={c.variant_id}>
            <th scope="row">{c.variant_name}</th>
            <td>{num(c.difference, 4)}</td>
            <td>{c.confidence_sequence ? `${num(c.confidence_sequence.lower, 4)} to ${num(c.confidence_sequence.upper, 4)}` : '—'}</td>
            <td>{pValue(c.always_valid_p_value)}</td>
            <td>{c.can_stop ? 'yes' : 'no'}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

function BayesianPanel({ bayes }: { bayes: NonNullable<Results['bayesian_results']> }) {
  return (
    <section className="card">
      <h3>
        Bayesian analysis <span className="hint">({bayes.metric_name}, {Math.round(bayes.credible_level * 100)}% credible intervals)</span>
      </h3>
      <p>
        Decision: <Badge tone={bayes.bayesian_decision === 'STOP_WINNER' ? 'success' : 'neutral'}>{bayes.bayesian_decision.replace(/_/g, ' ')}</Badge>{' '}
        <span className="hint">(loss threshold {bayes.loss_threshold})</span>
      </p>
      <DataTable headers={['Variant', 'Probability to beat control', 'Expected loss', 'Posterior mean', 'Credible interval']} className="numbers">
        {bayes.variants.map((v) => (
          <tr key={v.variant_id}>
            <th scope="row">{v.variant_name}</th>
            <td>{v.is_control ? '—' : pct(v.prob_beat_control)}</td>
            <td>{num(v.expected_loss, 5)}</td>
            <td>{pct(v.posterior_mean, 2)}</td>
            <td>{v.credible_interval ? `${pct(v.credible_interval.lower, 2)} to ${pct(v.credible_interval.upper, 2)}` : '—'}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}

function CupedPanel({ cuped }: { cuped: Cuped }) {
  return (
    <section className="card">
      <h3>
        CUPED <span className="hint">(covariate: {cuped.covariate_metric_name ?? 'none'}; {cuped.analysis_notice})</span>
      </h3>
      {cuped.unavailable_reason ? (
        <p className="hint">Not computable: {cuped.unavailable_reason.replace(/_/g, ' ')}.</p>
      ) : (
        cuped.metrics.map((m) => (
          <DataTable key={m.metric_id} headers={['Variant', 'Adjusted effect', 'Unadjusted', 'Variance reduction', 'Users with history', 'Corrected p']} className="numbers" caption={m.metric_name}>
            {m.comparisons.map((c) => (
              <tr key={c.variant_id}>
                <th scope="row">{c.variant_name}</th>
                <td>{c.unavailable_reason ? c.unavailable_reason.replace(/_/g, ' ') : num(c.adjusted_effect, 4)}</td>
                <td>{num(c.unadjusted_effect, 4)}</td>
                <td>{pct(c.variance_reduction)}</td>
                <td>{pct(c.share_with_history)}</td>
                <td>{pValue(c.corrected_p_value)}</td>
              </tr>
            ))}
          </DataTable>
        ))
      )}
    </section>
  );
}
