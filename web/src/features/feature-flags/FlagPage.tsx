import { Badge, ErrorBox, Loading, PageHeader } from '../../components/ui';
import { Link, useRouter } from '../../router';
import { useSession } from '../auth/session';
import { EnvironmentSwitcher } from '../environments/EnvironmentSwitcher';
import { useSelectedEnvironment } from '../environments/hooks';
import { CopyToEnvironment } from './CopyToEnvironment';
import { SchedulesPanel } from '../rollout-schedules/SchedulesPanel';
import { SafetyStatus } from '../safety/SafetyStatus';
import { CodeSnippets } from '../snippets/CodeSnippets';
import { EvaluatePanel } from './EvaluatePanel';
import { FlagEditor } from './FlagEditor';
import { FLAG_TONE, ValueTypeBadge } from './FlagsList';
import { FlagSwitch } from './FlagSwitch';
import { useArchiveFlag, useDeleteFlag, useFlag, useUnarchiveFlag } from './hooks';

export function FlagPage({ id }: { id: string }) {
  const { permissions } = useSession();
  const { navigate } = useRouter();
  const environments = useSelectedEnvironment();
  const flag = useFlag(id, environments.param, environments.ready);
  const archive = useArchiveFlag(environments.param);
  const unarchive = useUnarchiveFlag(environments.param);
  const remove = useDeleteFlag();
  if (flag.isPending) return <Loading rows={6} label="Loading flag" />;
  if (flag.isError) return <ErrorBox error={flag.error} />;
  const f = flag.data;
  const error = archive.error ?? unarchive.error ?? remove.error;
  const shown = environments.several ? environments.selected : undefined;
  return (
    <section>
      <PageHeader
        title={f.name}
        actions={
          <>
            <EnvironmentSwitcher />
            <FlagSwitch flag={f} canChange={permissions.canChange} environment={shown} />
            <Link className="button secondary" to={`/flags/${f.id}/history`}>
              History
            </Link>
            {permissions.canChange &&
              (f.status === 'archived' ? (
                <button type="button" className="secondary" onClick={() => unarchive.mutate(f.id)}>
                  Unarchive
                </button>
              ) : (
                <button type="button" className="secondary" onClick={() => window.confirm(`Archive “${f.name}”?`) && archive.mutate(f.id)}>
                  Archive
                </button>
              ))}
            {permissions.canChange && (
              <button
                type="button"
                className="danger"
                onClick={() => window.confirm(`Delete “${f.name}” for good?`) && remove.mutate(f.id, { onSuccess: () => navigate('/flags') })}
              >
                Delete
              </button>
            )}
          </>
        }
      />
      <p className="meta">
        {shown && <>In <strong>{shown.name}</strong>: </>}
        <Badge tone={FLAG_TONE[f.status]}>{f.status}</Badge> <code>{f.key}</code> · rollout {f.rollout_percentage}%
        {f.value_type && f.value_type !== 'boolean' && (
          <>
            {' '}· <ValueTypeBadge flag={f} /> {f.variations?.length ?? 0} variations
          </>
        )}
      </p>
      {error && <ErrorBox error={error} />}
      <div className="grid-2 flag-layout">
        <FlagEditor
          key={`${environments.param ?? ''}:${f.updated_at}`}
          flag={f}
          readOnly={!permissions.canChange}
          environment={{ param: environments.param, name: shown?.name }}
        />
        <div>
          {environments.several && permissions.canChange && <CopyToEnvironment flag={f} environments={environments.all} selected={shown?.key} />}
          <EvaluatePanel flag={f} />
          <CodeSnippets target={{ kind: 'flag', key: f.key }} />
          <SafetyStatus flagId={f.id} />
          <SchedulesPanel flagId={f.id} canChange={permissions.canChange} />
        </div>
      </div>
    </section>
  );
}

export function NewFlag() {
  const environments = useSelectedEnvironment();
  const shown = environments.several ? environments.selected : undefined;
  return (
    <section>
      <PageHeader title="New feature flag" actions={<EnvironmentSwitcher />} />
      <FlagEditor environment={{ param: environments.param, name: shown?.name }} />
    </section>
  );
}
