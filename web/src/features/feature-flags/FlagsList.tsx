import { useState } from 'react';
import { Badge, Empty, ErrorBox, Loading, PageHeader, StatusFilter, dateTime, plural } from '../../components/ui';
import { Link } from '../../router';
import { useSession } from '../auth/session';
import { EnvironmentName, EnvironmentSwitcher } from '../environments/EnvironmentSwitcher';
import { useSelectedEnvironment } from '../environments/hooks';
import { FlagSwitch } from './FlagSwitch';
import { useArchiveFlag, useFlags, useUnarchiveFlag, type Flag, type FlagStatusFilter } from './hooks';

export const FLAG_TONE = { active: 'success', inactive: 'neutral', archived: 'muted' } as const;

/** The value type of a typed flag (string, number, json); boolean flags show none. */
export function ValueTypeBadge({ flag }: { flag: Pick<Flag, 'value_type'> }) {
  if (!flag.value_type || flag.value_type === 'boolean') return null;
  return (
    <span title={`Serves ${flag.value_type} values`}>
      <Badge tone="info">{flag.value_type}</Badge>
    </span>
  );
}

export function FlagsList() {
  const { permissions } = useSession();
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<FlagStatusFilter | ''>('');
  const [showArchived, setShowArchived] = useState(false);
  const environments = useSelectedEnvironment();
  // With several environments, one switch per environment (as Unleash shows them); status, rollout and the
  // archive actions are the selected environment's.
  const columns = environments.several ? environments.all : [];
  const flags = useFlags({ ...(search.trim() ? { search: search.trim() } : {}), ...(status ? { status } : {}) }, environments.param, environments.ready);
  // Archived flags stay out of the default list; the status filter or "Show archived" brings them back.
  const all = flags.data?.items ?? [];
  const items = status || showArchived ? all : all.filter((f) => f.status !== 'archived');
  const hidden = all.length - items.length;
  const archive = useArchiveFlag(environments.param);
  const unarchive = useUnarchiveFlag(environments.param);
  return (
    <section>
      <PageHeader title="Feature flags" actions={permissions.canChange && <Link className="button" to="/flags/new">New flag</Link>} />
      <div className="toolbar" role="search">
        <label>
          <span className="visually-hidden">Search flags</span>
          <input type="search" placeholder="Search name or key" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <EnvironmentSwitcher />
        <StatusFilter value={status} statuses={['ACTIVE', 'INACTIVE', 'ARCHIVED'] as const} onChange={setStatus} />
        {!status && (
          <label className="inline checkbox">
            <input type="checkbox" checked={showArchived} onChange={(e) => setShowArchived(e.target.checked)} /> Show archived
          </label>
        )}
      </div>
      {(archive.error || unarchive.error) && <ErrorBox error={archive.error ?? unarchive.error} />}
      {flags.isPending ? (
        <Loading rows={5} label="Loading flags" />
      ) : flags.isError ? (
        <ErrorBox error={flags.error} />
      ) : items.length === 0 ? (
        <Empty title={search || status ? 'No flag matches these filters.' : hidden > 0 ? 'Every flag here is archived.' : 'No feature flags yet.'}>
          {hidden > 0 ? (
            <button type="button" className="link" onClick={() => setShowArchived(true)}>
              Show {plural(hidden, 'archived flag')}
            </button>
          ) : (
            permissions.canChange && !search && !status && <Link to="/flags/new">Create your first flag</Link>
          )}
        </Empty>
      ) : (
        <div className="table-wrap">
          <p className="hint list-count">
            {plural(items.length, 'flag')}
            {hidden > 0 ? ` (${plural(hidden, 'archived flag')} hidden)` : ''}
          </p>
          <table>
            <caption className="visually-hidden">{plural(items.length, 'flag')}</caption>
            <thead>
              <tr>
                {columns.length > 0 ? (
                  columns.map((environment) => (
                    <th key={environment.key} scope="col">
                      <EnvironmentName environment={environment} />
                    </th>
                  ))
                ) : (
                  <th>On</th>
                )}
                <th>Name</th>
                <th>Key</th>
                <th>Status{environments.several && environments.selected ? ` (${environments.selected.name})` : ''}</th>
                <th>Rollout{environments.several && environments.selected ? ` (${environments.selected.name})` : ''}</th>
                <th>Updated</th>
                {permissions.canChange && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {items.map((flag) => (
                <tr key={flag.id}>
                  {columns.length > 0 ? (
                    columns.map((environment) => (
                      <td key={environment.key}>
                        <FlagSwitch flag={flag} canChange={permissions.canChange} environment={environment} />
                      </td>
                    ))
                  ) : (
                    <td>
                      <FlagSwitch flag={flag} canChange={permissions.canChange} />
                    </td>
                  )}
                  <td>
                    <Link to={`/flags/${flag.id}`}>{flag.name}</Link> <ValueTypeBadge flag={flag} />
                  </td>
                  <td>
                    <code>{flag.key}</code>
                  </td>
                  <td>
                    <Badge tone={FLAG_TONE[flag.status]}>{flag.status}</Badge>
                  </td>
                  <td>{flag.rollout_percentage}%</td>
                  <td>{dateTime(flag.updated_at)}</td>
                  {permissions.canChange && (
                    <td>
                      {flag.status === 'archived' ? (
                        <button type="button" className="link" onClick={() => unarchive.mutate(flag.id)}>
                          Unarchive
                        </button>
                      ) : (
                        <button type="button" className="link danger" onClick={() => window.confirm(`Archive “${flag.name}”?`) && archive.mutate(flag.id)}>
                          Archive
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
