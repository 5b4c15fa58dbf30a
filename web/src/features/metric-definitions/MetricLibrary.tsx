import { useState } from 'react';
import { Badge, DataTable, Empty, ErrorBox, Loading, PageHeader } from '../../components/ui';
import { Link } from '../../router';
import { useSession } from '../auth/session';
import { KIND_LABEL, KIND_TONE, cappingLabel, describeDefinition } from './draft';
import { useMetricDefinitions, type MetricDefinition, type MetricKind } from './hooks';

export function KindBadge({ kind }: { kind: MetricKind }) {
  return <Badge tone={KIND_TONE[kind]}>{KIND_LABEL[kind].toLowerCase()}</Badge>;
}

/** Whether a definition matches the search: its name, or one of its tags, contains the text (any case). */
export function matchesSearch(d: Pick<MetricDefinition, 'name' | 'tags'>, search: string): boolean {
  const needle = search.trim().toLowerCase();
  return !needle || d.name.toLowerCase().includes(needle) || d.tags.some((t) => t.toLowerCase().includes(needle));
}

export function MetricLibrary() {
  const { permissions } = useSession();
  const [search, setSearch] = useState('');
  const [kind, setKind] = useState<MetricKind | ''>('');
  const definitions = useMetricDefinitions();
  const shown = (definitions.data ?? []).filter((d) => matchesSearch(d, search) && (!kind || d.kind === kind));
  return (
    <section>
      <PageHeader title="Metric library" actions={permissions.canChangeMetrics && <Link className="button" to="/metrics/new">New metric</Link>} />
      <p className="meta">Metrics defined once, for any experiment to use: choose one in the experiment form instead of typing it in.</p>
      <div className="toolbar" role="search">
        <label>
          <span className="visually-hidden">Search metrics</span>
          <input type="search" placeholder="Search by name or tag" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <select aria-label="Filter by kind" value={kind} onChange={(e) => setKind(e.target.value as MetricKind | '')}>
          <option value="">All kinds</option>
          {(Object.keys(KIND_LABEL) as MetricKind[]).map((k) => (
            <option key={k} value={k}>
              {KIND_LABEL[k]}
            </option>
          ))}
        </select>
      </div>
      {definitions.isPending ? (
        <Loading rows={4} label="Loading metrics" />
      ) : definitions.isError ? (
        <ErrorBox error={definitions.error} />
      ) : shown.length === 0 && (search.trim() || kind) ? (
        <Empty title="No metric matches these filters." />
      ) : shown.length === 0 ? (
        <Empty title="No metrics defined yet.">
          {permissions.canChangeMetrics ? 'Define a proportion, mean, ratio or quantile metric once, then use it in any experiment.' : 'An analyst, developer or administrator can define them.'}
        </Empty>
      ) : (
        <DataTable headers={['Name', 'Kind', 'Measures', 'Tags', 'Version', 'Owner']}>
          {shown.map((d) => {
            const capping = cappingLabel(d.capping);
            return (
              <tr key={d.id}>
                <td>
                  <Link to={`/metrics/${d.id}`}>{d.name}</Link>
                </td>
                <td>
                  <KindBadge kind={d.kind} />
                </td>
                <td>
                  {describeDefinition(d)}
                  {capping && <span className="hint"> · {capping}</span>}
                </td>
                <td>
                  {d.tags.length ? (
                    <span className="tag-list">
                      {d.tags.map((t) => (
                        <Badge key={t} tone="muted">
                          {t}
                        </Badge>
                      ))}
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
                <td>v{d.version}</td>
                <td>{d.owner ?? '—'}</td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </section>
  );
}
