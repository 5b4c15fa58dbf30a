import { Bar, BarChart, CartesianGrid, Cell, Legend, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { Empty } from '../../components/ui';
import type { DailyResults, Results } from './hooks';

type MetricResult = Results['metrics'][number];
const COLORS = ['#4b5563', '#2563eb', '#d97706', '#7c3aed', '#0f766e', '#be123c'];
export const asPercent = (v: number) => `${(v * 100).toFixed(1)}%`;

/** Rows for the lift chart: a treatment's interval (drawn as a range bar) and its point estimate. */
export function liftRows(metric: MetricResult) {
  return metric.variants
    .filter((v) => !v.is_control && v.relative_lift !== null && v.relative_lift !== undefined)
    .map((v) => {
      const lift = v.relative_lift as number;
      const ci = v.confidence_interval;
      return { name: v.variant_name, lift, range: ci ? [ci.lower, ci.upper] : [lift, lift], significant: v.is_significant };
    });
}

/** Whether any variant has users yet: without them there is nothing to draw. */
export function hasUsers(metric: MetricResult): boolean {
  return metric.variants.some((v) => v.sample_size > 0);
}

/**
 * The top of the value axis. Left to itself the chart library draws 0 to 4 (0 to 400 %) when every value is 0;
 * a rate with no conversions yet gets 0 to 1 % instead, a mean 0 to 1.
 */
export function valueAxisMax(max: number, isConversion: boolean): number {
  if (Number.isFinite(max) && max > 0) return isConversion ? Math.min(1, max * 1.15) : max * 1.15;
  return isConversion ? 0.01 : 1;
}

/** The lift axis: every interval and 0 in view, with a margin; a ±10 % window when all of them are 0 wide at 0. */
export function liftDomain(rows: ReadonlyArray<{ lift: number; range: number[] }>): [number, number] {
  const values = rows.flatMap((r) => [r.lift, ...r.range]).filter(Number.isFinite);
  const low = Math.min(0, ...values);
  const high = Math.max(0, ...values);
  if (high - low < 1e-9) return [-0.1, 0.1];
  const pad = (high - low) * 0.1;
  return [low - pad, high + pad];
}

interface IntervalShapeProps {
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  payload?: IntervalRow;
  higherIsBetter?: boolean;
}

const TONE_FILL = { better: '#15803d', worse: '#b91c1c', neutral: '#9ca3af' } as const;

/** Green for a significant change the good way, red the bad way (for a metric where lower is better, a rise is bad). */
export function intervalTone(row: Pick<IntervalRow, 'lift' | 'significant'>, higherIsBetter = true): keyof typeof TONE_FILL {
  if (!row.significant || row.lift === 0) return 'neutral';
  return row.lift > 0 === higherIsBetter ? 'better' : 'worse';
}

/** The interval as a bar from lower to upper bound, with a tick at the estimated lift. */
function IntervalShape({ x = 0, y = 0, width = 0, height = 0, payload, higherIsBetter }: IntervalShapeProps) {
  if (!payload) return null;
  const [lower, upper] = payload.range;
  const span = upper - lower;
  const at = span > 0 ? x + (width * (payload.lift - lower)) / span : x;
  const fill = TONE_FILL[intervalTone(payload, higherIsBetter)];
  return (
    <g className="interval">
      <rect x={x} y={y + height * 0.25} width={Math.max(width, 2)} height={height * 0.5} rx={3} fill={fill} fillOpacity={0.35} stroke={fill} />
      <line x1={at} x2={at} y1={y} y2={y + height} stroke="#111827" strokeWidth={3} />
    </g>
  );
}

export function RateChart({ metric, isConversion }: { metric: MetricResult; isConversion: boolean }) {
  const data = metric.variants.map((v) => ({ name: v.variant_name, value: v.mean ?? 0 }));
  const top = valueAxisMax(Math.max(...data.map((d) => d.value)), isConversion);
  return (
    <figure className="chart" aria-label={`${metric.metric_name}: ${isConversion ? 'conversion rate' : 'mean'} by variant`}>
      <figcaption>{isConversion ? 'Conversion rate' : 'Mean'} by variant</figcaption>
      {!hasUsers(metric) ? (
        <Empty title="No users yet.">The chart appears once users are assigned to the variants.</Empty>
      ) : (
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={data} margin={{ top: 8, right: 16, bottom: 8, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="name" />
          <YAxis tickFormatter={isConversion ? asPercent : undefined} width={56} domain={[0, top]} allowDataOverflow={false} />
          <Tooltip formatter={(v) => (isConversion ? asPercent(Number(v)) : Number(v).toFixed(3))} />
          <Bar dataKey="value" name={isConversion ? 'Conversion rate' : 'Mean'} isAnimationActive={false}>
            {data.map((_, i) => (
              <Cell key={i} fill={COLORS[i % COLORS.length]} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
      )}
    </figure>
  );
}

export function LiftChart({ metric, confidence }: { metric: MetricResult; confidence: number }) {
  const control = metric.variants.find((v) => v.is_control);
  return (
    <IntervalChart
      label={`${metric.metric_name}: lift against control with ${Math.round(confidence * 100)}% confidence interval`}
      caption={`Lift against control, with ${Math.round(confidence * 100)}% confidence interval`}
      rows={control?.mean ? liftRows(metric) : []}
      format={asPercent}
      name="Lift"
      empty={`Lift is measured against the control, so it appears once the control has ${control && control.sample_size > 0 ? 'conversions' : 'users'}.`}
    />
  );
}

export type IntervalRow = ReturnType<typeof liftRows>[number];

/**
 * Each treatment's estimate against the control drawn as a range bar over its confidence interval, with a tick at
 * the estimate and a line at 0 (the lift chart, and the difference charts of metric library results).
 */
export function IntervalChart({
  label,
  caption,
  rows,
  format,
  name,
  empty,
  higherIsBetter = true,
}: {
  label: string;
  caption: string;
  rows: IntervalRow[];
  format(v: number): string;
  name: string;
  empty: string;
  higherIsBetter?: boolean;
}) {
  if (rows.length === 0) {
    return (
      <figure className="chart" aria-label={label}>
        <figcaption>{caption}</figcaption>
        <Empty title={`No ${name.toLowerCase()} to show yet.`}>{empty}</Empty>
      </figure>
    );
  }
  return (
    <figure className="chart" aria-label={label}>
      <figcaption>{caption}</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={rows} layout="vertical" margin={{ top: 8, right: 24, bottom: 8, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" horizontal={false} />
          <XAxis type="number" tickFormatter={format} domain={liftDomain(rows)} />
          <YAxis type="category" dataKey="name" width={96} />
          <ReferenceLine x={0} stroke="#111827" />
          <Tooltip
            formatter={(_v, _n, item) => {
              const row = item.payload as IntervalRow;
              return [`${format(row.lift)} (${format(row.range[0])} to ${format(row.range[1])})`, name];
            }}
          />
          <Bar dataKey="range" name={name} isAnimationActive={false} barSize={28} shape={<IntervalShape higherIsBetter={higherIsBetter} />} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  );
}

type DailyMetric = DailyResults['metrics'][number];

/** One line per variant: the cumulative mean (or rate) at the end of each day. */
export function dailyRows(metric: DailyMetric) {
  return metric.days.map((day) => {
    const row: Record<string, string | number | null> = { date: day.date };
    for (const v of day.variants) row[v.variant_name] = v.mean ?? null;
    return row;
  });
}

/**
 * What a daily line measures: a metric naming a library definition by its kind (its metric_type is not what is
 * analysed), an inline metric by its type.
 */
export function dailyMeasure(metric: DailyMetric): { label: string; percent: boolean } {
  switch (metric.definition?.kind) {
    case 'proportion': return { label: 'share of users with an event', percent: true };
    case 'mean': return { label: 'mean per user', percent: false };
    case 'ratio': return { label: 'ratio', percent: false };
    case 'quantile': return { label: 'quantile of per-user values', percent: false };
    default: return metric.metric_type === 'conversion' ? { label: 'conversion rate', percent: true } : { label: 'mean', percent: false };
  }
}

export function DailyChart({ metric }: { metric: DailyMetric }) {
  const { label, percent } = dailyMeasure(metric);
  const names = Array.from(new Set(metric.days.flatMap((d) => d.variants.map((v) => v.variant_name))));
  const data = dailyRows(metric);
  const top = valueAxisMax(Math.max(...metric.days.flatMap((d) => d.variants.map((v) => v.mean ?? 0))), percent);
  return (
    <figure className="chart" aria-label={`${metric.metric_name}: daily cumulative ${label}`}>
      <figcaption>Daily cumulative {label}</figcaption>
      <ResponsiveContainer width="100%" height={240}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 8, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="date" />
          <YAxis tickFormatter={percent ? asPercent : undefined} width={56} domain={[0, top]} />
          <Tooltip formatter={(v) => (percent ? asPercent(Number(v)) : Number(v).toFixed(3))} />
          <Legend />
          {names.map((name, i) => (
            <Line key={name} type="monotone" dataKey={name} stroke={COLORS[i % COLORS.length]} strokeWidth={2} dot={data.length < 20} isAnimationActive={false} connectNulls />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}
