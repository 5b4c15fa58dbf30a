import { useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../../api/client';
import { FormError, Select, TextArea, TextField, fieldError } from '../../components/form';
import { ErrorBox, Loading, PageHeader, dateTime } from '../../components/ui';
import { Link, useRouter } from '../../router';
import { useSession } from '../auth/session';
import { KIND_HINT, KIND_LABEL, bodyOf, draftOf, draftProblems, emptyDraft, takesCapping, type Aggregate, type CappingType, type DefinitionDraft, type EventDraft } from './draft';
import { KindBadge } from './MetricLibrary';
import {
  useCreateMetricDefinition,
  useDeleteMetricDefinition,
  useMetricDefinition,
  useUpdateMetricDefinition,
  type MetricDefinition,
  type MetricKind,
} from './hooks';

const AGGREGATES: ReadonlyArray<readonly [Aggregate, string]> = [
  ['sum', 'Sum of event values'],
  ['count', 'Count of events'],
];
/** Every field the form shows an error at; the API's other messages go to the box above the buttons. */
const SHOWN = ['name', 'description', 'kind', 'event_name', 'aggregate', 'numerator', 'denominator', 'quantile', 'capping', 'higher_is_better', 'tags', 'owner'];

export function NewMetricDefinition() {
  const { navigate } = useRouter();
  const create = useCreateMetricDefinition();
  return (
    <section>
      <PageHeader title="New metric" />
      <DefinitionForm
        initial={emptyDraft()}
        error={create.error}
        pending={create.isPending}
        submitLabel="Create metric"
        onSubmit={(draft) => create.mutate(bodyOf(draft, false), { onSuccess: (saved) => navigate(`/metrics/${saved.id}`) })}
        onCancel={() => navigate('/metrics')}
      />
    </section>
  );
}

export function MetricDefinitionPage({ id }: { id: string }) {
  const definition = useMetricDefinition(id);
  if (definition.isPending) return <Loading rows={6} label="Loading metric" />;
  if (definition.isError) return <ErrorBox error={definition.error} />;
  return <DefinitionView key={definition.data.id} definition={definition.data} />;
}

function DefinitionView({ definition: d }: { definition: MetricDefinition }) {
  const { permissions } = useSession();
  const { navigate } = useRouter();
  const update = useUpdateMetricDefinition(d.id);
  const remove = useDeleteMetricDefinition(d.id);
  const canChange = permissions.canChangeMetrics;
  return (
    <section>
      <PageHeader
        title={d.name}
        actions={
          canChange && (
            <button type="button" className="danger" disabled={remove.isPending} onClick={() => window.confirm(`Delete “${d.name}”?`) && remove.mutate(undefined, { onSuccess: () => navigate('/metrics') })}>
              Delete
            </button>
          )
        }
      />
      <p className="meta">
        <KindBadge kind={d.kind} /> version {d.version} · owner {d.owner ?? '—'} · updated {dateTime(d.updated_at)}
      </p>
      {remove.isError && <DeleteError error={remove.error} />}
      {update.isSuccess && (
        <p className="alert alert-success" role="status">
          Saved as version {d.version}.
        </p>
      )}
      <DefinitionForm
        key={d.version}
        initial={draftOf(d)}
        readOnly={!canChange}
        error={update.error}
        pending={update.isPending}
        submitLabel="Save metric"
        note="Saving a change adds one to the version; experiments that use this metric are analysed with the new definition from their next computation."
        onSubmit={(draft) => update.mutate(bodyOf(draft, true))}
      />
    </section>
  );
}

interface InUse {
  code?: string;
  experiments?: Array<{ id: string; name: string; status: string }>;
}

/** A delete refused: a 409 in use names the running experiments, with links, in words. */
export function DeleteError({ error }: { error: unknown }) {
  const detail = error instanceof ApiError && error.status === 409 ? (error.detail as InUse | undefined) : undefined;
  if (detail?.code !== 'metric_definition_in_use' || !detail.experiments?.length) return <FormError error={error} />;
  const many = detail.experiments.length > 1;
  return (
    <div className="alert alert-error" role="alert">
      <p>
        This metric cannot be deleted: {many ? 'these running experiments use it' : 'a running experiment uses it'}. Complete {many ? 'them' : 'it'} or remove the metric from{' '}
        {many ? 'them' : 'it'} first.
      </p>
      <ul>
        {detail.experiments.map((e) => (
          <li key={e.id}>
            <Link to={`/experiments/${e.id}`}>{e.name}</Link> ({e.status})
          </li>
        ))}
      </ul>
    </div>
  );
}

function DefinitionForm({
  initial,
  readOnly = false,
  error,
  pending,
  submitLabel,
  note,
  onSubmit,
  onCancel,
}: {
  initial: DefinitionDraft;
  readOnly?: boolean;
  error: unknown;
  pending: boolean;
  submitLabel: string;
  note?: string;
  onSubmit(draft: DefinitionDraft): void;
  onCancel?(): void;
}) {
  const [draft, setDraft] = useState(initial);
  const [attempted, setAttempted] = useState(false);
  const problems = draftProblems(draft);
  // Checked live once the user has tried to save, so fixing a field clears its message at once.
  const err = (key: string) => (attempted ? problems?.[key] : undefined) ?? fieldError(error, key);
  const set = (patch: Partial<DefinitionDraft>) => setDraft({ ...draft, ...patch });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setAttempted(true);
    if (!problems) onSubmit(draft);
  };
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="Metric definition">
      <fieldset disabled={readOnly} className="plain-fieldset">
        <div className="grid-2">
          <TextField label="Name" required value={draft.name} error={err('name')} onChange={(e) => set({ name: e.target.value })} />
          <Select
            label="Kind"
            value={draft.kind}
            error={err('kind')}
            hint={KIND_HINT[draft.kind]}
            options={(Object.keys(KIND_LABEL) as MetricKind[]).map((k) => [k, KIND_LABEL[k]] as const)}
            onChange={(e) => set({ kind: e.target.value as MetricKind })}
          />
        </div>
        <TextArea label="Description" rows={2} value={draft.description} error={err('description')} onChange={(e) => set({ description: e.target.value })} />
        {draft.kind === 'ratio' ? (
          <div className="grid-2">
            <EventAggregateFields legend="Numerator" value={draft.numerator} onChange={(numerator) => set({ numerator })} err={(f) => err(`numerator.${f}`) ?? (f === 'event_name' ? err('numerator') : undefined)} />
            <EventAggregateFields legend="Denominator" value={draft.denominator} onChange={(denominator) => set({ denominator })} err={(f) => err(`denominator.${f}`) ?? (f === 'event_name' ? err('denominator') : undefined)} />
          </div>
        ) : (
          <div className="grid-2">
            <TextField label="Event name" value={draft.event_name} error={err('event_name')} hint="The tracked event's name, as sent to POST /tracking/track" onChange={(e) => set({ event_name: e.target.value })} />
            {draft.kind !== 'proportion' && (
              <Select label="Per-user value" value={draft.aggregate} error={err('aggregate')} options={AGGREGATES} onChange={(e) => set({ aggregate: e.target.value as Aggregate })} />
            )}
          </div>
        )}
        {draft.kind === 'quantile' && (
          <TextField label="Quantile p" type="number" step="any" inputMode="decimal" value={draft.quantile} hint="Between 0 and 1: 0.5 for the median, 0.9 for p90" error={err('quantile')} onChange={(e) => set({ quantile: e.target.value })} />
        )}
        {takesCapping(draft.kind) && (
          <div className="grid-2">
            <Select
              label="Capping"
              value={draft.capping}
              error={err('capping')}
              hint="Outliers are capped per user before means and ratios (a ratio's numerator)."
              options={[
                ['none', 'No capping'],
                ['absolute', 'Absolute cap per user'],
                ['percentile', 'Percentile cap (pooled over variants)'],
              ]}
              onChange={(e) => set({ capping: e.target.value as CappingType })}
            />
            {draft.capping === 'absolute' && (
              <TextField label="Cap per user" type="number" step="any" inputMode="decimal" value={draft.cap_value} error={err('capping.value')} onChange={(e) => set({ cap_value: e.target.value })} />
            )}
            {draft.capping === 'percentile' && (
              <TextField label="Capping percentile p" type="number" step="any" inputMode="decimal" value={draft.cap_p} hint="Between 0 and 1, e.g. 0.999" error={err('capping.p')} onChange={(e) => set({ cap_p: e.target.value })} />
            )}
          </div>
        )}
        <label className="inline checkbox">
          <input type="checkbox" checked={draft.higher_is_better} onChange={(e) => set({ higher_is_better: e.target.checked })} /> Higher is better
        </label>
        <div className="grid-2">
          <TextField label="Tags" value={draft.tags} hint="Comma-separated, e.g. revenue, checkout" error={err('tags')} onChange={(e) => set({ tags: e.target.value })} />
          <TextField label="Owner" value={draft.owner} hint="Who answers for the metric; empty on create means you" error={err('owner')} onChange={(e) => set({ owner: e.target.value })} />
        </div>
      </fieldset>
      {attempted && problems && (
        <p className="field-error" role="alert">
          Some fields need attention.
        </p>
      )}
      <FormError error={error} shown={SHOWN} />
      {!readOnly && (
        <>
          {note && <p className="hint">{note}</p>}
          <div className="row">
            <button type="submit" disabled={pending}>
              {pending ? 'Saving…' : submitLabel}
            </button>
            {onCancel && (
              <button type="button" className="secondary" onClick={onCancel}>
                Cancel
              </button>
            )}
          </div>
        </>
      )}
      {readOnly && <p className="hint">Read only: an analyst, developer or administrator can edit the metric library.</p>}
    </form>
  );
}

function EventAggregateFields({ legend, value, onChange, err }: { legend: string; value: EventDraft; onChange(next: EventDraft): void; err(field: string): string | undefined }): ReactNode {
  return (
    <fieldset className="plain-fieldset event-aggregate">
      <legend>{legend}</legend>
      <TextField label={`${legend} event`} value={value.event_name} error={err('event_name')} onChange={(e) => onChange({ ...value, event_name: e.target.value })} />
      <Select label={`${legend} per-user value`} value={value.aggregate} error={err('aggregate')} options={AGGREGATES} onChange={(e) => onChange({ ...value, aggregate: e.target.value as Aggregate })} />
    </fieldset>
  );
}
