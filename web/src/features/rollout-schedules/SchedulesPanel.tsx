import { useState, type FormEvent } from 'react';
import { FormError, TextField, fieldError } from '../../components/form';
import { Badge, ErrorBox, Loading, dateTime } from '../../components/ui';
import { useCreateSchedule, useScheduleAction, useSchedules, type ScheduleAction } from './hooks';

interface StageDraft {
  percentage: string;
  at: string;
}

const ACTIONS: Record<string, ScheduleAction[]> = { draft: ['activate', 'cancel'], active: ['pause', 'cancel'], paused: ['activate', 'cancel'] };

/** A flag's rollout schedules: stages that raise the rollout percentage at set times, and their controls. */
export function SchedulesPanel({ flagId, canChange }: { flagId: string; canChange: boolean }) {
  const schedules = useSchedules(flagId);
  const create = useCreateSchedule(flagId);
  const act = useScheduleAction(flagId);
  const [name, setName] = useState('Gradual rollout');
  const [stages, setStages] = useState<StageDraft[]>([
    { percentage: '10', at: '' },
    { percentage: '50', at: '' },
    { percentage: '100', at: '' },
  ]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({
      flag_id: flagId,
      name,
      stages: stages.map((s) => ({ percentage: Number(s.percentage), scheduled_at: s.at ? new Date(s.at).toISOString() : null })),
    });
  };
  return (
    <section className="card" aria-labelledby="schedules-title">
      <h2 id="schedules-title">Rollout schedules</h2>
      {schedules.isPending ? (
        <Loading rows={2} label="Loading schedules" />
      ) : schedules.isError ? (
        <ErrorBox error={schedules.error} />
      ) : schedules.data.items.length === 0 ? (
        <p className="hint">No schedule: the rollout changes only when someone edits it.</p>
      ) : (
        schedules.data.items.map((s) => (
          <div key={s.id} className="schedule">
            <p>
              <strong>{s.name}</strong> <Badge tone={s.status === 'active' ? 'success' : s.status === 'cancelled' ? 'muted' : 'neutral'}>{s.status}</Badge>
            </p>
            <ol>
              {s.stages.map((stage) => (
                <li key={stage.id}>
                  {stage.percentage}% · {stage.scheduled_at ? dateTime(stage.scheduled_at) : 'advanced by hand'} · {stage.status}
                  {stage.applied_at ? ` (applied ${dateTime(stage.applied_at)})` : ''}
                </li>
              ))}
            </ol>
            {canChange && (
              <div className="row">
                {(ACTIONS[s.status] ?? []).map((action) => (
                  <button key={action} type="button" className="secondary" disabled={act.isPending} onClick={() => act.mutate({ id: s.id, action })}>
                    {action === 'activate' ? (s.status === 'paused' ? 'Resume' : 'Activate') : action === 'pause' ? 'Pause' : 'Cancel schedule'}
                  </button>
                ))}
              </div>
            )}
          </div>
        ))
      )}
      {act.isError && <ErrorBox error={act.error} />}
      {canChange && (
        <details>
          <summary>Add a schedule</summary>
          <form onSubmit={submit} noValidate>
            <TextField label="Schedule name" value={name} error={fieldError(create.error, 'name')} onChange={(e) => setName(e.target.value)} />
            {stages.map((stage, i) => (
              <div className="row" key={i}>
                <TextField
                  label={`Stage ${i + 1} percentage`}
                  type="number"
                  min={0}
                  max={100}
                  value={stage.percentage}
                  error={fieldError(create.error, `stages.${i}.percentage`)}
                  onChange={(e) => setStages(stages.map((s, j) => (j === i ? { ...s, percentage: e.target.value } : s)))}
                />
                <TextField
                  label="At (optional)"
                  type="datetime-local"
                  value={stage.at}
                  error={fieldError(create.error, `stages.${i}.scheduled_at`)}
                  onChange={(e) => setStages(stages.map((s, j) => (j === i ? { ...s, at: e.target.value } : s)))}
                />
                <button type="button" className="icon" aria-label={`Remove stage ${i + 1}`} onClick={() => setStages(stages.filter((_, j) => j !== i))}>
                  ×
                </button>
              </div>
            ))}
            <div className="row">
              <button type="button" className="secondary" onClick={() => setStages([...stages, { percentage: '100', at: '' }])}>
                + Add stage
              </button>
              <button type="submit" disabled={create.isPending}>
                Create schedule
              </button>
            </div>
            <FormError error={create.error} shown={['name', 'stages']} />
          </form>
        </details>
      )}
    </section>
  );
}
